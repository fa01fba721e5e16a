// The GraphDef forms of a Program (emit.hpp): tf1 and any_level.
#include <fmt/format.h>

#include <functional>
#include <map>
#include <set>

#include "emit.hpp"

namespace tagflow::difftest {

namespace {

std::string quote(const std::string& s) { return "\"" + s + "\""; }

struct Attrs {
  std::string text;
  Attrs& type(const char* key, const std::string& t) {
    text += fmt::format(" attr {{ key: \"{}\" value {{ type: {} }} }}", key, t);
    return *this;
  }
  Attrs& i(const char* key, int64_t v) {
    text += fmt::format(" attr {{ key: \"{}\" value {{ i: {} }} }}", key, v);
    return *this;
  }
  Attrs& b(const char* key, bool v) {
    text += fmt::format(" attr {{ key: \"{}\" value {{ b: {} }} }}", key, v ? "true" : "false");
    return *this;
  }
  Attrs& s(const char* key, const std::string& v) {
    text += fmt::format(" attr {{ key: \"{}\" value {{ s: {} }} }}", key, quote(v));
    return *this;
  }
  Attrs& scalar_shape(const char* key) {
    text += fmt::format(" attr {{ key: \"{}\" value {{ shape {{ }} }} }}", key);
    return *this;
  }
  Attrs& int_value(int32_t v) {
    text += fmt::format(" attr {{ key: \"value\" value {{ tensor {{ dtype: DT_INT32 tensor_shape {{ }} int_val: {} }} }} }}", v);
    return *this;
  }
  Attrs& bool_value(bool v) {
    text += fmt::format(" attr {{ key: \"value\" value {{ tensor {{ dtype: DT_BOOL tensor_shape {{ }} bool_val: {} }} }} }}",
                        v ? "true" : "false");
    return *this;
  }
};

const std::string kInt = "DT_INT32";
const std::string kBool = "DT_BOOL";
const std::string kFloat = "DT_FLOAT";
const std::string kResource = "DT_RESOURCE";

std::string node_of(const std::string& endpoint) {
  std::string n = endpoint[0] == '^' ? endpoint.substr(1) : endpoint;
  return n.substr(0, n.find(':'));
}

class TextWriter {
 public:
  TextWriter(const Program& p, Form form) : p_(p), tf_(form == Form::tf1) {}

  std::string write() {
    for (size_t k = 0; k < p_.feeds.size(); ++k) {
      const std::string n = fmt::format("f{}", k);
      node(n, "Placeholder", {}, Attrs().type("dtype", kInt).scalar_shape("shape"));
      slot(0, static_cast<int>(k)) = n;
    }
    for (size_t k = 0; k < p_.variable_inits.size(); ++k) {
      const std::string v = fmt::format("var{}", k);
      node(v, "VarHandleOp", {},
           Attrs().type("dtype", kInt).scalar_shape("shape").s("shared_name", v).s("container", ""));
      node(v + "/init_value", "Const", {}, Attrs().type("dtype", kInt).int_value(p_.variable_inits[k]));
      node(v + "/init", "AssignVariableOp", {v, v + "/init_value"}, Attrs().type("dtype", kInt));
    }
    block(0);
    return out_;
  }

  std::vector<std::string> fetches() const {
    std::vector<std::string> out;
    for (const Value& f : p_.fetches) out.push_back(names_.at({f.block, f.slot}));
    return out;
  }

 private:
  const Block& blk(int b) const { return p_.blocks[static_cast<size_t>(b)]; }
  const Stmt& stmt(int s) const { return p_.stmts[static_cast<size_t>(s)]; }
  std::string& slot(int b, int s) { return names_[{b, s}]; }

  // Whether a choice the form leaves open goes one way, decided by a name
  // (so that a program always gives the same graph).
  static bool coin(const std::string& name, int percent) {
    return std::hash<std::string>()(name) % 100 < static_cast<size_t>(percent);
  }

  std::string prefix(int b) const {
    if (b == 0) return "";
    const Block& x = blk(b);
    const std::string up = prefix(x.parent);
    switch (x.kind) {
      case BlockKind::loop_body: return fmt::format("{}L{}/", up, x.owner);
      case BlockKind::then_branch: return fmt::format("{}C{}/t/", up, x.owner);
      case BlockKind::else_branch: return fmt::format("{}C{}/f/", up, x.owner);
      case BlockKind::root: break;
    }
    return up;
  }

  // The innermost loop body at or around b (0: the root).
  int frame_block(int b) const {
    while (b > 0 && blk(b).kind != BlockKind::loop_body) b = blk(b).parent;
    return b;
  }
  std::string frame_name(int body) const { return prefix(body) + "while_context"; }

  std::string pivot(int b) const {
    const Block& x = blk(b);
    const std::string c = prefix(x.parent) + fmt::format("C{}/", x.owner);
    switch (x.kind) {
      case BlockKind::loop_body: return prefix(b) + "v0";
      case BlockKind::then_branch: return c + "pt";
      case BlockKind::else_branch: return c + "pf";
      case BlockKind::root: break;
    }
    return "";
  }

  bool gated(const std::string& endpoint) const { return gated_.count(node_of(endpoint)) > 0; }

  // Adds a node; it is gated (dead in its loop's last iteration) when one
  // of its inputs is, unless `gate` says otherwise.
  void node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
            const Attrs& attrs, int gate = -1) {
    out_ += "node { name: " + quote(name) + " op: " + quote(op);
    bool any = false;
    for (const std::string& in : inputs) {
      out_ += " input: " + quote(in);
      any = any || gated(in);
    }
    out_ += attrs.text + " }\n";
    if (gate == 1 || (gate == -1 && any)) gated_.insert(name);
  }

  std::string root_const(int32_t c) {
    const std::string n = c < 0 ? fmt::format("cm{}", -c) : fmt::format("c{}", c);
    if (consts_.insert(n).second) node(n, "Const", {}, Attrs().type("dtype", kInt).int_value(c));
    return n;
  }

  // A constant made in block b: TensorFlow gives it a control input from
  // the block's pivot; `merge`, for a loop's predicate, from its first Merge.
  std::string local_const(int32_t c, int b, const std::string& dtype = kInt, bool at_pred = false) {
    const std::string base = prefix(b) + (at_pred ? "p" : "") + (dtype == kBool ? "kb" : "k") +
                             (c < 0 ? fmt::format("m{}", -c) : std::to_string(c));
    if (!consts_.insert(base).second) return base;
    std::string control = at_pred ? prefix(b) + "m0" : pivot(b);
    // Without pivot edges, a loop body's constant may hang on the Merge.
    if (!tf_ && !at_pred && blk(b).kind == BlockKind::loop_body && coin(base, 30)) control = prefix(b) + "m0";
    Attrs a;
    a.type("dtype", dtype);
    if (dtype == kBool) a.bool_value(c != 0);
    else a.int_value(c);
    node(base, "Const", {"^" + control}, a);
    return base;
  }

  // The endpoint `ep` of block `from` as seen in block `to` (inside it):
  // an invariant Enter for each loop between, a Switch for each cond.
  std::string cross(std::string ep, int from, int to, const std::string& dtype = kInt) {
    std::vector<int> path;
    for (int b = to; b != from; b = blk(b).parent) path.insert(path.begin(), b);
    int at = from;
    for (int c : path) {
      const Block& x = blk(c);
      if (x.kind == BlockKind::loop_body) {
        auto [it, is_new] = crossed_.emplace(std::make_pair(ep, c), "");
        if (is_new) {
          const std::string n = prefix(c) + fmt::format("inv{}", counter_++);
          std::vector<std::string> in{ep};
          if (tf_ && invariants_.count(node_of(ep)) && blk(at).kind == BlockKind::loop_body)
            in.push_back("^" + pivot(at));
          node(n, "Enter", in,
               Attrs().type("T", dtype).s("frame_name", frame_name(c)).b("is_constant", true)
                   .i("parallel_iterations", stmt(x.owner).parallel_iterations), 0);
          invariants_.insert(n);
          it->second = n;
        }
        ep = it->second;
      } else {
        const Stmt& cond = stmt(x.owner);
        auto [it, is_new] = crossed_.emplace(std::make_pair(ep, -1 - x.owner), "");
        if (is_new) {
          const std::string n = prefix(at) + fmt::format("C{}/sw{}", x.owner, counter_++);
          node(n, "Switch", {ep, prefix(at) + fmt::format("C{}/pred", x.owner)}, Attrs().type("T", dtype));
          it->second = n;
        }
        (void)cond;
        ep = it->second + (x.kind == BlockKind::then_branch ? ":1" : "");
      }
      at = c;
    }
    return ep;
  }

  std::string ref(const Value& v, int b, bool at_pred = false) {
    if (!v.is_slot()) {
      if (v.local && b != 0) return local_const(v.constant, b, kInt, at_pred);
      return cross(root_const(v.constant), 0, b);
    }
    return cross(names_.at({v.block, v.slot}), v.block, b);
  }

  void block(int b) {
    for (int s : blk(b).stmts) {
      const Stmt& st = stmt(s);
      if (st.removed) continue;
      switch (st.kind) {
        case Stmt::Kind::compute: compute(s); break;
        case Stmt::Kind::loop: loop(s); break;
        case Stmt::Kind::cond: cond(s); break;
      }
    }
  }

  // TensorFlow's rule for an op of a loop body whose inputs are all loop
  // invariants: a control input from the body's pivot.
  void pivot_edge(std::vector<std::string>& inputs, int b) {
    if (!tf_ || blk(b).kind != BlockKind::loop_body) return;
    for (const std::string& in : inputs)
      if (in[0] != '^' && !invariants_.count(node_of(in))) return;
    inputs.push_back("^" + pivot(b));
  }

  void compute(int s) {
    const Stmt& st = stmt(s);
    const std::string n = prefix(st.block) + fmt::format("S{}", s);
    std::vector<std::string> in{ref(st.a, st.block), ref(st.b, st.block)};
    pivot_edge(in, st.block);
    if (st.op == "Add" || st.op == "Sub") {
      node(n + "/raw", st.op, in, Attrs().type("T", kInt));
      node(n, "FloorMod", {n + "/raw", ref(Value::of(kModulus, true), st.block)}, Attrs().type("T", kInt));
    } else {
      node(n, st.op, in, Attrs().type("T", kInt));
    }
    slot(st.block, st.first_slot) = n;
  }

  void cond(int s) {
    const Stmt& st = stmt(s);
    const std::string c = prefix(st.block) + fmt::format("C{}/", s);
    node(c + "pred", "Less", {ref(st.lhs, st.block), ref(st.rhs, st.block)}, Attrs().type("T", kInt));
    node(c + "sp", "Switch", {c + "pred", c + "pred"}, Attrs().type("T", kBool));
    node(c + "pt", "Identity", {c + "sp:1"}, Attrs().type("T", kBool));
    node(c + "pf", "Identity", {c + "sp"}, Attrs().type("T", kBool));
    block(st.then_block);
    std::vector<std::string> then_out, else_out;
    for (const Value& v : st.then_out) then_out.push_back(ref(v, st.then_block));
    block(st.else_block);
    for (const Value& v : st.else_out) else_out.push_back(ref(v, st.else_block));
    for (size_t k = 0; k < then_out.size(); ++k) {
      const std::string m = c + fmt::format("m{}", k);
      const bool dead = gated(c + "pred") || (gated(then_out[k]) && gated(else_out[k]));
      node(m, "Merge", {then_out[k], else_out[k]}, Attrs().type("T", kInt).i("N", 2), dead ? 1 : 0);
      slot(st.block, st.first_slot + static_cast<int>(k)) = m;
    }
  }

  struct LoopVar {
    std::string init, type;
  };

  // The loop's nodes up to its Switches; returns the body's identities.
  std::vector<std::string> loop_head(const Stmt& st, const std::vector<LoopVar>& vars,
                                     const std::function<std::string()>& predicate) {
    const int b = st.body;
    const std::string L = prefix(b);
    for (size_t k = 0; k < vars.size(); ++k) {
      std::vector<std::string> in{vars[k].init};
      if (tf_ && invariants_.count(node_of(vars[k].init)) && blk(st.block).kind == BlockKind::loop_body)
        in.push_back("^" + pivot(st.block));
      node(L + fmt::format("e{}", k), "Enter", in,
           Attrs().type("T", vars[k].type).s("frame_name", frame_name(b)).b("is_constant", false)
               .i("parallel_iterations", st.parallel_iterations), gated(vars[k].init) ? 1 : 0);
      node(L + fmt::format("m{}", k), "Merge", {L + fmt::format("e{}", k), L + fmt::format("n{}", k)},
           Attrs().type("T", vars[k].type).i("N", 2), 0);
    }
    node(L + "pivot", "LoopCond", {predicate()}, Attrs(), 0);
    std::vector<std::string> ids;
    for (size_t k = 0; k < vars.size(); ++k) {
      const std::string sw = L + fmt::format("s{}", k);
      node(sw, "Switch", {L + fmt::format("m{}", k), L + "pivot"}, Attrs().type("T", vars[k].type), 0);
      node(L + fmt::format("x{}", k), "Exit", {sw}, Attrs().type("T", vars[k].type), 0);
      node(L + fmt::format("v{}", k), "Identity", {sw + ":1"}, Attrs().type("T", vars[k].type), 1);
      ids.push_back(L + fmt::format("v{}", k));
    }
    return ids;
  }

  // A NextIteration that would be live in the loop's last iteration (a loop
  // invariant, a constant hanging on the Merge) would run it for ever: it
  // gets a control input from a node of the body that is dead there — the
  // pivot, as TensorFlow does, or without pivot edges any such node.
  void next_iteration(const std::string& name, std::string value, std::vector<std::string> controls,
                      const std::string& type, int body) {
    std::vector<std::string> in{std::move(value)};
    for (std::string& c : controls) in.push_back("^" + node_of(c));
    bool dead = false;
    for (const std::string& x : in) dead = dead || gated(x);
    if (!dead) {
      std::string gate = pivot(body);
      if (!tf_) {
        std::vector<std::string> candidates;
        const std::string L = prefix(body);
        for (const std::string& g : gated_)
          if (g.compare(0, L.size(), L) == 0 && g.find('/', L.size()) == std::string::npos && !nexts_.count(g))
            candidates.push_back(g);
        if (!candidates.empty()) gate = candidates[std::hash<std::string>()(name) % candidates.size()];
      }
      in.push_back("^" + gate);
    }
    node(name, "NextIteration", in, Attrs().type("T", type));
    nexts_.insert(name);
  }

  void loop(int s) {
    const Stmt& st = stmt(s);
    const int b = st.body, P = st.block;
    const std::string L = prefix(b);
    const int n = st.num_vars();
    std::vector<LoopVar> vars;
    for (const Value& v : st.init) vars.push_back({ref(v, P), kInt});
    // TensorArrays and stacks: made before the loop; a hidden counter of
    // iterations (and the TensorArray's flow) are loop variables too.
    const bool counted = st.tensor_array || st.stack;
    // (named in P, where they are: "L3_ta" beside the loop's "L3/...")
    const std::string around = prefix(P) + fmt::format("L{}_", s);
    const std::string ta = around + "ta", stack = around + "stack";
    if (st.tensor_array) {
      node(ta, "TensorArrayV3", {ref(Value::of(0, true), P)},
           Attrs().type("dtype", kInt).scalar_shape("element_shape").b("dynamic_size", true)
               .b("clear_after_read", false).b("identical_element_shapes", true).s("tensor_array_name", ""));
      vars.push_back({ta + ":1", kFloat});
    }
    if (st.stack) node(stack, "StackV2", {ref(Value::of(-1, true), P)}, Attrs().type("elem_type", kInt).s("stack_name", stack));
    if (counted) vars.push_back({ref(Value::of(0, true), P), kInt});
    const int flow_var = st.tensor_array ? n : -1, count_var = counted ? static_cast<int>(vars.size()) - 1 : -1;

    auto predicate = [&]() -> std::string {
      if (st.pred == Pred::const_false) {
        const std::string c = L + "pc";
        node(c, "Const", {"^" + L + "m0"}, Attrs().type("dtype", kBool).bool_value(false), 0);
        node(L + "less", "Const", {"^" + c}, Attrs().type("dtype", kBool).bool_value(false), 0);
        return L + "less";
      }
      node(L + "less", "Less", {L + "m0", ref(st.limit, b, true)}, Attrs().type("T", kInt), 0);
      if (st.pred == Pred::less) return L + "less";
      node(L + "less2", "Less", {L + fmt::format("m{}", st.pred_var), ref(st.bound, b, true)}, Attrs().type("T", kInt), 0);
      node(L + "and", "LogicalAnd", {L + "less", L + "less2"}, Attrs(), 0);
      return L + "and";
    };
    const std::vector<std::string> ids = loop_head(st, vars, predicate);
    for (int k = 0; k < n; ++k) slot(b, k) = ids[static_cast<size_t>(k)];
    if (st.variable >= 0) {
      const std::string h = cross(fmt::format("var{}", st.variable), 0, b, kResource);
      const std::string addend = L + "addend";
      node(addend, "FloorMod", {ref(st.var_addend, b), ref(Value::of(kModulus, true), b)}, Attrs().type("T", kInt));
      node(L + "assign", "AssignAddVariableOp", {h, addend, "^" + pivot(b)}, Attrs().type("dtype", kInt));
      node(L + "read", "ReadVariableOp", {h, "^" + L + "assign"}, Attrs().type("dtype", kInt));
      slot(b, n) = L + "read";
    }
    block(b);

    std::vector<std::string> count_controls;
    if (st.tensor_array) {
      const std::string h = cross(ta, P, b, kResource);
      node(L + "write", "TensorArrayWriteV3",
           {h, ids[static_cast<size_t>(count_var)], ref(st.ta_value, b), ids[static_cast<size_t>(flow_var)]},
           Attrs().type("T", kInt));
    }
    if (st.stack) {
      const std::string h = cross(stack, P, b, kResource);
      node(L + "push", "StackPushV2", {h, ref(st.stack_value, b), "^" + pivot(b)},
           Attrs().type("T", kInt).b("swap_memory", false));
      count_controls.push_back(L + "push");  // the count after the loop follows every push
    }
    for (int k = 0; k < n; ++k) {
      const Next& nx = st.next[static_cast<size_t>(k)];
      std::string value;
      if (k == 0) {
        value = L + "i_next";
        node(value, "Add", {ids[0], ref(Value::of(st.step, true), b)}, Attrs().type("T", kInt));
      } else {
        value = ref(nx.value, b);
      }
      std::vector<std::string> controls;
      for (const Value& c : nx.control) controls.push_back(names_.at({c.block, c.slot}));
      next_iteration(L + fmt::format("n{}", k), value, controls, kInt, b);
    }
    if (st.tensor_array) next_iteration(L + fmt::format("n{}", flow_var), L + "write", {}, kFloat, b);
    if (counted) {
      std::vector<std::string> in{ids[static_cast<size_t>(count_var)], ref(Value::of(1, true), b)};
      for (const std::string& c : count_controls) in.push_back("^" + c);
      node(L + "count", "Add", in, Attrs().type("T", kInt));
      next_iteration(L + fmt::format("n{}", count_var), L + "count", {}, kInt, b);
    }

    for (int k = 0; k < n; ++k) slot(P, st.first_slot + k) = L + fmt::format("x{}", k);
    int out = st.first_slot + n;
    // Dead in P's last iteration when the loop's pivot is: its counter or
    // its limit is dead there (a local constant of the predicate hangs on
    // the loop's own Merge, live).
    auto dead_in_parent = [&](const Value& v) { return !(v.local && !v.is_slot()) && gated(ref(v, P)); };
    const bool exits_dead = gated(vars[0].init) ||
                            (st.pred != Pred::const_false && dead_in_parent(st.limit)) ||
                            (st.pred == Pred::less_and && dead_in_parent(st.bound));
    for (int k = 0; k < static_cast<int>(vars.size()); ++k) {
      if (exits_dead) gated_.insert(L + fmt::format("x{}", k));
    }
    if (st.tensor_array) {
      const std::string flow = L + fmt::format("x{}", flow_var);
      node(around + "size", "TensorArraySizeV3", {ta, flow}, Attrs());
      node(around + "range", "Range", {ref(Value::of(0, true), P), around + "size", ref(Value::of(1, true), P)},
           Attrs().type("Tidx", kInt));
      node(around + "gather", "TensorArrayGatherV3", {ta, around + "range", flow},
           Attrs().type("dtype", kInt).scalar_shape("element_shape"));
      node(around + "sum", "Sum", {around + "gather", ref(Value::of(0, true), P)},
           Attrs().type("T", kInt).type("Tidx", kInt).b("keep_dims", false));
      slot(P, out++) = around + "size";
      slot(P, out++) = around + "sum";
    }
    if (st.stack) {
      slot(P, out++) = pop_loop(s, stack, L + fmt::format("x{}", count_var));
    }
  }

  // The second loop of a stack: pops as many values as the first pushed,
  // into an order-sensitive checksum (acc = 2·acc − pop, modulo).
  std::string pop_loop(int s, const std::string& stack, const std::string& count) {
    const Stmt& st = stmt(s);
    const int P = st.block;
    const std::string L = prefix(P) + fmt::format("L{}_pop/", s), F = L + "while_context";
    auto enter = [&](const std::string& name, const std::string& in, const std::string& type, bool invariant) {
      node(name, "Enter", {in},
           Attrs().type("T", type).s("frame_name", F).b("is_constant", invariant).i("parallel_iterations", 1), 0);
    };
    enter(L + "e0", ref(Value::of(0, true), P), kInt, false);
    enter(L + "e1", ref(Value::of(0, true), P), kInt, false);
    enter(L + "limit", count, kInt, true);
    enter(L + "handle", stack, kResource, true);
    enter(L + "one", cross(root_const(1), 0, P), kInt, true);
    enter(L + "modulus", cross(root_const(kModulus), 0, P), kInt, true);
    for (int k = 0; k < 2; ++k)
      node(L + fmt::format("m{}", k), "Merge", {L + fmt::format("e{}", k), L + fmt::format("n{}", k)},
           Attrs().type("T", kInt).i("N", 2), 0);
    node(L + "less", "Less", {L + "m0", L + "limit"}, Attrs().type("T", kInt), 0);
    node(L + "pivot", "LoopCond", {L + "less"}, Attrs(), 0);
    for (int k = 0; k < 2; ++k) {
      const std::string sw = L + fmt::format("s{}", k);
      node(sw, "Switch", {L + fmt::format("m{}", k), L + "pivot"}, Attrs().type("T", kInt), 0);
      node(L + fmt::format("x{}", k), "Exit", {sw}, Attrs().type("T", kInt), 0);
      node(L + fmt::format("v{}", k), "Identity", {sw + ":1"}, Attrs().type("T", kInt), 1);
    }
    node(L + "pop", "StackPopV2", {L + "handle", "^" + L + "v0"}, Attrs().type("elem_type", kInt));
    node(L + "twice", "Add", {L + "v1", L + "v1"}, Attrs().type("T", kInt));
    node(L + "diff", "Sub", {L + "twice", L + "pop"}, Attrs().type("T", kInt));
    node(L + "acc", "FloorMod", {L + "diff", L + "modulus"}, Attrs().type("T", kInt));
    node(L + "j", "Add", {L + "v0", L + "one"}, Attrs().type("T", kInt));
    node(L + "n0", "NextIteration", {L + "j"}, Attrs().type("T", kInt));
    node(L + "n1", "NextIteration", {L + "acc"}, Attrs().type("T", kInt));
    if (gated(count)) gated_.insert(L + "x1");
    return L + "x1";
  }

  const Program& p_;
  bool tf_;
  std::string out_;
  std::map<std::pair<int, int>, std::string> names_;   // (block, slot) -> endpoint
  std::map<std::pair<std::string, int>, std::string> crossed_;
  std::set<std::string> consts_, invariants_, gated_, nexts_;
  int counter_ = 0;
};

}  // namespace

std::string emit_text(const Program& p, Form form) { return TextWriter(p, form).write(); }

std::vector<std::string> text_fetches(const Program& p, Form form) {
  TextWriter w(p, form);
  w.write();
  return w.fetches();
}

}  // namespace tagflow::difftest
