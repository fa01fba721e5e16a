// Random programs of nested counting loops for the partitioned-run tests:
// loops nested 2 to 4 deep whose initial values, limits and addends are
// drawn from every enclosing level (constants of the root, either variable
// of any enclosing loop), some with a cond in their body. The same program
// is (a) evaluated by plain recursion, (b) written as a GraphDef the way
// TensorFlow 1.x's executor sees one — with or without the control edges
// TensorFlow's Python API adds from a loop's pivot to ops whose inputs are
// all loop invariants — and (c) built with GraphBuilder.
//
// In a loop's last iteration (its predicate false) a nested loop whose
// variables come from an enclosing loop's invariant is entered live while
// its other variables are dead: that mix of live and dead values in one
// frame instance is what these programs are for.
#pragma once

#include <functional>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "graph/builder/builder.hpp"
#include "test_graphs.hpp"

namespace tagflow::testing {

struct LoopSource {
  int level = 0;  // 0: a constant of the root; k >= 1: the enclosing loop at depth k
  int var = 0;    // level >= 1: 0 its counter i, 1 its accumulator acc
  int value = 0;  // level 0: the constant
};

// `i = init_i; acc = init_acc; while i < limit: acc = acc + addend +
// (children's final acc) [+1 if i < threshold else -1]; i += step`
struct NestedLoop {
  int id = 0;
  int parent = -1;  // index into NestedLoopProgram::loops; -1 at the top
  int depth = 1;
  LoopSource init_i, init_acc, limit, addend;
  int step = 1;
  int parallel_iterations = 10;
  int threshold = -1;  // < 0: no cond in the body
  std::vector<int> children;
};

struct NestedLoopProgram {
  std::vector<NestedLoop> loops;  // parents before children
  std::vector<int> top;           // the top-level loops

  std::string describe() const;
  // Every top-level loop's final (i, acc), in `top` order.
  std::vector<std::pair<int, int>> evaluate() const;
  // The fetch names of (i, acc) per top-level loop in graph_text() or, if
  // `built`, in build().
  std::vector<std::string> fetches(bool built = false) const;
  std::string graph_text(bool pivot_edges) const;
  graph::Graph build() const;  // GraphBuilder; fetch names as fetches()
  int64_t total_iterations() const;
};

NestedLoopProgram random_nested_loop_program(uint64_t seed);

// --- implementation ----------------------------------------------------------

namespace nested_loops_detail {

inline std::string name(const NestedLoop& l) { return "L" + std::to_string(l.id); }

struct Evaluator {
  const NestedLoopProgram& p;
  std::vector<std::pair<int, int>> env;  // (i, acc) of the enclosing loops by depth - 1
  int64_t iterations = 0;

  int value(const LoopSource& s) const {
    if (s.level == 0) return s.value;
    const auto& [i, acc] = env[static_cast<size_t>(s.level - 1)];
    return s.var == 0 ? i : acc;
  }

  std::pair<int, int> run(const NestedLoop& l) {
    int i = value(l.init_i), acc = value(l.init_acc);
    const int limit = value(l.limit);
    while (i < limit) {
      ++iterations;
      env.emplace_back(i, acc);
      int next = acc + value(l.addend);
      for (int c : l.children) next += run(p.loops[static_cast<size_t>(c)]).second;
      if (l.threshold >= 0) next += i < l.threshold ? 1 : -1;
      env.pop_back();
      acc = next;
      i += l.step;
    }
    return {i, acc};
  }
};

// Writes the GraphDef text, TensorFlow 1.x style.
class TextWriter {
 public:
  TextWriter(const NestedLoopProgram& p, bool pivot_edges) : p_(p), edges_(pivot_edges) {}

  std::string write() {
    for (int t : p_.top) loop(p_.loops[static_cast<size_t>(t)]);
    return out_;
  }

 private:
  const NestedLoop* at(int index) const { return index < 0 ? nullptr : &p_.loops[static_cast<size_t>(index)]; }

  // The ancestors of `l` (outermost first), `l` included.
  std::vector<const NestedLoop*> chain(const NestedLoop* l) const {
    std::vector<const NestedLoop*> c;
    for (; l != nullptr; l = at(l->parent)) c.insert(c.begin(), l);
    return c;
  }

  std::string base(const LoopSource& s, const NestedLoop* in) {
    if (s.level == 0) {
      std::string n = "c" + std::to_string(s.value);
      if (s.value < 0) n = "cm" + std::to_string(-s.value);
      if (consts_.insert(n).second) out_ += int_const(n, s.value);
      return n;
    }
    const NestedLoop* owner = chain(in)[static_cast<size_t>(s.level - 1)];
    return name(*owner) + (s.var == 0 ? "/i_id" : "/acc_id");
  }

  // The value of `s` as seen inside loop `in` (the root if null): constant
  // Enters through every level between the source's and `in`'s.
  std::string value(const LoopSource& s, const NestedLoop* in) {
    std::string v = base(s, in);
    if (in == nullptr) return v;
    bool from_enter = false;
    for (const NestedLoop* l : chain(in)) {
      if (l->depth <= s.level) continue;
      auto key = std::make_pair(v, l->id);
      auto it = captured_.find(key);
      if (it == captured_.end()) {
        std::string n = name(*l) + "/cap" + std::to_string(captured_.size());
        std::string e = enter(n, v, name(*l), true, l->parallel_iterations);
        if (edges_ && from_enter) e = add_control(e, name(*at(l->parent)) + "/i_id");
        out_ += e;
        it = captured_.emplace(key, n).first;
      }
      v = it->second;
      from_enter = true;
    }
    return v;
  }

  static std::string add_control(const std::string& node_text, const std::string& control) {
    // node { name: ... op: ... input: ... attr ... }: the control input goes
    // after the last data input, before the attrs
    size_t pos = node_text.find(" attr {");
    return node_text.substr(0, pos) + " input: \"^" + control + "\"" + node_text.substr(pos);
  }

  bool is_invariant_enter(const std::string& v) const {
    for (const auto& [key, n] : captured_)
      if (n == v) return true;
    return false;
  }

  void loop(const NestedLoop& l) {
    const std::string n = name(l), f = n;
    const NestedLoop* parent = at(l.parent);
    for (const char* var : {"i", "acc"}) {
      const LoopSource& s = var[0] == 'i' ? l.init_i : l.init_acc;
      std::string init = value(s, parent);
      std::string e = enter(n + "/" + var + "_enter", init, f, false, l.parallel_iterations);
      if (edges_ && parent != nullptr && is_invariant_enter(init)) e = add_control(e, name(*parent) + "/i_id");
      out_ += e + merge(n + "/" + var + "_merge", {n + "/" + var + "_enter", n + "/" + var + "_next"});
    }
    out_ += binary(n + "/less", "Less", n + "/i_merge", value(l.limit, &l)) +
            node(n + "/pivot", "LoopCond", {n + "/less"});
    for (const char* var : {"i", "acc"}) {
      const std::string v = n + "/" + var;
      out_ += binary(v + "_switch", "Switch", v + "_merge", n + "/pivot") +
              unary(v + "_id", "Identity", v + "_switch:1") + unary(v + "_exit", "Exit", v + "_switch");
    }
    out_ += int_const(n + "/step", l.step, {"^" + n + "/i_id"}) +
            binary(n + "/i_next_value", "Add", n + "/i_id", n + "/step");
    for (int c : l.children) loop(p_.loops[static_cast<size_t>(c)]);
    std::string acc = n + "/sum0";
    out_ += binary(acc, "Add", n + "/acc_id", value(l.addend, &l));
    for (size_t k = 0; k < l.children.size(); ++k) {
      std::string next = n + "/sum" + std::to_string(k + 1);
      out_ += binary(next, "Add", acc, name(p_.loops[static_cast<size_t>(l.children[k])]) + "/acc_exit");
      acc = next;
    }
    if (l.threshold >= 0) {
      const std::string c = n + "/cond";
      out_ += int_const(c + "/threshold", l.threshold, {"^" + n + "/i_id"}) +
              binary(c + "/pred", "Less", n + "/i_id", c + "/threshold") +
              node(c + "/switch", "Switch", {acc, c + "/pred"}, type_attr("T", "DT_INT32")) +
              unary(c + "/t", "Identity", c + "/switch:1") + unary(c + "/f", "Identity", c + "/switch") +
              int_const(c + "/one_t", 1, {"^" + c + "/t"}) + int_const(c + "/one_f", 1, {"^" + c + "/f"}) +
              binary(c + "/up", "Add", c + "/t", c + "/one_t") + binary(c + "/down", "Sub", c + "/f", c + "/one_f") +
              merge(c + "/merge", {c + "/up", c + "/down"});
      acc = c + "/merge";
    }
    out_ += unary(n + "/i_next", "NextIteration", n + "/i_next_value") +
            unary(n + "/acc_next", "NextIteration", acc);
  }

  const NestedLoopProgram& p_;
  bool edges_;
  std::string out_;
  std::set<std::string> consts_;
  std::map<std::pair<std::string, int>, std::string> captured_;
};

}  // namespace nested_loops_detail

inline std::string NestedLoopProgram::describe() const {
  auto src = [](const LoopSource& s) {
    if (s.level == 0) return std::to_string(s.value);
    return std::string(s.var == 0 ? "i" : "acc") + "@" + std::to_string(s.level);
  };
  std::string out;
  for (const NestedLoop& l : loops)
    out += std::string(static_cast<size_t>(2 * l.depth), ' ') + "L" + std::to_string(l.id) +
           ": i=" + src(l.init_i) + " acc=" + src(l.init_acc) + " while i<" + src(l.limit) +
           " acc+=" + src(l.addend) + " i+=" + std::to_string(l.step) +
           (l.threshold >= 0 ? " cond(i<" + std::to_string(l.threshold) + ")" : "") + " p=" +
           std::to_string(l.parallel_iterations) + "\n";
  return out;
}

inline std::vector<std::pair<int, int>> NestedLoopProgram::evaluate() const {
  nested_loops_detail::Evaluator e{*this, {}, 0};
  std::vector<std::pair<int, int>> out;
  for (int t : top) out.push_back(e.run(loops[static_cast<size_t>(t)]));
  return out;
}

inline int64_t NestedLoopProgram::total_iterations() const {
  nested_loops_detail::Evaluator e{*this, {}, 0};
  for (int t : top) e.run(loops[static_cast<size_t>(t)]);
  return e.iterations;
}

inline std::vector<std::string> NestedLoopProgram::fetches(bool built) const {
  std::vector<std::string> out;
  for (int t : top) {
    const std::string n = nested_loops_detail::name(loops[static_cast<size_t>(t)]);
    out.push_back(n + (built ? "/i_exit_value" : "/i_exit"));
    out.push_back(n + (built ? "/acc_exit_value" : "/acc_exit"));
  }
  return out;
}

inline std::string NestedLoopProgram::graph_text(bool pivot_edges) const {
  return nested_loops_detail::TextWriter(*this, pivot_edges).write();
}

inline graph::Graph NestedLoopProgram::build() const {
  using graph::Output;
  graph::GraphBuilder b;
  std::vector<std::pair<Output, Output>> env;  // (i, acc) by depth - 1
  auto value = [&](const LoopSource& s) {
    if (s.level == 0) return b.scalar<int32_t>(s.value);
    const auto& [i, acc] = env[static_cast<size_t>(s.level - 1)];
    return s.var == 0 ? i : acc;
  };
  std::function<graph::Outputs(const NestedLoop&)> loop = [&](const NestedLoop& l) {
    graph::WhileOptions o;
    o.parallel_iterations = l.parallel_iterations;
    o.name = nested_loops_detail::name(l);
    Output limit = value(l.limit);
    Output addend_outside = l.addend.level < l.depth ? value(l.addend) : Output{};
    return b.while_loop(
        [&](const std::vector<Output>& v) { return b.less(v[0], limit); },
        [&](const std::vector<Output>& v) {
          env.emplace_back(v[0], v[1]);
          Output acc = b.add(v[1], l.addend.level < l.depth ? addend_outside : value(l.addend));
          for (int c : l.children) acc = b.add(acc, loop(loops[static_cast<size_t>(c)])[1]);
          if (l.threshold >= 0) {
            Output pred = b.less(v[0], b.scalar<int32_t>(l.threshold));
            acc = b.cond(pred, [&] { return std::vector<Output>{b.add(acc, b.scalar<int32_t>(1))}; },
                         [&] { return std::vector<Output>{b.sub(acc, b.scalar<int32_t>(1))}; })[0];
          }
          std::vector<Output> next{b.add(v[0], b.scalar<int32_t>(l.step)), acc};
          env.pop_back();
          return next;
        },
        {value(l.init_i), value(l.init_acc)}, o);
  };
  for (int t : top) {
    const NestedLoop& l = loops[static_cast<size_t>(t)];
    graph::Outputs out = loop(l);
    const std::string n = nested_loops_detail::name(l);
    b.identity(out[0], n + "/i_exit_value");
    b.identity(out[1], n + "/acc_exit_value");
  }
  auto g = b.finish();
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

inline NestedLoopProgram random_nested_loop_program(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  NestedLoopProgram p;
  const int deepest = pick(2, 4);
  // A source from the root or any enclosing loop of a loop at `depth`;
  // counters only (they stay small) unless `any_var`.
  auto source = [&](int depth, bool any_var, int lo, int hi) {
    LoopSource s;
    s.level = pick(0, depth - 1);
    if (s.level == 0) s.value = pick(lo, hi);
    else s.var = any_var ? pick(0, 1) : 0;
    return s;
  };
  std::function<int(int, int, bool)> make = [&](int parent, int depth, bool on_chain) {
    NestedLoop l;
    l.id = static_cast<int>(p.loops.size());
    l.parent = parent;
    l.depth = depth;
    // Counters mostly start at 0, limits mostly at 1..3: loops that run.
    l.init_i = pick(0, 1) == 0 ? LoopSource{0, 0, 0} : source(depth, false, 0, 1);
    l.init_acc = source(depth, true, -3, 5);
    l.limit = pick(0, 2) > 0 ? LoopSource{0, 0, pick(1, 3)} : source(depth, false, 1, 3);
    l.addend = source(depth + 1, false, -2, 4);  // may be the loop's own counter
    l.step = pick(1, 2);
    l.parallel_iterations = std::vector<int>{1, 2, 10}[static_cast<size_t>(pick(0, 2))];
    l.threshold = pick(0, 2) == 0 ? pick(0, 3) : -1;
    const int index = static_cast<int>(p.loops.size());
    p.loops.push_back(l);
    const int children = depth >= 4 ? 0 : pick(0, depth == 1 ? 2 : 1);
    std::vector<int> kids;
    if (on_chain && depth < deepest) kids.push_back(make(index, depth + 1, true));
    for (int k = 0; k < children && depth < 4; ++k) kids.push_back(make(index, depth + 1, false));
    p.loops[static_cast<size_t>(index)].children = std::move(kids);
    return index;
  };
  p.top.push_back(make(-1, 1, true));
  if (pick(0, 3) == 0) p.top.push_back(make(-1, 1, false));
  return p;
}

}  // namespace tagflow::testing
