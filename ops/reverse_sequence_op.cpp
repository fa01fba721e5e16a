// ReverseSequence(input, seq_lengths; seq_dim, batch_dim): for each index b
// along batch_dim, the first seq_lengths[b] slices along seq_dim in reverse
// order, the rest as they were — the reversal a bidirectional RNN's
// backward pass needs. Checks as TensorFlow's kernel: the dims differ and
// are in range, one length per batch entry, each in [0, size of seq_dim].
// Elements move in runs (ops/tensor_copy.hpp), so every dtype works.
// Signature follows TensorFlow's core/ops/array_ops.cc.
#include <algorithm>
#include <string>

#include "ops/array_ops.hpp"
#include "ops/index_args.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

int64_t product(const Shape& s, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= s.dim(i);
  return n;
}

class ReverseSequenceKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(seq_dim_, init.attr<int64_t>("seq_dim"));
    TF_ASSIGN_OR_RETURN(batch_dim_, init.attr<int64_t>("batch_dim"));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& in = ctx.input(0);
    const Tensor& lengths = ctx.input(1);
    TF_ASSIGN_OR_RETURN(int seq, canonical_axis(seq_dim_, in.rank(), "ReverseSequence seq_dim"));
    TF_ASSIGN_OR_RETURN(int batch,
                        canonical_axis(batch_dim_, in.rank(), "ReverseSequence batch_dim"));
    if (seq == batch)
      return Status(Error::invalid_argument, "ReverseSequence: batch_dim == seq_dim == " +
                                                 std::to_string(seq));
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> len,
                        read_int_vector(lengths, "ReverseSequence seq_lengths"));
    if (static_cast<int64_t>(len.size()) != in.dim(batch))
      return Status(Error::invalid_argument,
                    "ReverseSequence: seq_lengths has " + std::to_string(len.size()) +
                        " entries but dimension " + std::to_string(batch) + " of input " +
                        in.shape().to_string() + " has " + std::to_string(in.dim(batch)));
    for (size_t b = 0; b < len.size(); ++b)
      if (len[b] < 0 || len[b] > in.dim(seq))
        return Status(Error::invalid_argument,
                      "ReverseSequence: seq_lengths[" + std::to_string(b) + "] = " +
                          std::to_string(len[b]) + " is not in [0, " +
                          std::to_string(in.dim(seq)) + "], the size of dimension " +
                          std::to_string(seq) + " of input " + in.shape().to_string());
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(in.dtype(), in.shape()));
    // The input as [outer, dim p, mid, dim q, inner] with p < q the two dims.
    const int p = std::min(seq, batch), q = std::max(seq, batch);
    const int64_t outer = product(in.shape(), 0, p), mid = product(in.shape(), p + 1, q);
    const int64_t inner = product(in.shape(), q + 1, in.rank());
    const int64_t np = in.dim(p), nq = in.dim(q);
    const bool empty = in.num_elements() == 0;  // then the loops need not run at all
    for (int64_t o = 0; o < outer && !empty; ++o)
      for (int64_t a = 0; a < np; ++a)
        for (int64_t m = 0; m < mid; ++m)
          for (int64_t c = 0; c < nq; ++c) {
            const int64_t b = p == batch ? a : c;
            const int64_t s = p == seq ? a : c;
            const int64_t from = s < len[static_cast<size_t>(b)] ? len[static_cast<size_t>(b)] - 1 - s : s;
            const int64_t src_a = p == seq ? from : a, src_c = p == seq ? c : from;
            copy_elements(in, (((o * np + src_a) * mid + m) * nq + src_c) * inner, out,
                          (((o * np + a) * mid + m) * nq + c) * inner, inner);
          }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  int64_t seq_dim_ = 0;
  int64_t batch_dim_ = 0;
};

}  // namespace

void register_reverse_sequence_op(OpRegistry& r) {
  register_builtin(r, OpDef("ReverseSequence").shape_fn(shape_fns::identity)
                          .input("input: T")
                          .input("seq_lengths: Tlen")
                          .output("output: T")
                          .attr("seq_dim", "int")
                          .attr("batch_dim", "int", int64_t{0})
                          .type_attr("T")
                          .type_attr("Tlen", index_dtypes(), DType::int64)
                          .kernel(make_kernel_factory<ReverseSequenceKernel>()));
}

}  // namespace tagflow::ops
