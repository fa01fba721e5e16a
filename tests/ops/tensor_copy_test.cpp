// ops/tensor_copy.hpp and ops/index_args.hpp: the element-moving and
// index-reading helpers behind the array kernels.
#include <boost/test/unit_test.hpp>

#include "ops/index_args.hpp"
#include "ops/tensor_copy.hpp"

using namespace tagflow::ops;

namespace {

Tensor iota(const Shape& s) {
  std::vector<int32_t> v(static_cast<size_t>(s.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i);
  return Tensor::from_vector<int32_t>(s, v);
}

std::string view_of(const Tensor& src, const StridedView& v) {
  std::vector<int64_t> dims = v.dims;
  Tensor dst(src.dtype(), *Shape::make(dims));
  strided_copy(src, v, dst);
  return dst.values_string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tensor_copy)

BOOST_AUTO_TEST_CASE(strided_views) {
  Tensor x = iota(Shape{2, 3});
  BOOST_TEST(view_of(x, {0, {2, 3}, {3, 1}}) == "[[0,1,2],[3,4,5]]");      // identity
  BOOST_TEST(view_of(x, {0, {3, 2}, {1, 3}}) == "[[0,3],[1,4],[2,5]]");    // transpose
  BOOST_TEST(view_of(x, {5, {2, 3}, {-3, -1}}) == "[[5,4,3],[2,1,0]]");    // reversed
  BOOST_TEST(view_of(x, {1, {2, 2}, {0, 3}}) == "[[1,4],[1,4]]");          // broadcast
  BOOST_TEST(view_of(x, {4, {}, {}}) == "4");                              // one element
  BOOST_TEST(view_of(x, {0, {0, 3}, {3, 1}}) == "[]");                     // empty
  Tensor s = Tensor::vector<std::string>({"a", "b", "c"});
  BOOST_TEST(view_of(s, {2, {3}, {-1}}) == "[\"c\",\"b\",\"a\"]");
}

BOOST_AUTO_TEST_CASE(copy_and_fill_runs) {
  Tensor src = iota(Shape{4});
  Tensor dst(DType::int32, Shape{6});
  copy_elements(src, 1, dst, 2, 3);
  fill_elements(src, 3, dst, 0, 2);
  BOOST_TEST(dst.values_string() == "[3,3,1,2,3,0]");
  Tensor strs(DType::string, Shape{3});
  fill_elements(Tensor::string_scalar("z"), 0, strs, 1, 2);
  BOOST_TEST(strs.values_string() == "[\"\",\"z\",\"z\"]");
}

BOOST_AUTO_TEST_CASE(allocation_limit) {
  BOOST_TEST(allocate_tensor(DType::float32, Shape{2, 2}).ok());
  auto big = allocate_tensor(DType::float64, *Shape::make({int64_t{1} << 40}));
  BOOST_REQUIRE(!big.ok());
  BOOST_TEST((big.status().code() == Error::resource_exhausted));
  BOOST_TEST(big.status().message().find("float64 tensor of shape [1099511627776]") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(index_arguments_of_any_integer_dtype) {
  auto v16 = read_int_vector(Tensor::vector<int16_t>({-1, 7}), "begin");
  BOOST_REQUIRE(v16.ok());
  BOOST_TEST(ints_to_string(*v16) == "[-1,7]");
  auto s = read_int_scalar(Tensor::vector<int64_t>({3}), "axis");
  BOOST_REQUIRE(s.ok());
  BOOST_TEST(*s == 3);
  BOOST_TEST(read_int_scalar(Tensor::vector<int32_t>({1, 2}), "axis").status().message() ==
             "axis must be a scalar, got shape [2]");
  BOOST_TEST(read_int_vector(Tensor::scalar(1), "perm").status().message() ==
             "perm must be a vector, got shape []");
  BOOST_TEST(read_int_values(Tensor::scalar(1.5f), "shape").status().message() ==
             "shape must be an integer tensor, got float32");
  BOOST_TEST(*canonical_axis(-1, 3) == 2);
  BOOST_TEST(canonical_axis(-4, 3).status().message() ==
             "axis -4 is out of range for a tensor of rank 3 (must be in [-3, 3))");
  BOOST_TEST(shape_from_tensor(Tensor::vector<int32_t>({2, -1}), "dims").status().message() ==
             "dims [2,-1] has a negative dimension");
}

BOOST_AUTO_TEST_SUITE_END()
