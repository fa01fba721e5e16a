#include "net/cluster.hpp"

#include <fmt/format.h>

#include <charconv>
#include <set>

namespace tagflow::net {

namespace {

using ops::Error;

bool is_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

Status address_error(std::string_view text, const std::string& what) {
  return Status(Error::invalid_argument, fmt::format("task address '{}' {}", ops::abbreviate(text), what));
}

}  // namespace

bool is_job_name(std::string_view name) {
  if (name.empty() || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z'))) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

std::string TaskAddress::to_string() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

Expected<TaskAddress> parse_task_address(std::string_view text) {
  TaskAddress a;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return address_error(text, "opens an IPv6 address with '[' but never closes it");
    a.host = std::string(text.substr(1, close - 1));
    if (a.host.empty() || a.host.find(':') == std::string::npos ||
        a.host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos)
      return address_error(text, "has no valid IPv6 address between its brackets");
    if (close + 1 >= text.size() || text[close + 1] != ':') return address_error(text, "has no ':PORT' after its host");
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return address_error(text, "has no ':PORT' after its host");
    a.host = std::string(text.substr(0, colon));
    if (a.host.find(':') != std::string::npos)
      return address_error(text, "looks like an IPv6 address: write it in brackets, as [::1]:7001");
    if (a.host.empty()) return address_error(text, "has no host before its ':PORT'");
    for (char c : a.host)
      if (!is_host_char(c))
        return address_error(text, fmt::format("has '{}' in its host, which takes letters, digits, '-' and '.'", c));
    port = text.substr(colon + 1);
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535)
    return address_error(text, fmt::format("has port '{}', not a number from 1 to 65535", ops::abbreviate(port)));
  a.port = static_cast<uint16_t>(value);
  return a;
}

Expected<ClusterSpec> ClusterSpec::parse(std::string_view text) {
  ClusterSpec spec;
  std::set<std::string> addresses;
  auto fail = [&](size_t at, const std::string& what) {
    return Status(Error::invalid_argument,
                  fmt::format("cluster '{}': {} (at character {})", ops::abbreviate(text), what, at + 1));
  };
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view job_text = text.substr(start, end - start);
    if (job_text.empty()) {
      if (end == text.size() && start > 0) break;  // a trailing ';'
      return fail(start, "a job is empty; write JOB=HOST:PORT[,HOST:PORT...]");
    }
    const size_t eq = job_text.find('=');
    if (eq == std::string_view::npos) return fail(start, fmt::format("job '{}' has no '=' before its tasks", ops::abbreviate(job_text)));
    const std::string job(job_text.substr(0, eq));
    if (!is_job_name(job))
      return fail(start, fmt::format("'{}' is not a job name (a letter, then letters, digits and '_')",
                                     ops::abbreviate(job)));
    if (spec.jobs_.count(job) != 0) return fail(start, fmt::format("job '{}' is given twice", job));
    std::vector<TaskAddress>& tasks = spec.jobs_[job];
    size_t task_start = start + eq + 1;
    while (true) {
      size_t task_end = text.find(',', task_start);
      if (task_end == std::string_view::npos || task_end > end) task_end = end;
      std::string_view address = text.substr(task_start, task_end - task_start);
      const int task = static_cast<int>(tasks.size());
      if (address.empty()) return fail(task_start, fmt::format("job '{}' task {} has no address", job, task));
      auto a = parse_task_address(address);
      if (!a.ok()) return fail(task_start, fmt::format("job '{}' task {}: {}", job, task, a.status().message()));
      if (!addresses.insert(a->to_string()).second)
        return fail(task_start, fmt::format("job '{}' task {}: address {} is given to another task too", job, task,
                                            a->to_string()));
      tasks.push_back(*a);
      if (task_end == end) break;
      task_start = task_end + 1;
    }
    start = end + 1;
  }
  return spec;
}

std::vector<std::string> ClusterSpec::jobs() const {
  std::vector<std::string> out;
  for (const auto& job : jobs_) out.push_back(job.first);
  return out;
}

int ClusterSpec::num_tasks(const std::string& job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : static_cast<int>(it->second.size());
}

const TaskAddress* ClusterSpec::find(const std::string& job, int task) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end() || task < 0 || task >= static_cast<int>(it->second.size())) return nullptr;
  return &it->second[static_cast<size_t>(task)];
}

Expected<TaskAddress> ClusterSpec::task_of(const graph::DeviceName& device) const {
  const std::string name = graph::full_name(device);
  if (!device.job || !device.task)
    return Status(Error::invalid_argument,
                  fmt::format("device '{}' names no job and task, so no task of the cluster holds it", name));
  auto it = jobs_.find(*device.job);
  if (it == jobs_.end()) {
    std::string known;
    for (const std::string& job : jobs()) known += (known.empty() ? "" : ", ") + job;
    return Status(Error::invalid_argument,
                  fmt::format("device '{}': the cluster has no job '{}' (its jobs: {})", name, *device.job,
                              known.empty() ? "none" : known));
  }
  const TaskAddress* a = find(*device.job, *device.task);
  if (a == nullptr)
    return Status(Error::invalid_argument,
                  fmt::format("device '{}': job '{}' has tasks 0 to {}, not task {}", name, *device.job,
                              it->second.size() - 1, *device.task));
  return *a;
}

std::string ClusterSpec::to_string() const {
  std::string out;
  for (const auto& [job, tasks] : jobs_) {
    if (!out.empty()) out += ';';
    out += job + '=';
    for (size_t i = 0; i < tasks.size(); ++i) out += (i > 0 ? "," : "") + tasks[i].to_string();
  }
  return out;
}

}  // namespace tagflow::net
