#include "actors/iteration_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "actors/function_runtime.hpp"
#include "ops/memory_budget.hpp"
#include "ops/resource.hpp"

namespace tagflow::actors {

namespace {

// pending_ of a node that has been made ready: later arrivals (possible only
// for a Merge) must not make it ready again.
constexpr int kFired = -(1 << 28);

// A Switch or LoopCond predicate is a scalar bool and a _SwitchN index a
// scalar int32 (TensorFlow's rule): element 0 of anything else is no answer.
Status check_scalar(const ops::Tensor& t, ops::DType want, const char* what) {
  if (ops::base_dtype(t.dtype()) == want && t.shape().is_scalar()) return ops::ok_status();
  return Status(ops::Error::invalid_argument,
                fmt::format("the {} must be a scalar {}, not {} of shape {}", what,
                            ops::dtype_name(want), ops::dtype_name(t.dtype()), t.shape().to_string()));
}

}  // namespace

void KernelBatch::compute(KernelJob& job) const {
  if (events_ != nullptr) job.start_ns = events_->now_ns();
  const NodeItem& item = *job.item;
  job.outputs.assign(static_cast<size_t>(item.num_outputs), ops::Tensor());
  ops::KernelContext kctx(job.inputs.data(), item.num_inputs, job.outputs.data(),
                          item.num_outputs, resources_, step_id_, memory_);
  kctx.allow_waiting(waiting);
  job.status = ops::run_kernel(*item.kernel, kctx);
  if (job.status.ok() && kctx.would_block())
    job.status = Status(ops::Error::internal, "the kernel would block where it may not");
  job.inputs.clear();
  if (events_ != nullptr) job.end_ns = events_->now_ns();
}

// Propagates the outputs of a computed job; `detail` tells the event stream
// where it ran.
Status IterationState::finish_job(const KernelBatch& batch, KernelJob& job) {
  --outstanding_jobs_;
  const NodeItem& item = *job.item;
  if (trace::Sink* sink = batch.events()) sink->record(trace::node_ran(at(), item.node_id, job.start_ns, job.end_ns - job.start_ns));
  if (!job.status.ok()) return node_error(item, job.status);
  for (int i = 0; i < item.num_outputs; ++i)
    if (!job.outputs[static_cast<size_t>(i)].valid())
      return node_error(item, Status(ops::Error::internal, fmt::format("kernel set no output {}", i)));
  Status s = propagate(item, job.outputs.data(), false);
  job.outputs.clear();
  return s;
}

Status IterationState::complete(KernelBatch& batch, const std::vector<int>& done) {
  for (int i : done)
    TF_RETURN_IF_ERROR(finish_job(batch, batch.jobs[static_cast<size_t>(i)]));
  return ops::ok_status();
}

void IterationState::reset(const Executable& exec, FrameId frame, Tag tag,
                           const StepContext& ctx) {
  ctx_ = &ctx;
  const FrameLayout& layout = exec.frame(frame);
  // A node empties its input slots when it runs: after an earlier use of the
  // same layout only the slots of nodes that never ran need emptying.
  if (exec_ == &exec && frame_ == frame && !has_ready() &&
      inputs_.size() == static_cast<size_t>(layout.num_input_slots)) {
    for (size_t local = 0; local < nodes_.size(); ++local) {
      if (nodes_[local].pending == kFired) continue;
      const NodeItem& item = exec.item(layout.items[local]);
      for (int i = 0; i < item.num_inputs; ++i) inputs_[static_cast<size_t>(item.input_start + i)] = ops::Tensor();
    }
  } else {
    inputs_.clear();
    inputs_.resize(static_cast<size_t>(layout.num_input_slots));
  }
  nodes_ = layout.initial_state;
  exec_ = &exec;
  frame_ = frame;
  tag_ = std::move(tag);
  ready_.clear();
  ready_expensive_.clear();
  for (int s : layout.sources) {
    nodes_[static_cast<size_t>(exec.item(s).local_id)].pending = kFired;
    make_ready(s);
  }
  batch_.reset();
  nodes_run_ = 0;
  outstanding_jobs_ = 0;
  transfers_missing_ = layout.num_recvs;
  partial_.clear();
  if (tag_.iteration() > 0)
    for (int enter : layout.enters_beyond_merges) deliver_dead_beyond_merges(exec.item(enter));
}

void IterationState::deliver_dead_beyond_merges(const NodeItem& enter) {
  for (const EdgeOut& e : enter.out_edges) {
    if (e.dst_merge) {
      // A Merge reads its forward inputs in iteration 0 only; a control
      // input it still waits for.
      if (e.dst_slot == graph::kControlPort) (void)activate_merge(e, nullptr, true);
      continue;
    }
    NodeState& st = nodes_[static_cast<size_t>(e.dst_local)];
    ++st.dead_count;
    if (--st.pending == 0) {
      st.pending = kFired;
      make_ready(e.dst);
    }
  }
}

void IterationState::make_ready(int item) {
  (exec_->item(item).expensive ? ready_expensive_ : ready_).push_back(item);
}

int IterationState::merge_expected_inputs(const NodeItem& item) const {
  if (item.merge_back_inputs == 0) return item.num_inputs;
  return iteration() == 0 ? item.merge_forward_inputs : item.merge_back_inputs;
}

// A value (or, for a control edge, only its deadness) reaching a Merge.
Status IterationState::activate_merge(const EdgeOut& e, ops::Tensor* value, bool dead) {
  NodeState& st = nodes_[static_cast<size_t>(e.dst_local)];
  int& pending = st.pending;
  if (e.dst_slot == graph::kControlPort) {
    if (pending != kFired) --pending;
  } else if (dead) {
    ++st.dead_count;
  } else {
    if (st.merge_live != 0) return ignore_merge_input(e, st.merge_live - 1);
    st.merge_live = e.dst_slot + 1;
    ops::Tensor& slot = inputs_[static_cast<size_t>(e.dst_input)];
    if (e.last_use) slot = std::move(*value);
    else slot = *value;
  }
  if (pending == kFired || pending > 0) return ops::ok_status();
  bool all_dead = st.dead_count >= merge_expected_inputs(exec_->item(e.dst));
  if (st.merge_live != 0 || all_dead) {
    pending = kFired;
    make_ready(e.dst);
  }
  return ops::ok_status();
}

// A second live input of a Merge in one tag: TensorFlow's executor forwards
// the first to arrive and ignores the rest (the value is dropped here); with
// strict-merge it is an error. Merges the partitioner makes to learn whether
// any of several values is live take the first by design.
Status IterationState::ignore_merge_input(const EdgeOut& e, int first) {
  const NodeItem& merge = exec_->item(e.dst);
  if (ctx_->strict_merge && !merge.merge_first_live)
    return Status(ops::Error::invalid_graph,
                  fmt::format("Merge '{}' got two live inputs (inputs {} and {}) at tag {} on "
                              "partition {} (strict-merge)",
                              merge.node->name, first, e.dst_slot, tag_.to_string(),
                              exec_->partition()));
  if (trace::Sink* sink = ctx_->events) sink->record(trace::merge_input_ignored(at(), merge.node_id, e.dst_slot, first));
  return ops::ok_status();
}

// The per-edge hot path: only the destination's counters and input slot are
// touched (EdgeOut carries where they are).
Status IterationState::propagate(const NodeItem& item, ops::Tensor* outputs, bool node_dead) {
  for (const EdgeOut& e : item.out_edges) {
    const bool control = e.src_port == graph::kControlPort;
    ops::Tensor* value = control ? nullptr : outputs + e.src_port;
    const bool dead = control ? node_dead : !value->valid();
    if (e.dst_merge) {
      TF_RETURN_IF_ERROR(activate_merge(e, value, dead));
      continue;
    }
    NodeState& st = nodes_[static_cast<size_t>(e.dst_local)];
    if (dead) {
      ++st.dead_count;
    } else if (!control) {
      ops::Tensor& slot = inputs_[static_cast<size_t>(e.dst_input)];
      if (e.borrow) slot = ops::Tensor::borrow(*value);
      else if (e.last_use) slot = std::move(*value);
      else slot = *value;
    }
    if (--st.pending == 0) {
      st.pending = kFired;
      (e.dst_expensive ? ready_expensive_ : ready_).push_back(e.dst);
    }
  }
  return ops::ok_status();
}

Status IterationState::deliver(int src_item, const ops::Tensor& value, bool dead) {
  ops::Tensor v = dead ? ops::Tensor() : value;
  return propagate(exec_->item(src_item), &v, dead);
}

Status IterationState::deliver_transfer(uint64_t key, ops::Tensor value, bool dead) {
  const int recv_item = exec_->recv_item(key);
  if (recv_item < 0 || exec_->item(recv_item).frame != frame_)
    return Status(ops::Error::internal,
                  fmt::format("a transfer for key {} at tag {} on partition {}: no _Recv of this "
                              "frame takes it",
                              exec_->transfer_name(key), tag_.to_string(), exec_->partition()));
  const NodeItem& item = exec_->item(recv_item);
  NodeState& st = nodes_[static_cast<size_t>(item.local_id)];
  ops::Tensor& slot = inputs_[static_cast<size_t>(item.input_start)];
  if (item.kind != NodeKind::recv || st.pending == kFired || slot.valid())
    return node_error(item, Status(ops::Error::internal,
                                   fmt::format("a second transfer for key '{}'", *item.transfer_key)));
  --transfers_missing_;
  if (dead) ++st.dead_count;
  else slot = std::move(value);
  if (--st.pending == 0) {
    st.pending = kFired;
    make_ready(recv_item);
  }
  return ops::ok_status();
}

Status IterationState::receive_transfer(TransferValue& v) {
  if (v.parts <= 1) return deliver_transfer(v.key, std::move(v.value), v.dead);
  return receive_part(v);
}

Status IterationState::receive_part(TransferValue& v) {
  const auto bad = [&](const std::string& what) {
    return Status(ops::Error::internal,
                  fmt::format("a transfer for key '{}' at tag {} on partition {}: {}", exec_->transfer_name(v.key),
                              tag_.to_string(), exec_->partition(), what));
  };
  auto it = std::find_if(partial_.begin(), partial_.end(), [&](const PartialTransfer& p) { return p.key == v.key; });
  if (it == partial_.end()) {
    PartialTransfer p;
    p.key = v.key;
    if (!v.fragment) {
      p.whole = v.value;  // every part of a transfer within the process is the whole tensor
    } else {
      try {
        ops::MemoryBudgetScope scope(ctx_->memory);
        p.whole = ops::Tensor::uninitialized(v.whole_dtype, v.whole_shape);
      } catch (const ops::MemoryLimitExceeded& e) {
        return Status(ops::Error::resource_exhausted,
                      fmt::format("a transfer for key '{}' at tag {} on partition {}: {}", exec_->transfer_name(v.key),
                                  tag_.to_string(), exec_->partition(), e.what()));
      }
    }
    if (!p.whole.valid() || ops::dtype_is_object(p.whole.dtype()) || v.parts != transfer_parts(p.whole.byte_size()))
      return bad(fmt::format("{} parts of a {} tensor", v.parts,
                             p.whole.valid() ? ops::dtype_name(p.whole.dtype()) + " " + p.whole.shape().to_string()
                                             : "dead"));
    p.seen.assign(v.parts, false);
    p.left = v.parts;
    partial_.push_back(std::move(p));
    it = std::prev(partial_.end());
  }
  PartialTransfer& p = *it;
  if (v.dead || v.parts != p.seen.size() || v.part >= v.parts || p.seen[v.part])
    return bad(fmt::format("part {} of {} does not fit the {} parts it continues, or came twice", v.part, v.parts,
                           p.seen.size()));
  const uint64_t at = uint64_t{v.part} * kTransferPartBytes;
  const uint64_t n = transfer_part_size(p.whole.byte_size(), v.part);
  if (v.fragment) {
    if (v.value.byte_size() != n) return bad(fmt::format("part {} has {} bytes, not {}", v.part, v.value.byte_size(), n));
    std::memcpy(static_cast<char*>(p.whole.raw_mutable_data()) + at, v.value.raw_data(), n);
  } else if (!v.value.shares_buffer_with(p.whole)) {
    return bad(fmt::format("part {} is not of the tensor its first part began", v.part));
  }
  p.seen[v.part] = true;
  if (--p.left > 0) return ops::ok_status();
  ops::Tensor whole = std::move(p.whole);
  partial_.erase(it);
  return deliver_transfer(v.key, std::move(whole), false);
}

trace::At IterationState::at() const {
  return trace::At{ctx_->step_id, ctx_->partition, tag_.frame_instance(), tag_.iteration()};
}

// The node's first dead data input and where it came from (a _Recv's
// transfer: no node, its key), or a dead control input.
void IterationState::trace_dead(const NodeItem& item, const ops::Tensor* in) const {
  int32_t input = -1, src = -1, src_port = -1;
  if (item.kind == NodeKind::recv) {
    input = 0;
  } else {
    // Every input of a dead Merge was dead: the forward one in iteration 0
    // (the first), the back edge (the last) after it.
    const bool merge = item.kind == NodeKind::merge;
    for (int k = 0; k < item.num_inputs; ++k) {
      const int i = merge && tag_.iteration() > 0 ? item.num_inputs - 1 - k : k;
      if (!merge && in[i].valid()) continue;
      input = i;
      const graph::Endpoint& from = item.node->inputs[static_cast<size_t>(i)];
      src = from.node;
      src_port = from.port;
      break;
    }
  }
  trace::Event e = trace::value_dead(at(), item.node_id, input, src, src_port);
  if (item.kind == NodeKind::recv) e.key = item.transfer_hash;
  ctx_->events->record(std::move(e));
}

Status IterationState::node_error(const NodeItem& item, const Status& s) const {
  // A functional op run as written says itself where its error happened.
  if (item.calls_function) return s;
  if (ctx_->chain != nullptr) {
    const IterationState& top = *ctx_->chain->top;
    return Status(s.code(), fmt::format("{} '{}' ({} → node '{}') at tag {} on partition {}: {}", item.node->op,
                                        item.node->name, to_string(*ctx_->chain), item.node->name,
                                        top.tag_.to_string(), top.exec_->partition(), s.message()))
        .saying_where();
  }
  return Status(s.code(), fmt::format("{} '{}' at tag {} on partition {}: {}", item.node->op,
                                      item.node->name, tag_.to_string(), exec_->partition(),
                                      s.message()))
      .saying_where();
}

// A variable read through a ref is read when its reader runs.
Status IterationState::read_refs(const StepContext& ctx, const NodeItem& item,
                                 ops::Tensor* in) const {
  for (int i : item.deref_inputs) {
    if (!in[i].valid()) continue;
    if (ctx.resources == nullptr)
      return node_error(item, Status(ops::Error::failed_precondition,
                                     "no session state to read a variable from"));
    auto value = ops::deref(in[i], *ctx.resources);
    if (!value.ok()) return node_error(item, value.status());
    in[i] = std::move(value).value();
  }
  return ops::ok_status();
}

// Moves every live ready expensive node into a new batch (dead ones stay
// ready: they only propagate deadness).
Status IterationState::make_batch(const StepContext& ctx, Outbox& out) {
  auto batch = std::make_shared<KernelBatch>(ctx.resources, ctx.step_id, ctx.events, ctx.memory);
  batch->iteration = tag_.iteration();
  size_t kept = 0;
  for (int i : ready_expensive_) {
    const NodeItem& item = exec_->item(i);
    if (nodes_[static_cast<size_t>(item.local_id)].dead_count > 0) {
      ready_expensive_[kept++] = i;
      continue;
    }
    ops::Tensor* in = inputs_.data() + item.input_start;
    TF_RETURN_IF_ERROR(read_refs(ctx, item, in));
    KernelJob& job = batch->jobs.emplace_back();
    job.item = &item;
    job.inputs.assign(std::make_move_iterator(in), std::make_move_iterator(in + item.num_inputs));
    for (int k = 0; k < item.num_inputs; ++k) in[k] = ops::Tensor();
    ++nodes_run_;
  }
  ready_expensive_.resize(kept);
  outstanding_jobs_ += static_cast<int>(batch->jobs.size());
  batch_ = batch;
  out.batches.push_back(std::move(batch));
  return ops::ok_status();
}

// A kernel that would block: its call moves, with its inputs, into a
// blocking batch of its own that the owner runs where it may wait.
Status IterationState::defer_blocking(const StepContext& ctx, const NodeItem& item, ops::Tensor* in,
                                      Outbox& out) {
  if (ctx.waiting == nullptr)
    return node_error(item, Status(ops::Error::failed_precondition,
                                   "the op would wait for another step, and a deterministic session "
                                   "runs one step at a time"));
  auto batch = std::make_shared<KernelBatch>(ctx.resources, ctx.step_id, ctx.events, ctx.memory);
  batch->iteration = tag_.iteration();
  batch->waiting = ctx.waiting;
  KernelJob& job = batch->jobs.emplace_back();
  job.item = &item;
  job.inputs.assign(std::make_move_iterator(in), std::make_move_iterator(in + item.num_inputs));
  for (int k = 0; k < item.num_inputs; ++k) in[k] = ops::Tensor();
  ++outstanding_jobs_;
  out.batches.push_back(std::move(batch));
  deferred_ = true;
  return ops::ok_status();
}

// Two or more live ready expensive nodes: worth a batch.
bool IterationState::batch_ready() const {
  int live = 0;
  for (int i : ready_expensive_)
    if (nodes_[static_cast<size_t>(exec_->item(i).local_id)].dead_count == 0 && ++live == 2)
      return true;
  return false;
}

Status IterationState::execute(const StepContext& ctx, const NodeItem& item, Outbox& out) {
  const size_t local = static_cast<size_t>(item.local_id);
  ops::Tensor* in = inputs_.data() + item.input_start;
  const bool any_dead = nodes_[local].dead_count > 0;
  if (outputs_.size() < static_cast<size_t>(item.num_outputs))
    outputs_.resize(static_cast<size_t>(item.num_outputs));
  ops::Tensor* outp = outputs_.data();
  bool node_dead = any_dead;
  if (!item.deref_inputs.empty()) TF_RETURN_IF_ERROR(read_refs(ctx, item, in));

  switch (item.kind) {
    case NodeKind::ordinary:
    case NodeKind::loop_cond:
      if (!any_dead) {
        if (item.kind == NodeKind::loop_cond) {
          Status p = check_scalar(in[0], ops::DType::boolean, "predicate");
          if (!p.ok()) return node_error(item, p);
          outp[0] = std::move(in[0]);
        } else {
          ops::KernelContext kctx(in, item.num_inputs, outp, item.num_outputs, ctx.resources,
                                  ctx.step_id, ctx.memory);
          const KernelCall call{&ctx, this, &item};
          if (item.calls_function) kctx.set_caller(&call);
          Status s = ops::run_kernel(*item.kernel, kctx);
          if (!s.ok()) return node_error(item, s);
          if (kctx.would_block()) return defer_blocking(ctx, item, in, out);
          for (int i = 0; i < item.num_outputs; ++i)
            if (!outp[i].valid())
              return node_error(item, Status(ops::Error::internal,
                                             fmt::format("kernel set no output {}", i)));
        }
      }
      break;
    case NodeKind::control_trigger:
      node_dead = false;
      break;
    case NodeKind::switch_op:
      if (!any_dead) {
        Status p = check_scalar(in[1], ops::DType::boolean, "predicate");
        if (!p.ok()) return node_error(item, p);
        outp[in[1].data<bool>()[0] ? 1 : 0] = std::move(in[0]);
      }
      break;
    case NodeKind::switch_n:
      if (!any_dead) {
        Status p = check_scalar(in[1], ops::DType::int32, "branch index");
        if (!p.ok()) return node_error(item, p);
        int64_t index = in[1].data<int32_t>()[0];
        if (index < 0 || index >= item.num_outputs) index = item.num_outputs - 1;
        outp[index] = std::move(in[0]);
      }
      break;
    case NodeKind::merge: {
      int chosen = nodes_[local].merge_live - 1;
      node_dead = chosen < 0;
      if (!node_dead) {
        outp[0] = std::move(in[chosen]);
        if (item.merge_index_used) outp[1] = ops::Tensor::scalar<int32_t>(chosen);
      }
      break;
    }
    case NodeKind::enter:
      out.enters.push_back({item.node_id, any_dead ? ops::Tensor() : std::move(in[0]), any_dead});
      break;
    case NodeKind::exit:
      out.exits.push_back({item.node_id, any_dead ? ops::Tensor() : std::move(in[0]), any_dead});
      break;
    case NodeKind::next_iteration:
      // A dead one starts no iteration but reaches the next one if another
      // value starts it (docs/semantics.md, "Every node runs in every iteration").
      out.next_iterations.push_back({item.node_id, any_dead ? ops::Tensor() : std::move(in[0]), any_dead});
      break;
    case NodeKind::arg:
      if (ctx.owned_feeds != nullptr) outp[0] = std::move((*ctx.owned_feeds)[static_cast<size_t>(item.index)]);
      else outp[0] = (*ctx.feeds)[static_cast<size_t>(item.index)];
      break;
    case NodeKind::retval:
      out.fetches.push_back({item.node_id, any_dead ? ops::Tensor() : std::move(in[0]), any_dead});
      break;
    case NodeKind::send:
      // A dead value is sent too: the Recv's iteration must not wait for it.
      out.sends.push_back({item.node_id, any_dead ? ops::Tensor() : std::move(in[0]), any_dead});
      break;
    case NodeKind::recv:
      if (!any_dead) outp[0] = std::move(in[0]);
      break;
  }
  if (ctx.events != nullptr) {
    if (node_dead) trace_dead(item, in);
    else if (item.kind == NodeKind::switch_op || item.kind == NodeKind::switch_n)
      for (int k = 0; k < item.num_outputs; ++k)
        if (outp[k].valid()) live_port_ = k;
  }
  // Release what the kernel did not take (a moved-from slot is already empty).
  for (int i = 0; i < item.num_inputs; ++i)
    if (in[i].valid()) in[i] = ops::Tensor();
  // Enter, Exit and NextIteration outputs are delivered where they go.
  if (item.kind == NodeKind::enter || item.kind == NodeKind::exit ||
      item.kind == NodeKind::next_iteration || item.kind == NodeKind::retval)
    return ops::ok_status();
  Status s = propagate(item, outp, node_dead);
  for (int i = 0; i < item.num_outputs; ++i)
    if (outp[i].valid()) outp[i] = ops::Tensor();
  return s;
}

Status IterationState::run(const StepContext& ctx, Outbox& out) {
  for (;;) {
    int i;
    if (!ready_.empty()) {
      i = ready_.back();
      ready_.pop_back();
    } else if (batch_ != nullptr) {
      // Compute what the workers have not claimed; their share comes back
      // through complete().
      int j = batch_->claim();
      if (j < 0) {
        batch_.reset();
        continue;
      }
      KernelBatch& batch = *batch_;
      KernelJob& job = batch.jobs[static_cast<size_t>(j)];
      batch.compute(job);
      TF_RETURN_IF_ERROR(finish_job(batch, job));
      continue;
    } else if (!ready_expensive_.empty()) {
      if (ctx.use_workers && batch_ready()) return make_batch(ctx, out);
      i = ready_expensive_.back();
      ready_expensive_.pop_back();
    } else {
      break;
    }
    const NodeItem& item = exec_->item(i);
    ++nodes_run_;
    if (ctx.events == nullptr) {
      TF_RETURN_IF_ERROR(execute(ctx, item, out));
      if (item.kind == NodeKind::next_iteration && !out.next_iterations.back().dead) break;
      continue;
    }
    int64_t start = ctx.events->now_ns();
    live_port_ = -1;
    deferred_ = false;
    Status s = execute(ctx, item, out);
    if (!deferred_) ctx.events->record(trace::node_ran(at(), item.node_id, start, ctx.events->now_ns() - start, live_port_));
    TF_RETURN_IF_ERROR(s);
    if (item.kind == NodeKind::next_iteration && !out.next_iterations.back().dead) break;
  }
  return ops::ok_status();
}

}  // namespace tagflow::actors
