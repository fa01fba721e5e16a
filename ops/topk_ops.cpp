// The k-best selections:
//
// - TopKV2(input, k) -> (values, indices): the k largest entries of each
//   row (last dimension) of input, largest first; equal values keep their
//   order (the lower index first), as TensorFlow's CPU kernel does. With
//   sorted = false the result is still sorted, which TensorFlow allows. NaN
//   ranks above every number, so that the order is total.
// - NearestNeighbors(points [n,d], centers [m,d], k) -> (indices [n,
//   min(k,m)], distances): for each point the nearest centers, nearest
//   first (the lower center index first on ties), and their squared
//   Euclidean distances, computed as TensorFlow's factorization kernel does
//   (|p|^2 + |c|^2 - 2 p.c, with Eigen's matrix product), so a distance may
//   come out slightly off, even slightly negative, from rounding.
//
// Signatures as in TensorFlow's core/ops/nn_ops.cc and
// contrib/factorization/ops/clustering_ops.cc. Kernels are stateless.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>

#include <Eigen/Core>

#include "ops/cwise_kernel.hpp"
#include "ops/index_args.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/math_ops.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

// The positions of the k best of `n` candidates, best first, under the
// strict total order `better`.
template <class Better>
std::vector<int64_t> best_k(int64_t n, int64_t k, Better better) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
  order.resize(static_cast<size_t>(k));
  return order;
}

// a ranks above b: larger, NaN above numbers, the lower index on ties.
template <class T>
bool ranks_above(T a, int64_t ia, T b, int64_t ib) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na && (!nb || ia < ib);
  }
  return a > b || (a == b && ia < ib);
}

template <class Index>
void write_indices(Tensor& out, int64_t offset, const std::vector<int64_t>& idx) {
  Index* p = out.mutable_data<Index>() + offset;
  for (size_t i = 0; i < idx.size(); ++i) p[i] = static_cast<Index>(idx[i]);
}

class TopKKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(index_type_, init.attr<DType>("index_type"));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.input(0);
    if (!input.valid() || input.rank() < 1)
      return Status(Error::invalid_argument,
                    "TopKV2 input must be at least a vector, got shape " + input.shape().to_string());
    TF_ASSIGN_OR_RETURN(int64_t k, read_int_scalar(ctx.input(1), "TopKV2 k"));
    if (k < 0)
      return Status(Error::invalid_argument, "TopKV2 k must be >= 0, got " + std::to_string(k));
    const int64_t cols = input.dim(input.rank() - 1);
    if (cols < k)
      return Status(Error::invalid_argument,
                    "TopKV2 input must have at least k = " + std::to_string(k) +
                        " entries in its last dimension, got shape " + input.shape().to_string());
    const int64_t max_index = index_type_ == DType::int16 ? std::numeric_limits<int16_t>::max()
                              : index_type_ == DType::int32 ? std::numeric_limits<int32_t>::max()
                                                            : std::numeric_limits<int64_t>::max();
    if (cols - 1 > max_index)
      return Status(Error::invalid_argument, "TopKV2 rows of " + std::to_string(cols) +
                                                 " entries are too long for " +
                                                 dtype_name(index_type_) + " indices");
    std::vector<int64_t> dims = input.shape().dims();
    dims.back() = k;
    TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(dims));
    TF_ASSIGN_OR_RETURN(Tensor values, allocate_uninitialized(input.dtype(), shape));
    TF_ASSIGN_OR_RETURN(Tensor indices, allocate_uninitialized(index_type_, shape));
    const int64_t rows = cols == 0 ? 0 : input.num_elements() / cols;
    bool known = dispatch_real(base_dtype(input.dtype()), [&](auto tag) {
      using T = decltype(tag);
      const T* in = input.data<T>();
      for (int64_t r = 0; r < rows; ++r) {
        const T* row = in + r * cols;
        std::vector<int64_t> best = best_k(cols, k, [row](int64_t a, int64_t b) {
          return ranks_above(row[a], a, row[b], b);
        });
        T* v = values.mutable_data<T>() + r * k;
        for (int64_t j = 0; j < k; ++j) v[j] = row[best[static_cast<size_t>(j)]];
        switch (index_type_) {
          case DType::int16: write_indices<int16_t>(indices, r * k, best); break;
          case DType::int64: write_indices<int64_t>(indices, r * k, best); break;
          default: write_indices<int32_t>(indices, r * k, best); break;
        }
      }
    });
    if (!known)
      return Status(Error::unimplemented,
                    "TopKV2 has no kernel for dtype " + dtype_name(input.dtype()));
    ctx.set_output(0, std::move(values));
    ctx.set_output(1, std::move(indices));
    return ok_status();
  }

 private:
  DType index_type_ = DType::int32;
};

Status nearest_neighbors(KernelContext& ctx) {
  const Tensor& points = ctx.input(0);
  const Tensor& centers = ctx.input(1);
  const Tensor& k_in = ctx.input(2);
  if (!points.valid() || points.rank() != 2)
    return Status(Error::invalid_argument, "NearestNeighbors points must be a matrix, got " +
                                               (points.valid() ? "shape " + points.shape().to_string()
                                                               : std::string("no tensor")));
  if (!centers.valid() || centers.rank() != 2)
    return Status(Error::invalid_argument, "NearestNeighbors centers must be a matrix, got " +
                                               (centers.valid() ? "shape " + centers.shape().to_string()
                                                                : std::string("no tensor")));
  if (!k_in.valid() || k_in.rank() != 0)
    return Status(Error::invalid_argument,
                  "NearestNeighbors k must be a scalar, got " +
                      (k_in.valid() ? "shape " + k_in.shape().to_string() : std::string("no tensor")));
  const int64_t n = points.dim(0), d = points.dim(1), m = centers.dim(0);
  if (n == 0)
    return Status(Error::invalid_argument, "NearestNeighbors needs at least one point, got shape " +
                                               points.shape().to_string());
  if (centers.dim(1) != d)
    return Status(Error::invalid_argument,
                  "NearestNeighbors points and centers must have as many columns, got shapes " +
                      points.shape().to_string() + " and " + centers.shape().to_string());
  TF_ASSIGN_OR_RETURN(int64_t k_value, read_int_scalar(k_in, "NearestNeighbors k"));
  if (k_value < 0)
    return Status(Error::invalid_argument,
                  "NearestNeighbors k must be >= 0, got " + std::to_string(k_value));
  const int64_t k = std::min(k_value, m);
  TF_ASSIGN_OR_RETURN(Tensor indices, allocate_tensor(DType::int64, Shape{n, k}));
  TF_ASSIGN_OR_RETURN(Tensor distances, allocate_tensor(DType::float32, Shape{n, k}));
  if (k > 0) {
    using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<const Matrix> p(points.data<float>(), n, d);
    Eigen::Map<const Matrix> c(centers.data<float>(), m, d);
    const Eigen::VectorXf p_half = 0.5f * p.rowwise().squaredNorm();
    const Eigen::VectorXf c_half = 0.5f * c.rowwise().squaredNorm();
    const Matrix inner = p * c.transpose();
    int64_t* out_index = indices.mutable_data<int64_t>();
    float* out_distance = distances.mutable_data<float>();
    std::vector<float> partial(static_cast<size_t>(m));
    for (int64_t i = 0; i < n; ++i) {
      // |p - c|^2 / 2 - |p|^2 / 2: enough to rank the centers.
      for (int64_t j = 0; j < m; ++j) partial[static_cast<size_t>(j)] = c_half(j) - inner(i, j);
      std::vector<int64_t> best = best_k(m, k, [&partial](int64_t a, int64_t b) {
        return ranks_above(-partial[static_cast<size_t>(a)], a, -partial[static_cast<size_t>(b)], b);
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t center = best[static_cast<size_t>(j)];
        out_index[i * k + j] = center;
        out_distance[i * k + j] = 2.0f * (p_half(i) + partial[static_cast<size_t>(center)]);
      }
    }
  }
  ctx.set_output(0, std::move(indices));
  ctx.set_output(1, std::move(distances));
  return ok_status();
}

}  // namespace

void register_topk_ops(OpRegistry& r) {
  register_builtin(r, OpDef("TopKV2").shape_fn(shape_fns::top_k)
                          .input("input: T")
                          .input("k: Tk")
                          .output("values: T")
                          .output("indices: index_type")
                          .attr("sorted", "bool", true)
                          .type_attr("T", real_types())
                          .type_attr("Tk", {DType::int16, DType::int32, DType::int64}, DType::int32)
                          .type_attr("index_type", {DType::int16, DType::int32, DType::int64},
                                     DType::int32)
                          .kernel(make_kernel_factory<TopKKernel>()));
  register_builtin(r, OpDef("NearestNeighbors").shape_fn(shape_fns::nearest_neighbors)
                          .input("points: float")
                          .input("centers: float")
                          .input("k: int64")
                          .output("nearest_center_indices: int64")
                          .output("nearest_center_distances: float")
                          .kernel_fn(nearest_neighbors));
}

}  // namespace tagflow::ops
