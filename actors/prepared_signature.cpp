#include "actors/prepared_signature.hpp"

#include <fmt/format.h>

#include "actors/coordinator.hpp"
#include "actors/function_runtime.hpp"
#include "actors/partition_actor.hpp"
#include "actors/partition_hosts.hpp"
#include "actors/session.hpp"
#include "actors/step_guard.hpp"
#include "graph/device.hpp"
#include "ops/memory_budget.hpp"
#include "ops/tensor_wire.hpp"
#include "trace/event.hpp"

namespace tagflow::actors {

// The values of `feeds` partition `i` of `p` reads, at their positions;
// invalid tensors for the feeds it does not read.
std::vector<ops::Tensor> feeds_of(const PreparedSignature& p, size_t i, const Feeds& feeds) {
  std::vector<ops::Tensor> values(feeds.size());
  for (size_t f = 0; f < feeds.size(); ++f)
    if (p.reads_feed[i][f]) values[f] = feeds[f].second;
  return values;
}

// The feeds `exec` reads, by position among the step's `n` feeds.
std::vector<bool> feeds_read(const Executable& exec, size_t n) {
  std::vector<bool> reads(n, false);
  for (const NodeItem& item : exec.items())
    if (item.kind == NodeKind::arg && item.index >= 0 && static_cast<size_t>(item.index) < n)
      reads[static_cast<size_t>(item.index)] = true;
  return reads;
}

// "CPU:0" for a device of the local task, else its full name.
std::string partition_label(const std::string& device) {
  auto d = graph::parse_device_name(device);
  if (!d.ok() || !d->type || !d->id) return device;
  if (d->job.value_or("localhost") == "localhost" && d->replica.value_or(0) == 0 &&
      d->task.value_or(0) == 0)
    return fmt::format("{}:{}", *d->type, *d->id);
  return device;
}

std::string signature_key(const Feeds& feeds, const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets) {
  std::string s;
  for (auto& f : feeds) s += f.first + '\x1f';
  s += '\x1e';
  for (auto& f : fetches) s += f + '\x1f';
  s += '\x1e';
  for (auto& t : targets) s += t + '\x1f';
  return s;
}

// Frames within frames beyond the limit, on any partition of a step.
Status check_frame_depth(const Executable& exec, int64_t max_depth) {
  for (const graph::FrameInfo& f : exec.control_flow().frames)
    TF_RETURN_IF_ERROR(StepGuard::check_frame_depth(
        f.depth, max_depth, fmt::format("frame '{}' on partition {}", f.name, exec.partition())));
  return ops::ok_status();
}

ops::Expected<std::shared_ptr<PreparedSignature>> prepare_signature(graph::StepPlan& plan, size_t num_feeds,
                                                                    const PartitionHosts* hosts,
                                                                    const FunctionRuntime* runtime,
                                                                    int64_t max_frame_depth) {
  auto p = std::make_shared<PreparedSignature>();
  for (const graph::optimize::Change& c : plan.changes)
    p->rewrites.push_back(fmt::format("{}: {} '{}'{}{}", c.pass, c.action, c.node, c.detail.empty() ? "" : " ",
                                      c.detail));
  std::vector<graph::Graph> graphs;
  for (graph::Partition& part : plan.partitions) {
    p->partition_devices.push_back(part.device);
    graphs.push_back(std::move(part.graph));
  }
  for (const std::string& d : p->partition_devices) {
    std::string label = partition_label(d);
    std::string place = label;
    if (hosts != nullptr && hosts->is_remote(d)) {
      label = d;
      place = d + " on " + hosts->describe(d);
      p->remote = true;
    }
    p->partition_names.push_back(std::move(label));
    p->partition_places.push_back(std::move(place));
  }
  TF_ASSIGN_OR_RETURN(p->execs, Executable::build_partitions(std::move(graphs), p->partition_names, runtime));
  for (const auto& exec : p->execs) TF_RETURN_IF_ERROR(check_frame_depth(*exec, max_frame_depth));
  p->feeds = std::move(plan.feeds);
  for (const auto& exec : p->execs) p->reads_feed.push_back(feeds_read(*exec, num_feeds));
  return p;
}

// The step a caller asked for, as step_request events (trace/event.hpp).
void record_request(trace::Sink& events, uint64_t step, const Feeds& feeds, const std::vector<std::string>& fetches,
                    const std::vector<std::string>& targets) {
  for (const auto& [name, value] : feeds) {
    std::string text = "feed " + name + " ";
    for (unsigned char c : ops::encode_tensor_wire(value)) text += fmt::format("{:02x}", c);
    events.record(trace::step_request(step, std::move(text)));
  }
  for (const std::string& f : fetches) events.record(trace::step_request(step, "fetch " + f));
  for (const std::string& t : targets) events.record(trace::step_request(step, "target " + t));
}

StepWaiter::Result run_on_callers_thread(const PreparedSignature& p, const Feeds& feeds, uint64_t step_id,
                                       const StepLimits& limits) {
  const Executable& exec = *p.execs[0];
  const std::vector<ops::Tensor> feed_values = feeds_of(p, 0, feeds);
  auto memory = std::make_shared<ops::MemoryBudget>(limits.memory_limit);
  StepContext ctx;
  ctx.step_id = step_id;
  ctx.feeds = &feed_values;
  ctx.resources = p.direct_resources.get();
  ctx.partition = 0;
  ctx.memory = memory.get();
  ctx.strict_merge = limits.strict_merge;
  StepGuard guard;  // no deadline: a timed step does not run here
  guard.step_id = step_id;
  guard.max_iterations = limits.max_iterations;
  ctx.guard = &guard;
  std::unique_ptr<IterationState> state;
  {
    std::lock_guard<std::mutex> lock(p.direct_mu);
    if (!p.direct_states.empty()) {
      state = std::move(p.direct_states.back());
      p.direct_states.pop_back();
    }
  }
  if (!state) state = std::make_unique<IterationState>();
  state->reset(exec, graph::kRootFrame, Tag(), ctx);
  // Nothing but fetches leaves such a root iteration.
  struct Fetches : OutboxSink {
    std::vector<OutValue> values;
    Status drain(Outbox& out) {
      for (OutValue& v : out.fetches) values.push_back(std::move(v));
      out.clear();
      return ops::ok_status();
    }
  } fetches;
  Outbox out;
  Status s = state->run_until_idle(ctx, out, fetches);
  p.direct_resources->end_step(step_id);
  {
    std::lock_guard<std::mutex> lock(p.direct_mu);
    p.direct_states.push_back(std::move(state));
  }
  if (!s.ok()) return s;
  return collect_fetches(exec, p.fetch_names, step_id, fetches.values);
}

StepLimits step_limits(const SessionOptions& options) {
  StepLimits l;
  l.memory_limit = *options.memory_limit;
  l.max_iterations = *options.max_iterations;
  l.strict_merge = options.strict_merge;
  l.no_shortcuts = options.no_shortcuts;
  l.timeout = options.timeout;
  return l;
}

ExecutionPolicy execution_policy_of(const SessionOptions& options) {
  ExecutionPolicy policy;
  policy.shortcuts = !options.no_shortcuts;
  policy.events = options.events != nullptr;
  policy.deterministic = options.deterministic;
  policy.timeout = options.timeout.count() > 0;
  return policy;
}

StepLaunch launch_of(const PreparedSignature& p, const Feeds& feeds, const StepLimits& limits,
                     std::shared_ptr<StepWaiter> waiter) {
  const size_t n = p.partitions.size();
  StepLaunch launch;
  launch.waiter = std::move(waiter);
  launch.partitions = p.partitions;
  launch.names = p.partition_places;
  if (limits.timeout.count() > 0) launch.deadline = std::chrono::steady_clock::now() + limits.timeout;
  launch.starts.resize(n);
  for (size_t i = 0; i < n; ++i) {
    StepStart& s = launch.starts[i];
    s.max_iterations = limits.max_iterations;
    s.memory_limit = limits.memory_limit;
    s.strict_merge = limits.strict_merge;
    s.no_shortcuts = limits.no_shortcuts;
    s.feeds = feeds_of(p, i, feeds);
  }
  return launch;
}

RemotePartition remote_partition_of(const PreparedSignature& p, size_t i, const std::vector<std::string>& fetches,
                                    caf::actor client) {
  RemotePartition r;
  r.device = p.partition_devices[i];
  r.name = p.partition_names[i];
  r.graph = &p.execs[i]->graph();
  r.devices = p.partition_devices;
  r.index = static_cast<int>(i);
  r.fetch_names = fetches;
  r.client = std::move(client);
  return r;
}

}  // namespace tagflow::actors
