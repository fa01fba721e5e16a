#include "trace/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace tagflow::trace {

namespace {

using Instance = std::tuple<uint64_t, int32_t, uint64_t, int64_t>;  // step, partition, frame instance, iteration
using NodeInstance = std::tuple<uint64_t, int32_t, uint64_t, int64_t, int32_t>;

Instance where(const Event& e) { return {e.step, e.partition, e.instance, e.iteration}; }
NodeInstance node_at(const Event& e) { return {e.step, e.partition, e.instance, e.iteration, e.node}; }

bool is_merge(const std::string& op) { return op == "Merge" || op == "RefMerge"; }
bool is_switch(const std::string& op) { return op == "Switch" || op == "RefSwitch" || op == "_SwitchN"; }
// Ops whose value comes from another tag or another partition: a dead one
// came in dead, which the rule cannot see from this tag alone.
bool crosses(const std::string& op) {
  return op == "Enter" || op == "RefEnter" || op == "Exit" || op == "RefExit" || op == "NextIteration" ||
         op == "RefNextIteration" || op == "_Recv" || op == "_HostRecv";
}
// Events that belong to one iteration of one partition.
bool in_iteration(const Event& e) {
  switch (e.kind) {
    case Kind::node_ran:
    case Kind::value_dead:
    case Kind::merge_input_ignored:
      return true;
    default:
      return false;
  }
}

class Checker {
 public:
  explicit Checker(const Trace& t) : t_(t) {}

  std::vector<Violation> run() {
    collect();
    once_per_tag();
    dead_in_dead_out();
    iterations_close();
    transfers();
    control_loops();
    step_end();
    std::sort(out_.begin(), out_.end(), [](const Violation& a, const Violation& b) { return a.index < b.index; });
    return std::move(out_);
  }

 private:
  void add(size_t i, const char* rule, std::string what) { out_.push_back({i, rule, std::move(what)}); }
  std::string at(const Event& e) const {
    return fmt::format("at tag {} on partition {}", t_.tag_of(e), t_.partition_name(e.step, e.partition));
  }
  std::string node(const Event& e) const {
    return fmt::format("{} '{}'", t_.op(e.step, e.partition, e.node), t_.node_name(e));
  }

  void collect() {
    for (size_t i = 0; i < t_.size(); ++i) {
      const Event& e = t_[i];
      if (e.kind == Kind::node_ran) ran_[node_at(e)].push_back(i);
      if (e.kind == Kind::value_dead) dead_[node_at(e)].push_back(i);
    }
  }

  void once_per_tag() {
    for (const auto& [key, runs] : ran_) {
      if (runs.size() < 2) continue;
      const Event& e = t_[runs[1]];
      const bool merge = is_merge(t_.op(e.step, e.partition, e.node));
      add(runs[1], "once per tag",
          fmt::format("{} {} {} a second time (first: event {})", node(e), merge ? "fired" : "ran", at(e), runs[0]));
    }
  }

  void dead_in_dead_out() {
    for (const auto& [key, deads] : dead_) {
      const Event& e = t_[deads.front()];
      const std::string op = t_.op(e.step, e.partition, e.node);
      if (ran_.count(key) == 0)
        add(deads.front(), "dead in, dead out", fmt::format("{} is dead {} but did not run", node(e), at(e)));
      if (e.src_node < 0) continue;
      NodeInstance src{e.step, e.partition, e.instance, e.iteration, e.src_node};
      const std::string src_op = t_.op(e.step, e.partition, e.src_node);
      if (dead_.count(src) != 0 || crosses(src_op)) continue;
      auto ran = ran_.find(src);
      if (ran != ran_.end() && is_switch(src_op) && t_[ran->second.front()].port != e.src_port) continue;
      if (ran == ran_.end()) continue;  // the source is not in this trace's part of the step
      add(deads.front(), "dead in, dead out",
          fmt::format("{} is dead {}: its input {} from {} '{}':{} is dead, but that node's outputs were live there",
                      node(e), at(e), e.port, src_op, t_.node_name(e.step, e.partition, e.src_node), e.src_port));
    }
    // Inputs are recorded only where they were dead (value_dead), so the
    // rule is checked from the dead side.
  }

  void iterations_close() {
    struct Span {
      size_t started = SIZE_MAX, done = SIZE_MAX;
      int starts = 0, dones = 0;
      size_t first = SIZE_MAX, last = 0;
    };
    std::map<Instance, Span> iterations;
    std::map<std::tuple<uint64_t, int32_t, uint64_t>, Span> frames;
    for (size_t i = 0; i < t_.size(); ++i) {
      const Event& e = t_[i];
      auto frame_key = std::make_tuple(e.step, e.partition, e.instance);
      if (e.kind == Kind::iteration_started) {
        Span& s = iterations[where(e)];
        if (++s.starts == 1) s.started = i;
        else add(i, "iterations close", fmt::format("iteration {} started a second time", at(e)));
      } else if (e.kind == Kind::iteration_done) {
        Span& s = iterations[where(e)];
        if (++s.dones == 1) s.done = i;
        else add(i, "iterations close", fmt::format("iteration {} ended a second time", at(e)));
      } else if (in_iteration(e) && e.instance != 0) {
        Span& s = iterations[where(e)];
        s.first = std::min(s.first, i);
        s.last = std::max(s.last, i);
      }
      if (e.instance == 0) continue;
      if (e.kind == Kind::frame_created) {
        Span& s = frames[frame_key];
        if (++s.starts == 1) s.started = i;
        else add(i, "iterations close", fmt::format("frame instance {} created a second time", at(e)));
      } else if (e.kind == Kind::frame_done) {
        Span& s = frames[frame_key];
        if (++s.dones == 1) s.done = i;
        else add(i, "iterations close", fmt::format("frame instance {} ended a second time", at(e)));
      } else if (e.kind != Kind::message_taken) {
        Span& s = frames[frame_key];
        s.first = std::min(s.first, i);
        s.last = std::max(s.last, i);
      }
    }
    for (const auto& [key, s] : iterations) {
      if (s.first == SIZE_MAX) continue;
      const Event& e = t_[s.first];
      if (s.started == SIZE_MAX || s.started > s.first)
        add(s.first, "iterations close", fmt::format("an event of iteration {} before it started", at(e)));
      if (s.done != SIZE_MAX && s.done < s.last)
        add(s.last, "iterations close",
            fmt::format("an event of iteration {} after it ended (event {})", at(t_[s.last]), s.done));
    }
    for (const auto& [key, s] : frames) {
      if (s.first == SIZE_MAX) continue;
      if (s.started == SIZE_MAX || s.started > s.first)
        add(s.first, "iterations close",
            fmt::format("an event of frame instance {} before it was created", at(t_[s.first])));
      if (s.done != SIZE_MAX && s.done < s.last)
        add(s.last, "iterations close",
            fmt::format("an event of frame instance {} after it ended (event {})", at(t_[s.last]), s.done));
    }
  }

  void transfers() {
    // (step, frame instance, iteration, key, receiving partition, dead)
    using Transfer = std::tuple<uint64_t, uint64_t, int64_t, uint64_t, int32_t, bool>;
    std::map<Transfer, std::vector<size_t>> sent, received;
    std::set<std::pair<uint64_t, int32_t>> traced;  // (step, partition) with events
    std::set<uint64_t> failed;  // a failed step's transfers in flight are dropped
    for (const Event& e : t_.events())
      if (e.kind == Kind::step_done && !e.text.empty()) failed.insert(e.step);
    for (size_t i = 0; i < t_.size(); ++i) {
      const Event& e = t_[i];
      if (failed.count(e.step) != 0) continue;
      if (e.kind == Kind::step_started) traced.insert({e.step, e.partition});
      if (e.message != MessageKind::transfer) continue;
      if (e.kind == Kind::message_sent) sent[{e.step, e.instance, e.iteration, e.key, e.to.partition, e.dead}].push_back(i);
      if (e.kind == Kind::message_received)
        received[{e.step, e.instance, e.iteration, e.key, e.partition, e.dead}].push_back(i);
    }
    for (const auto& [k, at_sent] : sent) {
      auto r = received.find(k);
      const size_t n = r == received.end() ? 0 : r->second.size();
      const int32_t to = std::get<4>(k);
      if (n == at_sent.size()) continue;
      if (n == 0 && traced.count({std::get<0>(k), to}) == 0) continue;  // the receiver is not traced
      const Event& e = t_[at_sent.front()];
      add(at_sent.front(), "transfers",
          fmt::format("transfer '{}' at tag {} ({}) sent {} time(s) to partition {}, received there {} time(s)",
                      transfer_name(e), t_.tag_of(e), e.dead ? "dead" : "live", at_sent.size(),
                      t_.partition_name(e.step, to), n));
    }
    for (const auto& [k, at_received] : received) {
      if (sent.count(k) != 0) continue;
      const Event& e = t_[at_received.front()];
      if (traced.count({e.step, e.from.partition}) == 0) continue;  // the sender is not traced
      add(at_received.front(), "transfers",
          fmt::format("transfer '{}' received {} ({}) but never sent", transfer_name(e), at(e),
                      e.dead ? "dead" : "live"));
    }
  }

  std::string transfer_name(const Event& e) const {
    for (int32_t p : {e.partition, e.from.partition, e.to.partition}) {
      const PartitionNames* n = t_.names(e.step, p);
      if (n != nullptr && !n->transfer(e.key).empty()) return n->transfer(e.key);
    }
    return fmt::format("{:#x}", e.key);
  }

  void control_loops() {
    // iterations started, by (step, frame instance) and partition
    std::map<std::pair<uint64_t, uint64_t>, std::map<int32_t, std::pair<int64_t, size_t>>> count;
    for (size_t i = 0; i < t_.size(); ++i) {
      const Event& e = t_[i];
      if (e.kind != Kind::iteration_started || e.instance == 0) continue;
      auto& c = count[{e.step, e.instance}][e.partition];
      ++c.first;
      c.second = i;
    }
    for (const auto& [key, by_partition] : count) {
      if (by_partition.size() < 2) continue;
      const auto& [p0, c0] = *by_partition.begin();
      for (const auto& [p, c] : by_partition) {
        if (c.first == c0.first) continue;
        const Event& e = t_[c.second];
        add(c.second, "control loops",
            fmt::format("frame instance {} ran {} iteration(s) on partition {} but {} on partition {}",
                        t_.tag(e.instance, 0), c.first, t_.partition_name(e.step, p), c0.first,
                        t_.partition_name(e.step, p0)));
        break;
      }
    }
  }

  // A failed step's actors are stopped asynchronously: the rule holds for
  // the steps that ended without an error on the partition.
  void step_end() {
    std::map<std::pair<uint64_t, int32_t>, size_t> done;
    for (size_t i = 0; i < t_.size(); ++i) {
      const Event& e = t_[i];
      if (e.kind == Kind::step_done && !e.text.empty()) continue;
      const std::pair<uint64_t, int32_t> key{e.step, e.partition};
      if (e.partition < 0 || e.kind == Kind::partition_up || e.kind == Kind::partition_down || e.kind == Kind::message_taken)
        continue;  // a partition takes messages of a step after it (routes, results)
      auto d = done.find(key);
      if (e.kind == Kind::step_done) {
        if (d == done.end()) done[key] = i;
        continue;
      }
      if (e.kind == Kind::step_started) {
        done.erase(key);
        continue;
      }
      if (d != done.end())
        add(i, "step end",
            fmt::format("{} {} after the step ended there (event {})", to_string(e.kind), at(e), d->second));
    }
  }

  const Trace& t_;
  std::vector<Violation> out_;
  std::map<NodeInstance, std::vector<size_t>> ran_, dead_;
};

}  // namespace

std::vector<Violation> check(const Trace& t) { return Checker(t).run(); }

std::string to_string(const Violation& v) {
  return fmt::format("event {}: {}: {}", v.index, v.rule, v.what);
}

}  // namespace tagflow::trace
