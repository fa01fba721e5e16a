// Kernels of the FIFOQueueV2 family (TensorFlow's data_flow_ops.cc):
// FIFOQueueV2 finds or makes its queue in the ResourceManager and outputs
// a handle naming it; the other ops take that handle. Enqueue and dequeue
// may block (Kernel::may_block): called without a Waiting they never wait
// but report would_block, and the executor runs them again where they may
// (docs/protocol.md, "Kernels that block"). The ops' `timeout_ms` is
// accepted and, as in TensorFlow, not supported: the step's own timeout
// bounds every wait.
#include <algorithm>

#include "ops/index_args.hpp"
#include "ops/resource.hpp"
#include "ops/state_kernels.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops::state_kernels {

namespace {

using Tuple = FifoQueue::Tuple;

Expected<std::shared_ptr<FifoQueue>> queue_of(const KernelContext& ctx, ResourceManager* rm) {
  TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "queue handle"));
  return rm->queue(name);
}

std::string types_text(const DTypes& types) {
  std::string s = "[";
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + dtype_name(types[i]);
  return s + "]";
}

// The component types a dequeue node declares must be the queue's.
Status check_types(const FifoQueue& q, const DTypes& declared) {
  const DTypes& have = q.component_types();
  if (have.size() == declared.size() && std::equal(have.begin(), have.end(), declared.begin()))
    return ok_status();
  return Status(Error::invalid_argument, "the node's component types " + types_text(declared) +
                                             " are not those of FIFOQueue '" + q.name() + "' " + types_text(have));
}

class FifoQueueKernel final : public Kernel {
 public:
  FifoQueueKernel(std::string name, DTypes types, std::vector<PartialShape> shapes, int64_t capacity)
      : name_(std::move(name)), types_(std::move(types)), shapes_(std::move(shapes)), capacity_(capacity) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 0, 1));
    TF_ASSIGN_OR_RETURN(auto q, rm->create_queue(name_, types_, shapes_, capacity_));
    ctx.set_output(0, make_handle(q->name()));
    return ok_status();
  }

 private:
  std::string name_;
  DTypes types_;
  std::vector<PartialShape> shapes_;
  int64_t capacity_;
};

// One element of every component: row `i` of each (EnqueueMany), or the
// components themselves.
Expected<Tuple> row(const KernelContext& ctx, int64_t i) {
  Tuple t;
  for (int c = 1; c < ctx.num_inputs(); ++c) {
    const Tensor& x = ctx.input(c);
    std::vector<int64_t> dims = x.shape().dims();
    dims.erase(dims.begin());
    TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(dims));
    TF_ASSIGN_OR_RETURN(Tensor r, allocate_uninitialized(x.dtype(), shape));
    const int64_t n = shape.num_elements();
    if (n > 0) copy_elements(x, i * n, r, 0, n);
    t.push_back(std::move(r));
  }
  return t;
}

class EnqueueKernel final : public Kernel {
 public:
  explicit EnqueueKernel(bool many) : many_(many) {}
  bool may_block() const override { return true; }

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, ctx.num_inputs(), 0));
    TF_ASSIGN_OR_RETURN(auto q, queue_of(ctx, rm));
    std::vector<Tuple> elements;
    if (!many_) {
      Tuple t;
      for (int c = 1; c < ctx.num_inputs(); ++c) t.push_back(ctx.input(c));
      TF_RETURN_IF_ERROR(q->check_element(t));
      elements.push_back(std::move(t));
    } else {
      TF_ASSIGN_OR_RETURN(int64_t n, batch_size(ctx, *q));
      for (int64_t i = 0; i < n; ++i) {
        TF_ASSIGN_OR_RETURN(Tuple t, row(ctx, i));
        TF_RETURN_IF_ERROR(q->check_element(t));
        elements.push_back(std::move(t));
      }
    }
    bool would_block = false;
    TF_RETURN_IF_ERROR(q->enqueue(elements, ctx.waiting(), &would_block));
    if (would_block) ctx.set_would_block();
    return ok_status();
  }

 private:
  // The common first dimension of the components of an EnqueueMany.
  static Expected<int64_t> batch_size(const KernelContext& ctx, const FifoQueue& q) {
    if (ctx.num_inputs() - 1 != q.num_components())
      return Status(Error::invalid_argument, "FIFOQueue '" + q.name() + "' takes elements of " +
                                                 std::to_string(q.num_components()) + " components, got " +
                                                 std::to_string(ctx.num_inputs() - 1));
    int64_t n = -1;
    for (int c = 1; c < ctx.num_inputs(); ++c) {
      const Shape& s = ctx.input(c).shape();
      if (s.rank() == 0)
        return Status(Error::invalid_argument, "component " + std::to_string(c - 1) +
                                                   " of an EnqueueMany is a scalar: it needs a first dimension");
      if (n >= 0 && s.dim(0) != n)
        return Status(Error::invalid_argument,
                      "the components of an EnqueueMany differ in their first dimension (" + std::to_string(n) +
                          " and " + std::to_string(s.dim(0)) + ")");
      n = s.dim(0);
    }
    return n;
  }

  bool many_;
};

// Stacks `n` elements' component c into one tensor of shape [n, ...].
Expected<Tensor> stack(const std::vector<Tuple>& elements, size_t c, const std::string& queue) {
  const Tensor& first = elements.front()[c];
  std::vector<int64_t> dims = first.shape().dims();
  dims.insert(dims.begin(), static_cast<int64_t>(elements.size()));
  TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(dims));
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(first.dtype(), shape));
  const int64_t n = first.num_elements();
  for (size_t i = 0; i < elements.size(); ++i) {
    const Tensor& x = elements[i][c];
    if (x.shape() != first.shape())
      return Status(Error::invalid_argument,
                    "a DequeueMany from FIFOQueue '" + queue + "' took elements whose component " + std::to_string(c) +
                        " differs in shape (" + first.shape().to_string() + " and " + x.shape().to_string() +
                        "); give the queue its shapes");
    if (n > 0) copy_elements(x, 0, out, static_cast<int64_t>(i) * n, n);
  }
  return out;
}

class DequeueKernel final : public Kernel {
 public:
  DequeueKernel(DTypes types, bool many) : types_(std::move(types)), many_(many) {}
  bool may_block() const override { return true; }

  Status compute(KernelContext& ctx) const override {
    const int inputs = many_ ? 2 : 1;
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, inputs, static_cast<int>(types_.size())));
    TF_ASSIGN_OR_RETURN(auto q, queue_of(ctx, rm));
    TF_RETURN_IF_ERROR(check_types(*q, types_));
    int64_t n = 1;
    if (many_) {
      TF_ASSIGN_OR_RETURN(n, read_int_scalar(ctx.input(1), "n"));
      if (n < 0)
        return Status(Error::invalid_argument, "a DequeueMany of " + std::to_string(n) + " elements from FIFOQueue '" +
                                                   q->name() + "': n must be >= 0");
    }
    std::vector<Tuple> elements;
    bool would_block = false;
    TF_RETURN_IF_ERROR(q->dequeue(n, ctx.waiting(), &would_block, &elements));
    if (would_block) {
      ctx.set_would_block();
      return ok_status();
    }
    if (!many_) {
      for (size_t c = 0; c < types_.size(); ++c) ctx.set_output(static_cast<int>(c), std::move(elements[0][c]));
      return ok_status();
    }
    if (n == 0) return Status(Error::unimplemented, "a DequeueMany of 0 elements (the component shapes are unknown)");
    for (size_t c = 0; c < types_.size(); ++c) {
      TF_ASSIGN_OR_RETURN(Tensor t, stack(elements, c, q->name()));
      ctx.set_output(static_cast<int>(c), std::move(t));
    }
    return ok_status();
  }

 private:
  DTypes types_;
  bool many_;
};

class QueueCloseKernel final : public Kernel {
 public:
  explicit QueueCloseKernel(bool cancel) : cancel_(cancel) {}
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 0));
    TF_ASSIGN_OR_RETURN(auto q, queue_of(ctx, rm));
    q->close(cancel_);
    return ok_status();
  }

 private:
  bool cancel_;
};

Expected<std::vector<PartialShape>> shapes_attr(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(AttrList shapes, init.attr<AttrList>("shapes"));
  TF_ASSIGN_OR_RETURN(AttrList types, init.attr<AttrList>("component_types"));
  if (!shapes.shape.empty() && shapes.shape.size() != types.type.size())
    return Status(Error::invalid_argument, "attr 'shapes' has " + std::to_string(shapes.shape.size()) +
                                               " shapes for " + std::to_string(types.type.size()) +
                                               " component types");
  return shapes.shape;
}

}  // namespace

Made fifo_queue(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(AttrList types, init.attr<AttrList>("component_types"));
  TF_ASSIGN_OR_RETURN(std::vector<PartialShape> shapes, shapes_attr(init));
  TF_ASSIGN_OR_RETURN(int64_t capacity, init.attr<int64_t>("capacity"));
  TF_ASSIGN_OR_RETURN(std::string container, init.attr<std::string>("container"));
  TF_ASSIGN_OR_RETURN(std::string shared_name, init.attr<std::string>("shared_name"));
  if (capacity == 0)
    return Status(Error::invalid_argument, "attr 'capacity' is 0: a queue must hold at least one element (-1: unbounded)");
  std::string name = shared_name.empty() ? init.node_name : shared_name;
  if (!container.empty()) name = container + "/" + name;
  return std::unique_ptr<Kernel>(new FifoQueueKernel(std::move(name), DTypes(types.type), std::move(shapes),
                                                     capacity < 0 ? -1 : capacity));
}

Made queue_enqueue(const KernelInit&) { return std::unique_ptr<Kernel>(new EnqueueKernel(false)); }
Made queue_enqueue_many(const KernelInit&) { return std::unique_ptr<Kernel>(new EnqueueKernel(true)); }

Made queue_dequeue(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(AttrList types, init.attr<AttrList>("component_types"));
  return std::unique_ptr<Kernel>(new DequeueKernel(DTypes(types.type), false));
}

Made queue_dequeue_many(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(AttrList types, init.attr<AttrList>("component_types"));
  return std::unique_ptr<Kernel>(new DequeueKernel(DTypes(types.type), true));
}

Made queue_close(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(bool cancel, init.attr<bool>("cancel_pending_enqueues"));
  return std::unique_ptr<Kernel>(new QueueCloseKernel(cancel));
}

Status queue_size(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 1));
  TF_ASSIGN_OR_RETURN(auto q, queue_of(ctx, rm));
  ctx.set_output(0, Tensor::scalar<int32_t>(static_cast<int32_t>(q->size())));
  return ok_status();
}

Status queue_is_closed(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 1));
  TF_ASSIGN_OR_RETURN(auto q, queue_of(ctx, rm));
  ctx.set_output(0, Tensor::scalar<bool>(q->is_closed()));
  return ok_status();
}

}  // namespace tagflow::ops::state_kernels
