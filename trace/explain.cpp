#include "trace/explain.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

namespace tagflow::trace {

namespace {

bool is_switch(const std::string& op) { return op == "Switch" || op == "RefSwitch" || op == "_SwitchN"; }
bool is_enter(const std::string& op) { return op == "Enter" || op == "RefEnter"; }
bool is_next(const std::string& op) { return op == "NextIteration" || op == "RefNextIteration"; }
bool is_exit(const std::string& op) { return op == "Exit" || op == "RefExit"; }
bool is_recv(const std::string& op) { return op == "_Recv" || op == "_HostRecv"; }

using Key = std::tuple<uint64_t, int32_t, uint64_t, int64_t, int32_t>;  // step, partition, instance, iteration, node

class Explainer {
 public:
  explicit Explainer(const Trace& t) : t_(t) {
    for (size_t i = 0; i < t.size(); ++i) {
      const Event& e = t[i];
      if (e.kind == Kind::value_dead) dead_.emplace(Key{e.step, e.partition, e.instance, e.iteration, e.node}, i);
      if (e.kind == Kind::node_ran) ran_.emplace(Key{e.step, e.partition, e.instance, e.iteration, e.node}, i);
    }
  }

  Explanation run(const ExplainQuery& q) {
    Explanation out;
    std::optional<size_t> start;
    for (size_t i = 0; i < t_.size(); ++i) {
      const Event& e = t_[i];
      if (e.kind != Kind::value_dead || t_.node_name(e) != q.node) continue;
      if (q.step && e.step != *q.step) continue;
      if (q.iteration && e.iteration != *q.iteration) continue;
      if (!start || (!q.step && t_[*start].step != e.step)) start = i;  // the first one of the last step
    }
    if (!start) {
      out.summary = fmt::format("no dead instance of '{}' in the trace{}", q.node,
                                q.iteration ? fmt::format(" at iteration {}", *q.iteration) : std::string());
      return out;
    }
    out.found = true;
    std::set<size_t> seen;
    size_t at = *start;
    while (seen.insert(at).second) {
      const Event& e = t_[at];
      const std::string op = t_.op(e.step, e.partition, e.node);
      const std::string where = fmt::format("at tag {} on {}", t_.tag_of(e), t_.partition_name(e.step, e.partition));
      if (e.src_node < 0) {
        if (!is_recv(op)) {
          out.chain.push_back({at, fmt::format("{} '{}' {}: a control input is dead", op, t_.node_name(e), where)});
          out.summary = fmt::format("'{}' is dead at tag {}: the chain ends at '{}' {}, whose control input was dead",
                                    q.node, t_.tag_of(t_[*start]), t_.node_name(e), where);
          return out;
        }
        auto sent = sender(e);
        out.chain.push_back({at, fmt::format("{} '{}' {}: its transfer came dead", op, t_.node_name(e), where)});
        if (!sent) {
          out.summary = fmt::format("'{}' is dead at tag {}: its chain leaves the partitions this trace holds at '{}'",
                                    q.node, t_.tag_of(t_[*start]), t_.node_name(e));
          return out;
        }
        at = *sent;
        continue;
      }
      const std::string src = t_.node_name(e.step, e.partition, e.src_node);
      const std::string src_op = t_.op(e.step, e.partition, e.src_node);
      out.chain.push_back({at, fmt::format("{} '{}' {}: input {} from {} '{}':{} is dead", op, t_.node_name(e), where,
                                           e.port, src_op, src, e.src_port)});
      const Key k{e.step, e.partition, e.instance, e.iteration, e.src_node};
      if (is_switch(src_op)) {
        auto ran = ran_.find(k);
        if (ran != ran_.end() && t_[ran->second].port != e.src_port && t_[ran->second].port >= 0) {
          const Event& s = t_[ran->second];
          const std::string pred = src_op == "_SwitchN" ? fmt::format("branch index {}", s.port)
                                                        : fmt::format("predicate {}", s.port == 1 ? "true" : "false");
          out.chain.push_back({ran->second, fmt::format("{} '{}' {}: {}: output {} was not taken", src_op, src, where,
                                                        pred, e.src_port)});
          out.summary = fmt::format("'{}' is dead at tag {} because {} '{}' at tag {} on {} had {}: its output {} "
                                    "was not taken",
                                    q.node, t_.tag_of(t_[*start]), src_op, src, t_.tag_of(s),
                                    t_.partition_name(s.step, s.partition), pred, e.src_port);
          return out;
        }
      }
      auto d = dead_source(e, src_op);
      if (!d) {
        out.summary = fmt::format("'{}' is dead at tag {}; the chain stops at {} '{}', which the trace does not "
                                  "record dead where its value came from",
                                  q.node, t_.tag_of(t_[*start]), src_op, src);
        return out;
      }
      at = *d;
    }
    out.summary = "the chain loops";
    return out;
  }

 private:
  // The dead instance of e's source node: in e's tag, or where an Enter
  // (the enclosing frame), a NextIteration (the iteration before) or an
  // Exit (a frame instance entered from e's tag) ran.
  std::optional<size_t> dead_source(const Event& e, const std::string& src_op) const {
    auto same = dead_.find(Key{e.step, e.partition, e.instance, e.iteration, e.src_node});
    if (same != dead_.end()) return same->second;
    if (is_next(src_op) && e.iteration > 0) {
      auto d = dead_.find(Key{e.step, e.partition, e.instance, e.iteration - 1, e.src_node});
      if (d != dead_.end()) return d->second;
    }
    uint64_t parent = 0;
    int64_t parent_iteration = 0;
    if (is_enter(src_op) && t_.parent(e.instance, &parent, &parent_iteration)) {
      auto d = dead_.find(Key{e.step, e.partition, parent, parent_iteration, e.src_node});
      if (d != dead_.end()) return d->second;
    }
    if (is_exit(src_op)) {
      std::optional<size_t> last;
      for (const auto& [k, i] : dead_) {
        if (std::get<0>(k) != e.step || std::get<1>(k) != e.partition || std::get<4>(k) != e.src_node) continue;
        if (t_.parent(std::get<2>(k), &parent, &parent_iteration) && parent == e.instance &&
            parent_iteration == e.iteration && (!last || i > *last))
          last = i;
      }
      return last;
    }
    return std::nullopt;
  }

  // The value_dead of the _Send whose dead transfer a _Recv's instance got.
  std::optional<size_t> sender(const Event& recv) const {
    for (size_t i = 0; i < t_.size(); ++i) {
      const Event& s = t_[i];
      if (s.kind != Kind::message_sent || s.message != MessageKind::transfer || !s.dead || s.step != recv.step ||
          s.instance != recv.instance || s.iteration != recv.iteration || s.to.partition != recv.partition)
        continue;
      if (recv.key != 0 && s.key != recv.key) continue;  // the Recv's value_dead names its transfer key
      auto d = dead_.find(Key{s.step, s.partition, s.instance, s.iteration, s.node});
      if (d != dead_.end()) return d->second;
    }
    return std::nullopt;
  }

  const Trace& t_;
  std::map<Key, size_t> dead_, ran_;
};

}  // namespace

Explanation explain(const Trace& t, const ExplainQuery& q) { return Explainer(t).run(q); }

std::string format_explanation(const Explanation& e) {
  std::string out = e.summary + "\n";
  for (const DeadLink& l : e.chain) out += fmt::format("  event {}: {}\n", l.index, l.text);
  return out;
}

}  // namespace tagflow::trace
