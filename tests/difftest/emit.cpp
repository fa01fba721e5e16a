// The forms of a Program (emit.hpp): the GraphDef forms through
// emit_text.cpp and the import, the builder forms through GraphBuilder.
#include "emit.hpp"

#include <fmt/format.h>

#include <functional>
#include <map>

#include "graph/builder/builder.hpp"
#include "graph/io/import.hpp"

namespace tagflow::difftest {

std::vector<std::string> text_fetches(const Program& p, Form form);  // emit_text.cpp

namespace {

using graph::GraphBuilder;
using graph::NodeOptions;
using graph::Output;
using ops::DType;

const ops::PartialShape kScalar{false, {}};

class BuilderWriter {
 public:
  BuilderWriter(const Program& p, Form form)
      : p_(p), b_(form == Form::tf2 ? GraphBuilder::Style::tf2 : GraphBuilder::Style::tf1) {}

  ops::Expected<Emitted> write() {
    Emitted e;
    for (size_t k = 0; k < p_.feeds.size(); ++k) {
      env_[{0, static_cast<int>(k)}] = b_.placeholder(DType::int32, kScalar, fmt::format("f{}", k));
      e.feeds.emplace_back(fmt::format("f{}", k), ops::Tensor::scalar<int32_t>(p_.feeds[k]));
    }
    for (size_t k = 0; k < p_.variable_inits.size(); ++k) {
      const std::string v = fmt::format("var{}", k);
      variables_.push_back(b_.op1("VarHandleOp", {},
                                  {{"dtype", DType::int32}, {"shape", kScalar}, {"shared_name", v}}, v));
      b_.op("AssignVariableOp", {variables_.back(), b_.scalar<int32_t>(p_.variable_inits[k])},
            {{"dtype", DType::int32}}, v + "/init");
      e.inits.push_back(v + "/init");
    }
    block(0);
    for (const Value& f : p_.fetches) e.fetches.push_back(env_.at({f.block, f.slot}).name());
    TF_ASSIGN_OR_RETURN(e.graph, b_.finish());
    return e;
  }

 private:
  const Stmt& stmt(int s) const { return p_.stmts[static_cast<size_t>(s)]; }

  Output value(const Value& v) {
    if (!v.is_slot()) return b_.scalar<int32_t>(v.constant);
    return env_.at({v.block, v.slot});
  }
  Output wrap(Output x) { return b_.floor_mod(x, b_.scalar<int32_t>(kModulus)); }

  void block(int b) {
    for (int s : p_.blocks[static_cast<size_t>(b)].stmts) {
      const Stmt& st = stmt(s);
      if (st.removed) continue;
      switch (st.kind) {
        case Stmt::Kind::compute: compute(st); break;
        case Stmt::Kind::loop: loop(s); break;
        case Stmt::Kind::cond: cond(s); break;
      }
    }
  }

  void compute(const Stmt& st) {
    Output a = value(st.a), c = value(st.b), r;
    if (st.op == "Add") r = wrap(b_.add(a, c));
    else if (st.op == "Sub") r = wrap(b_.sub(a, c));
    else if (st.op == "Maximum") r = b_.maximum(a, c);
    else r = b_.minimum(a, c);
    env_[{st.block, st.first_slot}] = r;
  }

  void cond(int s) {
    const Stmt& st = stmt(s);
    auto branch = [&](int blk, const std::vector<Value>& outs) {
      return [this, blk, &outs] {
        block(blk);
        std::vector<Output> r;
        for (const Value& v : outs) r.push_back(value(v));
        return r;
      };
    };
    graph::Outputs out = b_.cond(b_.less(value(st.lhs), value(st.rhs)), branch(st.then_block, st.then_out),
                                 branch(st.else_block, st.else_out), fmt::format("C{}", s));
    for (size_t k = 0; k < st.then_out.size(); ++k)
      env_[{st.block, st.first_slot + static_cast<int>(k)}] = out.empty() ? Output{} : out[k];
  }

  void loop(int s) {
    const Stmt& st = stmt(s);
    const int n = st.num_vars();
    std::vector<Output> init;
    for (const Value& v : st.init) init.push_back(value(v));
    Output ta_handle, stack;
    if (st.tensor_array) {
      graph::Outputs ta = b_.op("TensorArrayV3", {b_.scalar<int32_t>(0)},
                                {{"dtype", DType::int32}, {"element_shape", kScalar}, {"dynamic_size", true},
                                 {"clear_after_read", false}, {"identical_element_shapes", true}},
                                fmt::format("L{}/ta", s));
      if (ta.size() < 2) return;
      ta_handle = ta[0];
      init.push_back(ta[1]);
    }
    if (st.stack)
      stack = b_.op1("StackV2", {b_.scalar<int32_t>(-1)},
                     {{"elem_type", DType::int32}, {"stack_name", fmt::format("L{}/stack", s)}},
                     fmt::format("L{}/stack", s));
    const bool counted = st.tensor_array || st.stack;
    if (counted) init.push_back(b_.scalar<int32_t>(0));
    const int flow = st.tensor_array ? n : -1, count = counted ? static_cast<int>(init.size()) - 1 : -1;

    graph::WhileOptions o;
    o.parallel_iterations = st.parallel_iterations;
    o.name = fmt::format("L{}", s);
    auto cond_fn = [&](const std::vector<Output>& v) {
      if (st.pred == Pred::const_false) return b_.scalar<bool>(false);
      Output less = b_.less(v[0], value(st.limit));
      if (st.pred == Pred::less) return less;
      return b_.logical_and(less, b_.less(v[static_cast<size_t>(st.pred_var)], value(st.bound)));
    };
    auto body_fn = [&](const std::vector<Output>& v) {
      for (int k = 0; k < n; ++k) env_[{st.body, k}] = v[static_cast<size_t>(k)];
      if (st.variable >= 0) {
        Output h = variables_[static_cast<size_t>(st.variable)];
        graph::Outputs assign = b_.op("AssignAddVariableOp", {h, wrap(value(st.var_addend))},
                                      {{"dtype", DType::int32}});
        NodeOptions after;
        after.control_inputs = {assign.control()};
        env_[{st.body, n}] = b_.op1("ReadVariableOp", {h}, {{"dtype", DType::int32}}, after);
      }
      block(st.body);
      std::vector<Output> next{b_.add(v[0], b_.scalar<int32_t>(st.step))};
      for (int k = 1; k < n; ++k) next.push_back(value(st.next[static_cast<size_t>(k)].value));
      if (st.tensor_array)
        next.push_back(b_.op1("TensorArrayWriteV3",
                              {ta_handle, v[static_cast<size_t>(count)], value(st.ta_value), v[static_cast<size_t>(flow)]}));
      if (counted) {
        NodeOptions after;
        if (st.stack)
          after.control_inputs = {b_.op1("StackPushV2", {stack, value(st.stack_value)}, {{"swap_memory", false}})};
        next.push_back(b_.add(v[static_cast<size_t>(count)], b_.scalar<int32_t>(1), after));
      }
      return next;
    };
    graph::Outputs out = b_.while_loop(cond_fn, body_fn, init, o);
    if (out.size() != init.size()) return;  // the builder's error is kept
    for (int k = 0; k < n; ++k) env_[{st.block, st.first_slot + k}] = out[static_cast<size_t>(k)];
    int slot = st.first_slot + n;
    if (st.tensor_array) {
      Output size = b_.op1("TensorArraySizeV3", {ta_handle, out[static_cast<size_t>(flow)]});
      Output gather = b_.op1("TensorArrayGatherV3",
                             {ta_handle, b_.range(b_.scalar<int32_t>(0), size, b_.scalar<int32_t>(1)),
                              out[static_cast<size_t>(flow)]},
                             {{"dtype", DType::int32}, {"element_shape", kScalar}});
      env_[{st.block, slot++}] = size;
      env_[{st.block, slot++}] = b_.reduce_sum(gather, b_.scalar<int32_t>(0));
    }
    if (st.stack) env_[{st.block, slot++}] = pop_loop(s, stack, out[static_cast<size_t>(count)]);
  }

  Output pop_loop(int s, Output stack, Output count) {
    graph::WhileOptions o;
    o.parallel_iterations = 1;
    o.name = fmt::format("L{}_pop", s);
    graph::Outputs out = b_.while_loop(
        [&](const std::vector<Output>& v) { return b_.less(v[0], count); },
        [&](const std::vector<Output>& v) {
          NodeOptions gated;
          gated.control_inputs = {v[0]};
          Output pop = b_.op1("StackPopV2", {stack}, {{"elem_type", DType::int32}}, gated);
          return std::vector<Output>{b_.add(v[0], b_.scalar<int32_t>(1)), wrap(b_.sub(b_.add(v[1], v[1]), pop))};
        },
        {b_.scalar<int32_t>(0), b_.scalar<int32_t>(0)}, o);
    return out.size() == 2 ? out[1] : Output{};
  }

  const Program& p_;
  GraphBuilder b_;
  std::map<std::pair<int, int>, Output> env_;
  std::vector<Output> variables_;
};

}  // namespace

const char* form_name(Form f) {
  switch (f) {
    case Form::tf1: return "tf1";
    case Form::any_level: return "any-level";
    case Form::builder: return "builder";
    case Form::tf2: return "tf2";
  }
  return "?";
}

bool parse_form(const std::string& text, Form* out) {
  for (Form f : {Form::tf1, Form::any_level, Form::builder, Form::tf2})
    if (text == form_name(f)) {
      *out = f;
      return true;
    }
  return false;
}

ops::Expected<Emitted> emit(const Program& p, Form form) {
  if (form == Form::builder || form == Form::tf2) return BuilderWriter(p, form).write();
  Emitted e;
  TF_ASSIGN_OR_RETURN(e.graph, graph::import_graph_text(emit_text(p, form)));
  for (size_t k = 0; k < p.feeds.size(); ++k)
    e.feeds.emplace_back(fmt::format("f{}", k), ops::Tensor::scalar<int32_t>(p.feeds[k]));
  for (size_t k = 0; k < p.variable_inits.size(); ++k) e.inits.push_back(fmt::format("var{}/init", k));
  e.fetches = text_fetches(p, form);
  return e;
}

}  // namespace tagflow::difftest
