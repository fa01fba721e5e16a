#include "shrink.hpp"

#include <algorithm>

namespace tagflow::difftest {

namespace {

// f(value, is_control) for every operand of the program's live statements
// and its fetches; a control f returns false for is removed.
template <class F>
void for_each_value(Program& p, F f) {
  auto all = [&](std::vector<Value>& vs) {
    for (Value& v : vs) f(v, false);
  };
  for (Stmt& s : p.stmts) {
    if (s.removed) continue;
    f(s.a, false);
    f(s.b, false);
    all(s.init);
    f(s.limit, false);
    f(s.bound, false);
    for (Next& n : s.next) {
      f(n.value, false);
      n.control.erase(std::remove_if(n.control.begin(), n.control.end(), [&](Value& c) { return !f(c, true); }),
                      n.control.end());
    }
    f(s.ta_value, false);
    f(s.stack_value, false);
    f(s.var_addend, false);
    f(s.lhs, false);
    f(s.rhs, false);
    all(s.then_out);
    all(s.else_out);
  }
  p.fetches.erase(std::remove_if(p.fetches.begin(), p.fetches.end(), [&](Value& v) { return !f(v, true); }),
                  p.fetches.end());
}

bool block_alive(const Program& p, int b) {
  for (int x = b; x > 0; x = p.blocks[static_cast<size_t>(x)].parent)
    if (p.stmts[static_cast<size_t>(p.blocks[static_cast<size_t>(x)].owner)].removed) return false;
  return true;
}

bool slot_alive(const Program& p, int b, int s) {
  if (!block_alive(p, b)) return false;
  const Block& blk = p.blocks[static_cast<size_t>(b)];
  for (int id : blk.stmts) {
    const Stmt& st = p.stmts[static_cast<size_t>(id)];
    if (s >= st.first_slot && s < st.first_slot + st.num_outputs) return !st.removed;
  }
  return s < blk.num_slots;  // a feed or a loop variable
}

// Operands that read what no longer exists read 1; such controls and
// fetches go.
void sanitize(Program& p) {
  for_each_value(p, [&](Value& v, bool control) {
    if (!v.is_slot() || slot_alive(p, v.block, v.slot)) return true;
    if (control) return false;
    v = Value::of(1);
    return true;
  });
}

// Slots [first, first + count) of block b go; later ones move down.
void remove_slots(Program& p, int b, int first, int count) {
  for_each_value(p, [&](Value& v, bool control) {
    if (!v.is_slot() || v.block != b || v.slot < first) return true;
    if (v.slot >= first + count) {
      v.slot -= count;
      return true;
    }
    if (control) return false;
    v = Value::of(1);
    return true;
  });
  for (int id : p.blocks[static_cast<size_t>(b)].stmts) {
    Stmt& st = p.stmts[static_cast<size_t>(id)];
    if (st.first_slot >= first + count) st.first_slot -= count;
  }
  p.blocks[static_cast<size_t>(b)].num_slots -= count;
}

void drop_unused_variables(Program& p) {
  for (int k = static_cast<int>(p.variable_inits.size()) - 1; k >= 0; --k) {
    const bool used = std::any_of(p.stmts.begin(), p.stmts.end(),
                                  [&](const Stmt& s) { return !s.removed && s.variable == k; });
    if (used) continue;
    p.variable_inits.erase(p.variable_inits.begin() + k);
    for (Stmt& s : p.stmts)
      if (s.variable > k) --s.variable;
  }
}

Program finished(Program p) {
  sanitize(p);
  drop_unused_variables(p);
  return p;
}

}  // namespace

std::vector<Program> shrink_candidates(const Program& p) {
  std::vector<Program> out;
  const int n = static_cast<int>(p.stmts.size());
  // Whole statements, outermost (largest) first.
  std::vector<int> order;
  for (int s = 0; s < n; ++s)
    if (!p.stmts[static_cast<size_t>(s)].removed && block_alive(p, p.stmts[static_cast<size_t>(s)].block))
      order.push_back(s);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return p.loop_depth(p.stmts[static_cast<size_t>(a)].block) < p.loop_depth(p.stmts[static_cast<size_t>(b)].block);
  });
  for (int s : order) {
    Program q = p;
    q.stmts[static_cast<size_t>(s)].removed = true;
    out.push_back(finished(std::move(q)));
  }
  for (int s : order) {
    const Stmt& st = p.stmts[static_cast<size_t>(s)];
    if (st.kind != Stmt::Kind::loop) continue;
    const int vars = st.num_vars();
    if (st.stack) {
      Program q = p;
      Stmt& l = q.stmts[static_cast<size_t>(s)];
      remove_slots(q, l.block, l.first_slot + vars + (l.tensor_array ? 2 : 0), 1);
      l.stack = false;
      --l.num_outputs;
      out.push_back(finished(std::move(q)));
    }
    if (st.tensor_array) {
      Program q = p;
      Stmt& l = q.stmts[static_cast<size_t>(s)];
      remove_slots(q, l.block, l.first_slot + vars, 2);
      l.tensor_array = false;
      l.num_outputs -= 2;
      out.push_back(finished(std::move(q)));
    }
    if (st.variable >= 0) {
      Program q = p;
      Stmt& l = q.stmts[static_cast<size_t>(s)];
      remove_slots(q, l.body, vars, 1);
      l.variable = -1;
      out.push_back(finished(std::move(q)));
    }
    for (int k = vars - 1; k >= 1; --k) {
      Program q = p;
      Stmt& l = q.stmts[static_cast<size_t>(s)];
      remove_slots(q, l.block, l.first_slot + k, 1);
      remove_slots(q, l.body, k, 1);
      l.init.erase(l.init.begin() + k);
      l.next.erase(l.next.begin() + k);
      --l.num_outputs;
      if (l.pred == Pred::less_and && l.pred_var == k) l.pred = Pred::less;
      if (l.pred_var > k) --l.pred_var;
      out.push_back(finished(std::move(q)));
    }
  }
  // Fetches.
  for (size_t f = 0; p.fetches.size() > 1 && f < p.fetches.size(); ++f) {
    Program q = p;
    q.fetches.erase(q.fetches.begin() + static_cast<long>(f));
    out.push_back(std::move(q));
  }
  // Control inputs, predicates and steps.
  for (int s : order) {
    const Stmt& st = p.stmts[static_cast<size_t>(s)];
    for (size_t k = 0; k < st.next.size(); ++k)
      for (size_t c = 0; c < st.next[k].control.size(); ++c) {
        Program q = p;
        auto& cs = q.stmts[static_cast<size_t>(s)].next[k].control;
        cs.erase(cs.begin() + static_cast<long>(c));
        out.push_back(std::move(q));
      }
    if (st.kind == Stmt::Kind::loop && st.pred != Pred::less) {
      Program q = p;
      q.stmts[static_cast<size_t>(s)].pred = Pred::less;
      out.push_back(std::move(q));
    }
    if (st.kind == Stmt::Kind::loop && st.step != 1) {
      Program q = p;
      q.stmts[static_cast<size_t>(s)].step = 1;
      out.push_back(std::move(q));
    }
  }
  // Operands: a slot read as 1, a constant as 0 or 1, a local one as the
  // root's.
  int index = 0;
  Program probe = p;
  std::vector<int> slots, constants;
  for_each_value(probe, [&](Value& v, bool control) {
    if (!control) (v.is_slot() ? slots : constants).push_back(index);
    ++index;
    return true;
  });
  auto edit = [&](int target, const std::function<void(Value&)>& change) {
    Program q = p;
    int i = 0;
    for_each_value(q, [&](Value& v, bool) {
      if (i++ == target) change(v);
      return true;
    });
    return q;
  };
  for (int t : slots) out.push_back(edit(t, [](Value& v) { v = Value::of(1); }));
  for (int t : constants) {
    Value v;
    int i = 0;
    for_each_value(probe, [&](Value& x, bool) {
      if (i++ == t) v = x;
      return true;
    });
    if (v.local) out.push_back(edit(t, [](Value& x) { x.local = false; }));
    if (v.constant > 1 || v.constant < 0) out.push_back(edit(t, [](Value& x) { x.constant = 1; }));
    if (v.constant != 0) out.push_back(edit(t, [](Value& x) { x.constant = 0; }));
  }
  for (size_t f = 0; f < p.feeds.size(); ++f)
    if (p.feeds[f] != 0) {
      Program q = p;
      q.feeds[f] = 0;
      out.push_back(std::move(q));
    }
  return out;
}

namespace {

// The configurations a candidate is tried under: the one it last failed
// under first, then a few plain ones.
std::vector<RunConfig> probes(const RunConfig& last, Form form) {
  std::vector<RunConfig> out{last};
  for (int devices : {2, 3})
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      RunConfig c;
      c.devices = devices;
      c.seed = seed;
      c.lower = form == Form::tf2;
      c.mutant = last.mutant;
      out.push_back(c);
    }
  RunConfig threaded = last;
  threaded.deterministic = false;
  threaded.threads = 2;
  out.push_back(threaded);
  return out;
}

}  // namespace

ShrinkResult shrink(const Program& p, Form form, const RunConfig& failing, const ShrinkOptions& options) {
  ShrinkResult r;
  r.program = p;
  r.config = failing;
  // Whether q disagrees under some probe; sets r's config and outcomes.
  auto disagrees = [&](const Program& q, std::vector<RunConfig> configs) {
    auto e = emit(q, form);
    if (!e.ok()) return false;
    const Outcome reference = run_once(*e, reference_config(), options.limits);
    if (!usable_reference(reference)) return false;
    for (const RunConfig& c : configs) {
      Outcome got = run_once(*e, c, options.limits);
      if (!agree(reference, got)) {
        r.config = c;
        r.reference = reference;
        r.got = std::move(got);
        return true;
      }
    }
    return false;
  };
  if (!disagrees(p, probes(failing, form))) return r;  // not reproducible: keep it as it is
  bool progress = true;
  while (progress && r.tried < options.max_candidates) {
    progress = false;
    for (Program& q : shrink_candidates(r.program)) {
      if (r.tried >= options.max_candidates) break;
      ++r.tried;
      if (disagrees(q, probes(r.config, form))) {
        r.program = std::move(q);
        ++r.kept;
        progress = true;
        break;
      }
    }
  }
  // A plainer configuration that still disagrees.
  for (int step = 0; step < 3; ++step) {
    RunConfig c = r.config;
    if (step == 0 && c.devices > 2) c.devices = 2;
    else if (step == 1 && !c.deterministic) c.deterministic = true;
    else if (step == 2 && c.no_shortcuts) c.no_shortcuts = false;
    else continue;
    disagrees(r.program, {c});
  }
  return r;
}

}  // namespace tagflow::difftest
