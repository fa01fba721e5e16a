#include "program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <random>

namespace tagflow::difftest {

namespace {

struct SlotInfo {
  bool small = false;  // a counter-like value: it bounds a loop's trip count
};

class Generator {
 public:
  Generator(uint64_t seed, const GeneratorOptions& o) : rng_(seed), o_(o) {}

  Program run() {
    p_.blocks.push_back(Block{});
    info_.emplace_back();
    p_.feeds.push_back(pick(0, 3));
    add_slot(0, true);
    budget_ = pick(std::max(3, o_.max_stmts / 2), o_.max_stmts);
    // The root always holds a loop (the programs are about loops).
    loop(0, 1);
    fill(0, 0, pick(1, 3));
    for (int s = 0; s < static_cast<int>(p_.stmts.size()); ++s) {
      const Stmt& st = p_.stmts[static_cast<size_t>(s)];
      if (st.block != 0) continue;
      for (int k = 0; k < st.num_outputs; ++k) p_.fetches.push_back(Value::at(0, st.first_slot + k));
    }
    return std::move(p_);
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(int percent) { return pick(1, 100) <= percent; }

  int add_slot(int block, bool small) {
    info_[static_cast<size_t>(block)].push_back(SlotInfo{small});
    return p_.blocks[static_cast<size_t>(block)].num_slots++;
  }

  int new_block(BlockKind kind, int parent, int owner) {
    Block b;
    b.kind = kind;
    b.parent = parent;
    b.owner = owner;
    p_.blocks.push_back(b);
    info_.emplace_back();
    return static_cast<int>(p_.blocks.size()) - 1;
  }

  // Every slot visible in `block` now: its own and its ancestors' so far.
  std::vector<Value> visible(int block, bool small_only) const {
    std::vector<Value> out;
    for (int b = block; b >= 0; b = p_.blocks[static_cast<size_t>(b)].parent)
      for (int s = 0; s < p_.blocks[static_cast<size_t>(b)].num_slots; ++s)
        if (!small_only || info_[static_cast<size_t>(b)][static_cast<size_t>(s)].small)
          out.push_back(Value::at(b, s));
    return out;
  }

  Value constant(int block, int lo, int hi) { return Value::of(pick(lo, hi), block != 0 && chance(50)); }

  Value any(int block) {
    std::vector<Value> v = visible(block, false);
    if (v.empty() || chance(20)) return constant(block, -3, 5);
    return v[static_cast<size_t>(pick(0, static_cast<int>(v.size()) - 1))];
  }

  Value small(int block, int hi) {
    std::vector<Value> v = visible(block, true);
    if (v.empty() || chance(50)) return constant(block, 0, hi);
    return v[static_cast<size_t>(pick(0, static_cast<int>(v.size()) - 1))];
  }

  void fill(int block, int depth, int count) {
    for (int k = 0; k < count && budget_ > 0; ++k) {
      const int r = pick(1, 100);
      if (r <= 35 && depth < o_.max_depth) loop(block, depth + 1);
      else if (r <= 60) cond(block, depth);
      else compute(block);
    }
  }

  Stmt& add_stmt(Stmt s) {
    --budget_;
    p_.stmts.push_back(std::move(s));
    const int id = static_cast<int>(p_.stmts.size()) - 1;
    p_.blocks[static_cast<size_t>(p_.stmts.back().block)].stmts.push_back(id);
    return p_.stmts.back();
  }

  void finish_outputs(int id, const std::vector<bool>& small) {
    Stmt& s = p_.stmts[static_cast<size_t>(id)];
    s.num_outputs = static_cast<int>(small.size());
    s.first_slot = p_.blocks[static_cast<size_t>(s.block)].num_slots;
    for (bool b : small) add_slot(s.block, b);
  }

  void compute(int block) {
    static const char* const ops[] = {"Add", "Sub", "Maximum", "Minimum"};
    Stmt s;
    s.kind = Stmt::Kind::compute;
    s.block = block;
    s.op = ops[pick(0, 3)];
    s.a = any(block);
    s.b = any(block);
    add_stmt(std::move(s));
    finish_outputs(static_cast<int>(p_.stmts.size()) - 1, {false});
  }

  // The candidates for a NextIteration's control inputs: slots of the body
  // and of the conds inside it (the same frame), not of nested loops.
  std::vector<Value> same_frame_slots(int body) const {
    std::vector<Value> out;
    for (int b = 0; b < static_cast<int>(p_.blocks.size()); ++b) {
      int x = b;
      while (x != body && x >= 0 && p_.blocks[static_cast<size_t>(x)].kind != BlockKind::loop_body)
        x = p_.blocks[static_cast<size_t>(x)].parent;
      if (x != body) continue;
      for (int s = 0; s < p_.blocks[static_cast<size_t>(b)].num_slots; ++s) out.push_back(Value::at(b, s));
    }
    return out;
  }

  void loop(int block, int depth) {
    Stmt s;
    s.kind = Stmt::Kind::loop;
    s.block = block;
    const int vars = pick(2, 3);
    s.init.push_back(chance(50) ? Value::of(pick(0, 1), block != 0 && chance(50)) : small(block, 1));
    for (int k = 1; k < vars; ++k) s.init.push_back(any(block));
    s.limit = chance(60) ? constant(block, 0, o_.max_trip) : small(block, o_.max_trip);
    s.step = pick(1, 2);
    const int r = pick(1, 100);
    s.pred = !o_.tf1_quirks || r <= 75 ? Pred::less : r <= 90 ? Pred::less_and : Pred::const_false;
    if (s.pred == Pred::less_and) {
      s.pred_var = pick(1, vars - 1);
      s.bound = any(block);
    }
    s.parallel_iterations = std::vector<int>{1, 2, 10}[static_cast<size_t>(pick(0, 2))];
    const bool variable = o_.variables && chance(12);
    if (variable) {
      s.variable = static_cast<int>(p_.variable_inits.size());
      p_.variable_inits.push_back(pick(-3, 5));
    }
    const int id = static_cast<int>(p_.stmts.size());
    add_stmt(s);
    const int body = new_block(BlockKind::loop_body, block, id);
    p_.stmts[static_cast<size_t>(id)].body = body;
    for (int k = 0; k < vars; ++k) add_slot(body, k == 0);
    if (variable) {
      // its addend is decided before the read: what the body sees at its start
      p_.stmts[static_cast<size_t>(id)].var_addend = any(body);
      add_slot(body, false);
      // updates in order: this loop and every loop around it run one
      // iteration at a time
      for (int b = block; b >= 0; b = p_.blocks[static_cast<size_t>(b)].parent)
        if (p_.blocks[static_cast<size_t>(b)].kind == BlockKind::loop_body)
          p_.stmts[static_cast<size_t>(p_.blocks[static_cast<size_t>(b)].owner)].parallel_iterations = 1;
      p_.stmts[static_cast<size_t>(id)].parallel_iterations = 1;
    }
    fill(body, depth, pick(0, 3));

    Stmt& l = p_.stmts[static_cast<size_t>(id)];
    l.next.resize(static_cast<size_t>(vars));
    const std::vector<Value> frame_slots = same_frame_slots(body);
    for (int k = 0; k < vars; ++k) {
      Next& n = l.next[static_cast<size_t>(k)];
      if (k > 0) {
        const int q = pick(1, 100);
        if (!o_.tf1_quirks || q <= 70) {
          std::vector<Value> own;
          for (int sl = 0; sl < p_.blocks[static_cast<size_t>(body)].num_slots; ++sl) own.push_back(Value::at(body, sl));
          n.value = own[static_cast<size_t>(pick(0, static_cast<int>(own.size()) - 1))];
        } else if (q <= 85) {
          // a loop invariant straight to the NextIteration
          std::vector<Value> outer = visible(block, false);
          n.value = outer.empty() ? constant(block, -3, 5) : outer[static_cast<size_t>(pick(0, static_cast<int>(outer.size()) - 1))];
        } else {
          n.value = Value::of(pick(-3, 5), true);  // a constant of the body
        }
      }
      if (o_.tf1_quirks && chance(15)) {
        const int c = pick(1, 2);
        for (int j = 0; j < c; ++j)
          n.control.push_back(frame_slots[static_cast<size_t>(pick(0, static_cast<int>(frame_slots.size()) - 1))]);
      }
    }
    std::vector<Value> own;
    for (const Value& v : visible(body, false)) own.push_back(v);
    l.tensor_array = o_.arrays && chance(10);
    if (l.tensor_array) l.ta_value = own[static_cast<size_t>(pick(0, static_cast<int>(own.size()) - 1))];
    l.stack = o_.arrays && chance(10);
    if (l.stack) {
      l.stack_value = own[static_cast<size_t>(pick(0, static_cast<int>(own.size()) - 1))];
      l.parallel_iterations = 1;  // pushes in iteration order
    }
    std::vector<bool> small(static_cast<size_t>(vars), false);
    small[0] = true;
    if (l.tensor_array) small.insert(small.end(), {true, false});
    if (l.stack) small.push_back(false);
    finish_outputs(id, small);
  }

  void cond(int block, int depth) {
    Stmt s;
    s.kind = Stmt::Kind::cond;
    s.block = block;
    s.lhs = any(block);
    s.rhs = any(block);
    const int id = static_cast<int>(p_.stmts.size());
    add_stmt(s);
    const int outputs = pick(1, 2);
    const int then_block = new_block(BlockKind::then_branch, block, id);
    fill(then_block, depth, pick(0, 2));
    std::vector<Value> then_out, else_out;
    for (int k = 0; k < outputs; ++k) then_out.push_back(any(then_block));
    const int else_block = new_block(BlockKind::else_branch, block, id);
    fill(else_block, depth, pick(0, 2));
    for (int k = 0; k < outputs; ++k) else_out.push_back(any(else_block));
    Stmt& c = p_.stmts[static_cast<size_t>(id)];
    c.then_block = then_block;
    c.else_block = else_block;
    c.then_out = std::move(then_out);
    c.else_out = std::move(else_out);
    finish_outputs(id, std::vector<bool>(static_cast<size_t>(outputs), false));
  }

  std::mt19937_64 rng_;
  GeneratorOptions o_;
  Program p_;
  std::vector<std::vector<SlotInfo>> info_;
  int budget_ = 0;
};

std::string value_text(const Program& p, const Value& v) {
  if (!v.is_slot()) return std::to_string(v.constant) + (v.local ? "'" : "");
  const Block& b = p.blocks[static_cast<size_t>(v.block)];
  (void)b;
  return fmt::format("b{}.{}", v.block, v.slot);
}

}  // namespace

Program random_program(uint64_t seed, const GeneratorOptions& options) { return Generator(seed, options).run(); }

int Program::loop_depth(int block) const {
  int d = 0;
  for (int b = block; b > 0; b = blocks[static_cast<size_t>(b)].parent)
    d += blocks[static_cast<size_t>(b)].kind == BlockKind::loop_body;
  return d;
}

bool Program::within(int inner, int outer) const {
  for (int b = inner; b >= 0; b = blocks[static_cast<size_t>(b)].parent)
    if (b == outer) return true;
  return false;
}

bool Program::alive(int s) const {
  const Stmt& st = stmts[static_cast<size_t>(s)];
  if (st.removed) return false;
  for (int b = st.block; b > 0; b = blocks[static_cast<size_t>(b)].parent)
    if (stmts[static_cast<size_t>(blocks[static_cast<size_t>(b)].owner)].removed) return false;
  return true;
}

int Program::size() const {
  int n = 0;
  for (int s = 0; s < static_cast<int>(stmts.size()); ++s) n += alive(s);
  return n;
}

int Program::total_loops() const {
  int n = 0;
  for (int s = 0; s < static_cast<int>(stmts.size()); ++s)
    n += alive(s) && stmts[static_cast<size_t>(s)].kind == Stmt::Kind::loop;
  return n;
}

std::string Program::describe() const {
  std::string out = "feeds:";
  for (size_t k = 0; k < feeds.size(); ++k) out += fmt::format(" b0.{}={}", k, feeds[k]);
  out += "\n";
  auto v = [&](const Value& x) { return value_text(*this, x); };
  std::function<void(int, int)> block = [&](int b, int indent) {
    const std::string pad(static_cast<size_t>(indent), ' ');
    for (int id : blocks[static_cast<size_t>(b)].stmts) {
      const Stmt& s = stmts[static_cast<size_t>(id)];
      if (s.removed) continue;
      std::string outs;
      for (int k = 0; k < s.num_outputs; ++k) outs += fmt::format("{}b{}.{}", k ? "," : "", s.block, s.first_slot + k);
      switch (s.kind) {
        case Stmt::Kind::compute:
          out += fmt::format("{}{} = {}({}, {})\n", pad, outs, s.op, v(s.a), v(s.b));
          break;
        case Stmt::Kind::cond:
          out += fmt::format("{}{} = cond {} < {}  [then b{}, else b{}]\n", pad, outs, v(s.lhs), v(s.rhs),
                             s.then_block, s.else_block);
          out += pad + " then:\n";
          block(s.then_block, indent + 2);
          out += pad + "  -> ";
          for (const Value& x : s.then_out) out += v(x) + " ";
          out += "\n" + pad + " else:\n";
          block(s.else_block, indent + 2);
          out += pad + "  -> ";
          for (const Value& x : s.else_out) out += v(x) + " ";
          out += "\n";
          break;
        case Stmt::Kind::loop: {
          std::string init;
          for (const Value& x : s.init) init += v(x) + " ";
          std::string pred = s.pred == Pred::const_false ? "false" : fmt::format("b{}.0 < {}", s.body, v(s.limit));
          if (s.pred == Pred::less_and) pred += fmt::format(" && b{}.{} < {}", s.body, s.pred_var, v(s.bound));
          out += fmt::format("{}{} = loop [body b{}] init {}while {} step {} p={}", pad, outs, s.body, init, pred,
                             s.step, s.parallel_iterations);
          if (s.tensor_array) out += " ta(" + v(s.ta_value) + ")";
          if (s.stack) out += " stack(" + v(s.stack_value) + ")";
          if (s.variable >= 0) out += fmt::format(" var{}+=({})", s.variable, v(s.var_addend));
          out += "\n";
          block(s.body, indent + 2);
          for (size_t k = 0; k < s.next.size(); ++k) {
            out += fmt::format("{}  next {} = {}", pad, k, k == 0 ? fmt::format("b{}.0 + {}", s.body, s.step)
                                                                : v(s.next[k].value));
            for (const Value& c : s.next[k].control) out += " ^" + v(c);
            out += "\n";
          }
          break;
        }
      }
    }
  };
  block(0, 0);
  out += "fetch:";
  for (const Value& f : fetches) out += " " + v(f);
  return out + "\n";
}

}  // namespace tagflow::difftest
