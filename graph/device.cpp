#include "graph/device.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace tagflow::graph {

namespace {

Status bad(std::string_view text, const std::string& what) {
  return Status(Error::invalid_argument, fmt::format("device name '{}': {}", ops::abbreviate(text), what));
}

bool is_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

// A non-negative number, or "*" (any: left unset).
bool parse_number(std::string_view s, std::optional<int>& out) {
  if (s == "*") return true;
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v < 0) return false;
  out = v;
  return true;
}

template <class T>
Status set_once(std::string_view text, std::optional<T>& field, std::optional<T> value,
                const char* part) {
  if (field) return bad(text, fmt::format("the {} is given twice", part));
  field = std::move(value);
  return ok_status();
}

// "TYPE:ID", "TYPE:*" or "TYPE".
Status parse_device_part(std::string_view text, std::string_view part, DeviceName& d,
                         bool& seen) {
  if (seen) return bad(text, "the device is given twice");
  seen = true;
  size_t colon = part.find(':');
  std::string_view type = part.substr(0, colon);
  if (type != "*" && !is_name(type))
    return bad(text, fmt::format("'{}' is not a device type", type));
  if (type != "*") d.type = std::string(type);
  if (colon != std::string_view::npos) {
    std::string_view id = part.substr(colon + 1);
    if (!parse_number(id, d.id)) return bad(text, fmt::format("'{}' is not a device id", id));
  }
  return ok_status();
}

}  // namespace

Expected<DeviceName> parse_device_name(std::string_view text) {
  DeviceName d;
  if (text.empty()) return d;
  if (text.front() != '/') return bad(text, "a device name starts with '/'");
  bool device_seen = false;
  std::string_view rest = text.substr(1);
  while (true) {
    size_t slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    if (part.empty()) return bad(text, "empty part between '/'");
    size_t colon = part.find(':');
    if (colon == std::string_view::npos)
      return bad(text, fmt::format("part '{}' has no ':'", part));
    std::string_view key = part.substr(0, colon);
    std::string_view value = part.substr(colon + 1);
    if (key == "job") {
      if (!is_name(value) && value != "*") return bad(text, fmt::format("'{}' is not a job name", value));
      TF_RETURN_IF_ERROR(set_once(text, d.job,
                                  value == "*" ? std::nullopt : std::optional<std::string>(value),
                                  "job"));
    } else if (key == "replica" || key == "task") {
      std::optional<int> n;
      if (!parse_number(value, n))
        return bad(text, fmt::format("'{}' is not a {} number", value, key));
      TF_RETURN_IF_ERROR(set_once(text, key == "task" ? d.task : d.replica, n,
                                  key == "task" ? "task" : "replica"));
    } else if (key == "device") {
      TF_RETURN_IF_ERROR(parse_device_part(text, value, d, device_seen));
    } else if (key == "cpu" || key == "gpu") {  // legacy: /cpu:0 means /device:CPU:0
      TF_RETURN_IF_ERROR(parse_device_part(text, key == "cpu" ? "CPU" : "GPU", d, device_seen));
      if (!parse_number(value, d.id)) return bad(text, fmt::format("'{}' is not a device id", value));
    } else {
      return bad(text, fmt::format("unknown part '{}' (expected job, replica, task or device)", part));
    }
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  return d;
}

std::string full_name(const DeviceName& d) {
  std::string out;
  if (d.job) out += "/job:" + *d.job;
  if (d.replica) out += fmt::format("/replica:{}", *d.replica);
  if (d.task) out += fmt::format("/task:{}", *d.task);
  if (d.type || d.id)
    out += fmt::format("/device:{}:{}", d.type.value_or("*"), d.id ? std::to_string(*d.id) : "*");
  return out;
}

std::string short_name(const DeviceName& d) {
  std::string out;
  if (d.job && *d.job != "localhost") out += *d.job + "_";
  if (d.replica && *d.replica != 0) out += fmt::format("r{}_", *d.replica);
  if (d.task && *d.task != 0) out += fmt::format("t{}_", *d.task);
  out += d.type.value_or("any");
  out += d.id ? "_" + std::to_string(*d.id) : "";
  return out;
}

namespace {
template <class T>
bool part_matches(const std::optional<T>& spec, const std::optional<T>& device) {
  return !spec || (device && *spec == *device);
}
template <class T>
bool part_compatible(const std::optional<T>& a, const std::optional<T>& b) {
  return !a || !b || *a == *b;
}
}  // namespace

bool matches(const DeviceName& spec, const DeviceName& device) {
  return part_matches(spec.job, device.job) && part_matches(spec.replica, device.replica) &&
         part_matches(spec.task, device.task) && part_matches(spec.type, device.type) &&
         part_matches(spec.id, device.id);
}

bool compatible(const DeviceName& a, const DeviceName& b) {
  return part_compatible(a.job, b.job) && part_compatible(a.replica, b.replica) &&
         part_compatible(a.task, b.task) && part_compatible(a.type, b.type) &&
         part_compatible(a.id, b.id);
}

Expected<DeviceName> merge(const DeviceName& a, const DeviceName& b) {
  if (!compatible(a, b))
    return Status(Error::invalid_argument, fmt::format("device names '{}' and '{}' are incompatible",
                                                       full_name(a), full_name(b)));
  DeviceName out = a;
  if (!out.job) out.job = b.job;
  if (!out.replica) out.replica = b.replica;
  if (!out.task) out.task = b.task;
  if (!out.type) out.type = b.type;
  if (!out.id) out.id = b.id;
  return out;
}

std::vector<std::string> local_devices(int n, const std::string& job, int replica, int task) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i)
    out.push_back(fmt::format("/job:{}/replica:{}/task:{}/device:CPU:{}", job, replica, task, i));
  return out;
}

}  // namespace tagflow::graph
