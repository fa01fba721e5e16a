// FunctionRuntime and the kernels of the functional ops run as written
// (actors/function_runtime.hpp, docs/tf2.md "Running functional ops").
#include "actors/function_runtime.hpp"

#include <fmt/format.h>

#include <chrono>
#include <unordered_map>
#include <utility>

#include "graph/functions/body_graph.hpp"
#include "graph/functions/lowering.hpp"
#include "graph/validate.hpp"
#include "ops/op_def.hpp"
#include "ops/truth_value.hpp"

namespace tagflow::actors {

namespace {

using ops::Error;
using ops::NameAttrList;
using ops::Tensor;

using Kind = graph::FunctionalKind;

// A predicate's truth (ops::truth_value, as the lowered graph's ToBool
// takes it), an error naming it as the predicate.
Expected<bool> predicate_truth(const Tensor& t) {
  Expected<bool> truth = ops::truth_value(t);
  if (!truth.ok()) return truth.status().with_prefix("the predicate: ");
  return truth;
}

// Runs function bodies for one call of a functional kernel: the step
// context a body sees (the caller's, without events and workers) and the
// iteration states it reuses from one run to the next.
class BodyRunner {
 public:
  BodyRunner(const KernelCall& call, const CallChain* parent_chain, int64_t max_depth) : max_depth_(max_depth) {
    ctx_ = *call.step;
    ctx_.events = nullptr;
    ctx_.use_workers = false;
    ctx_.waiting = nullptr;
    ctx_.feeds = &args_;
    ctx_.owned_feeds = &args_;
    chain_.parent = parent_chain;
    chain_.node = &call.item->node->name;
    chain_.top = parent_chain != nullptr ? parent_chain->top : call.state;
    chain_.depth = parent_chain != nullptr ? parent_chain->depth + 1 : 1;
    ctx_.chain = &chain_;
  }

  std::vector<Tensor>& args() { return args_; }

  // Runs `body` (in `role`, at loop iteration `iteration` or -1) on args();
  // its results replace *rets.
  Status run(const FunctionRuntime::Body& body, const char* role, int64_t iteration, std::vector<Tensor>* rets,
             IterationState* state) {
    if (chain_.depth > max_depth_)  // the error's text only when it is one: this runs for every body run
      return StepGuard::check_frame_depth(chain_.depth, max_depth_,
                                          fmt::format("function '{}' run as written by node '{}'", body.name,
                                                      *chain_.node));
    chain_.role = role;
    chain_.function = &body.name;
    chain_.iteration = iteration;
    if (static_cast<int>(args_.size()) != body.num_args)
      return Status(Error::invalid_argument,
                    fmt::format("{} takes {} arguments, not {}", to_string(chain_), body.num_args, args_.size()));
    state->reset(*body.exec, graph::kRootFrame, Tag(), ctx_);
    rets->assign(static_cast<size_t>(body.num_rets), Tensor());
    // A body's results are its _Retvals' values; nothing else leaves it.
    struct Results : OutboxSink {
      const BodyRunner& runner;
      const FunctionRuntime::Body& body;
      std::vector<Tensor>& rets;
      int got = 0;
      Results(const BodyRunner& r, const FunctionRuntime::Body& b, std::vector<Tensor>& out)
          : runner(r), body(b), rets(out) {}
      Status drain(Outbox& out) {
        for (OutValue& v : out.fetches) {
          const NodeItem& item = body.exec->item(v.item);
          if (v.dead)
            return Status(Error::invalid_argument,
                          fmt::format("{} returns a dead value as result {} (its _Retval '{}'); a function's "
                                      "results must be live",
                                      to_string(runner.chain_), item.index, item.node->name));
          rets[static_cast<size_t>(item.index)] = std::move(v.value);
          ++got;
        }
        out.clear();
        return ops::ok_status();
      }
    } results(*this, body, *rets);
    TF_RETURN_IF_ERROR(state->run_until_idle(ctx_, out_, results));
    const int got = results.got;
    if (got != body.num_rets)
      return Status(Error::internal,
                    fmt::format("{} ended with {} of its {} results", to_string(chain_), got, body.num_rets));
    return ops::ok_status();
  }

  const CallChain& chain() const { return chain_; }

 private:
  int64_t max_depth_;
  StepContext ctx_;
  CallChain chain_;
  std::vector<Tensor> args_;
  Outbox out_;
};

// The error of a functional kernel, saying where: "While 'loop' (node
// 'outer' → body 'b' → node 'loop') at tag / on partition CPU:0: ...".
Status call_error(const KernelCall& call, const Status& s) {
  const graph::Node& n = *call.item->node;
  const CallChain* parent = call.step->chain;
  if (parent != nullptr) {
    const IterationState& top = *parent->top;
    return Status(s.code(), fmt::format("{} '{}' ({} → node '{}') at tag {} on partition {}: {}", n.op, n.name,
                                        to_string(*parent), n.name, top.tag().to_string(),
                                        top.executable().partition(), s.message()))
        .saying_where();
  }
  return Status(s.code(), fmt::format("{} '{}' at tag {} on partition {}: {}", n.op, n.name,
                                      call.state->tag().to_string(), call.state->executable().partition(),
                                      s.message()))
      .saying_where();
}

// The functions whose bodies this thread is building.
std::set<std::string>& building() {
  thread_local std::set<std::string> keys;
  return keys;
}

// Marks a function's body as being built on this thread for its lifetime.
class Building {
 public:
  explicit Building(std::string key) : key_(std::move(key)) { building().insert(key_); }
  ~Building() { building().erase(key_); }
  Building(const Building&) = delete;
  Building& operator=(const Building&) = delete;

 private:
  std::string key_;
};

// A functional op's kernel: resolves its functions' bodies on first use
// (so that a function calling itself does not instantiate forever) and
// runs them.
class FunctionalKernel final : public ops::Kernel {
 public:
  FunctionalKernel(const FunctionRuntime& runtime, graph::FunctionalOp op)
      : runtime_(runtime), kind_(op.kind), op_(std::move(op)) {}

  Status compute(ops::KernelContext& ctx) const override {
    const auto* call = dynamic_cast<const KernelCall*>(ctx.caller());
    if (call == nullptr)
      return Status(Error::failed_precondition, "a functional op run as written needs its executor's call");
    std::call_once(once_, [this] { resolve(); });
    if (!resolved_.ok()) return call_error(*call, resolved_);
    trace::Sink* events = call->step->events;
    const bool top = call->step->chain == nullptr;
    const int64_t start = events != nullptr && top ? events->now_ns() : 0;
    int32_t branch = -1;
    Status s = run(ctx, *call, &branch);
    if (events != nullptr && top)
      events->record(trace::call_done(call->state->at(), call->item->node_id, branch, events->now_ns() - start,
                                      s.ok() ? std::string() : s.message()));
    // A body node's error says where it happened (IterationState::node_error
    // or a nested call's call_error).
    if (s.ok() || s.says_where()) return s;
    return call_error(*call, s);
  }

 private:
  void resolve() const {
    for (const graph::FunctionalCallee& c : op_.callees) {
      auto b = runtime_.body(c.func);
      if (!b.ok()) {
        resolved_ = b.status().with_prefix(fmt::format("{} '{}': ", c.role, c.func.name));
        return;
      }
      bodies_.push_back(std::move(b).value());
    }
  }

  void started(const KernelCall& call, int32_t branch) const {
    trace::Sink* events = call.step->events;
    if (events != nullptr && call.step->chain == nullptr)
      events->record(trace::call_started(call.state->at(), call.item->node_id, branch));
  }

  Status finish(ops::KernelContext& ctx, std::vector<Tensor>& rets) const {
    if (static_cast<int>(rets.size()) != ctx.num_outputs())
      return Status(Error::invalid_argument,
                    fmt::format("the function returns {} values where the node has {} outputs", rets.size(),
                                ctx.num_outputs()));
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, std::move(rets[static_cast<size_t>(i)]));
    return ops::ok_status();
  }

  Status run(ops::KernelContext& ctx, const KernelCall& call, int32_t* branch) const {
    BodyRunner runner(call, call.step->chain, runtime_.options().max_depth);
    std::vector<Tensor>& args = runner.args();
    std::vector<Tensor> rets;
    IterationState state;
    switch (kind_) {
      case Kind::none: return Status(Error::internal, "not a functional op");
      case Kind::call:
      case Kind::partitioned_call: {
        started(call, -1);
        for (int i = 0; i < ctx.num_inputs(); ++i) args.push_back(ctx.take_input(i));
        TF_RETURN_IF_ERROR(runner.run(*bodies_[0], op_.callees[0].role.c_str(), -1, &rets, &state));
        return finish(ctx, rets);
      }
      case Kind::if_op: {
        auto p = predicate_truth(ctx.input(0));
        if (!p.ok()) return p.status().with_prefix("the predicate: ");
        *branch = *p ? 1 : 0;
        started(call, *branch);
        for (int i = 1; i < ctx.num_inputs(); ++i) args.push_back(ctx.take_input(i));
        const size_t b = *p ? 0 : 1;  // op_.callees: then_branch, else_branch
        TF_RETURN_IF_ERROR(runner.run(*bodies_[b], op_.callees[b].role.c_str(), -1, &rets, &state));
        return finish(ctx, rets);
      }
      case Kind::case_op: {
        const Tensor& index = ctx.input(0);
        if (ops::base_dtype(index.dtype()) != ops::DType::int32 || !index.shape().is_scalar())
          return Status(Error::invalid_argument,
                        fmt::format("the branch index must be a scalar int32, not {} of shape {}",
                                    ops::dtype_name(index.dtype()), index.shape().to_string()));
        int64_t b = index.data<int32_t>()[0];
        // TensorFlow's rule: an index out of range takes the last branch.
        if (b < 0 || b >= static_cast<int64_t>(bodies_.size())) b = static_cast<int64_t>(bodies_.size()) - 1;
        *branch = static_cast<int32_t>(b);
        started(call, *branch);
        for (int i = 1; i < ctx.num_inputs(); ++i) args.push_back(ctx.take_input(i));
        const auto k = static_cast<size_t>(b);
        TF_RETURN_IF_ERROR(runner.run(*bodies_[k], op_.callees[k].role.c_str(), -1, &rets, &state));
        return finish(ctx, rets);
      }
      case Kind::while_op: return run_while(ctx, call, runner, state);
      case Kind::for_op: return run_for(ctx, call, runner, state);
    }
    return ops::ok_status();
  }

  // A loop checks its iterations every time, and the step's deadline and
  // cancellation every StepGuard::kCheckEvery iterations, so that a step
  // that timed out does not run on.
  Status check_loop(const KernelCall& call, int64_t iteration) const {
    if (call.step->guard != nullptr) return call.step->guard->check_loop(iteration, "the loop");
    StepGuard guard;  // a body run outside a step of a partition: the session's limit only
    guard.step_id = call.step->step_id;
    guard.max_iterations = runtime_.options().max_iterations;
    return guard.check_loop(iteration, "the loop");
  }

  void iteration_event(const KernelCall& call, int64_t i, bool done) const {
    trace::Sink* events = call.step->events;
    if (events == nullptr || call.step->chain != nullptr) return;
    events->record(done ? trace::function_iteration_done(call.state->at(), call.item->node_id, i)
                        : trace::function_iteration_started(call.state->at(), call.item->node_id, i));
  }

  Status run_while(ops::KernelContext& ctx, const KernelCall& call, BodyRunner& runner, IterationState& state) const {
    started(call, -1);
    const FunctionRuntime::Body& cond = *bodies_[0];
    const FunctionRuntime::Body& body = *bodies_[1];
    std::vector<Tensor> vars;
    vars.reserve(static_cast<size_t>(ctx.num_inputs()));
    for (int i = 0; i < ctx.num_inputs(); ++i) vars.push_back(ctx.take_input(i));
    std::vector<Tensor> result;
    IterationState body_state;
    for (int64_t i = 0;; ++i) {
      TF_RETURN_IF_ERROR(check_loop(call, i));
      iteration_event(call, i, false);
      runner.args() = vars;
      TF_RETURN_IF_ERROR(runner.run(cond, "cond", i, &result, &state));
      if (result.size() != 1)
        return Status(Error::invalid_argument,
                      fmt::format("cond '{}' returns {} values; it must return one predicate", cond.name,
                                  result.size()));
      auto go = predicate_truth(result[0]);
      if (!go.ok()) return go.status().with_prefix(fmt::format("cond '{}': ", cond.name));
      if (!*go) {
        iteration_event(call, i, true);
        break;
      }
      runner.args() = std::move(vars);
      TF_RETURN_IF_ERROR(runner.run(body, "body", i, &vars, &body_state));
      iteration_event(call, i, true);
    }
    return finish(ctx, vars);
  }

  // For(start, limit, delta, vars...): body(i, vars...) for i from start
  // by delta while i < limit (delta > 0) or i > limit (delta < 0).
  Status run_for(ops::KernelContext& ctx, const KernelCall& call, BodyRunner& runner, IterationState& state) const {
    for (int k = 0; k < 3; ++k) {
      const Tensor& t = ctx.input(k);
      if (ops::base_dtype(t.dtype()) != ops::DType::int32 || !t.shape().is_scalar())
        return Status(Error::invalid_argument,
                      fmt::format("{} must be a scalar int32, not {} of shape {}",
                                  k == 0 ? "start" : k == 1 ? "limit" : "delta", ops::dtype_name(t.dtype()),
                                  t.shape().to_string()));
    }
    const int64_t start = ctx.input(0).data<int32_t>()[0];
    const int64_t limit = ctx.input(1).data<int32_t>()[0];
    const int64_t delta = ctx.input(2).data<int32_t>()[0];
    if (delta == 0)
      return Status(Error::invalid_argument, graph::for_zero_delta_message(call.item->node->name));
    started(call, -1);
    const FunctionRuntime::Body& body = *bodies_[0];
    std::vector<Tensor> vars;
    for (int i = 3; i < ctx.num_inputs(); ++i) vars.push_back(ctx.take_input(i));
    int64_t n = 0;
    for (int64_t i = start; delta > 0 ? i < limit : i > limit; i += delta, ++n) {
      TF_RETURN_IF_ERROR(check_loop(call, n));
      iteration_event(call, n, false);
      std::vector<Tensor>& args = runner.args();
      args.clear();
      args.push_back(Tensor::scalar<int32_t>(static_cast<int32_t>(i)));
      for (Tensor& v : vars) args.push_back(std::move(v));
      TF_RETURN_IF_ERROR(runner.run(body, "body", n, &vars, &state));
      iteration_event(call, n, true);
    }
    return finish(ctx, vars);
  }

  const FunctionRuntime& runtime_;
  Kind kind_;
  graph::FunctionalOp op_;
  mutable std::once_flag once_;
  mutable Status resolved_;
  mutable std::vector<std::shared_ptr<const FunctionRuntime::Body>> bodies_;
};

}  // namespace

std::string to_string(const CallChain& chain) {
  std::string here = fmt::format("node '{}' → {} '{}'", *chain.node, chain.role, *chain.function);
  if (chain.iteration >= 0) here += fmt::format(" (iteration {})", chain.iteration);
  return chain.parent != nullptr ? to_string(*chain.parent) + " → " + here : here;
}

FunctionRuntime::FunctionRuntime(const graph::Graph& whole, FunctionRuntimeOptions options)
    : whole_(whole), lib_(whole.library()), options_(options) {}

FunctionRuntime::~FunctionRuntime() = default;

bool FunctionRuntime::runs(const graph::Node& n) const { return graph::functional_kind(n, lib_) != Kind::none; }

Expected<std::unique_ptr<ops::Kernel>> FunctionRuntime::make(const graph::Node& n) const {
  auto op = graph::read_functional_op(n, lib_);
  if (!op.ok()) return op.status();
  if (op->kind == Kind::none)
    return Status(Error::internal, fmt::format("node '{}' ({}) is not a functional op", n.name, n.op));
  return std::unique_ptr<ops::Kernel>(new FunctionalKernel(*this, std::move(op).value()));
}

Expected<std::shared_ptr<const FunctionRuntime::Body>> FunctionRuntime::body(const NameAttrList& f) const {
  const std::string key = graph::function_instance_key(f);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = bodies_.find(key);
    if (it != bodies_.end()) return it->second;
  }
  const tensorflow::FunctionDef* def = lib_.find(f.name);
  if (def == nullptr)
    return Status(Error::not_found, fmt::format("no function '{}' in the graph's library", f.name));
  if (building().count(key) != 0)
    return Status(Error::invalid_argument, fmt::format("function '{}' calls itself", f.name));
  Building guard(key);
  TF_ASSIGN_OR_RETURN(graph::BodyGraph bg, graph::body_graph(lib_, f, whole_));
  auto built = std::make_shared<Body>();
  built->name = f.name;
  built->num_args = bg.num_args;
  built->num_rets = bg.num_rets;
  TF_ASSIGN_OR_RETURN(built->exec, Executable::build(std::move(bg.graph), "function '" + f.name + "'", this));
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = bodies_.emplace(key, std::move(built));
  return it->second;
}

}  // namespace tagflow::actors
