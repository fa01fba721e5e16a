// StridedSliceGrad (ops/array_slice_ops.cpp): dy lands where StridedSlice
// would read, under strides, negative strides, every mask, empty slices and
// any dtype; a dy of the wrong shape is an error. Slice and StridedSlice
// themselves are tested in array_ops_test.cpp.
#include <boost/test/unit_test.hpp>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor i32(std::vector<int32_t> v) { return Tensor::vector<int32_t>(v); }

struct Masks {
  int begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink_axis = 0;
};

std::string grad(std::vector<int32_t> shape, std::vector<int32_t> begin, std::vector<int32_t> end,
                 std::vector<int32_t> strides, const Tensor& dy, Masks m = {}) {
  return result("StridedSliceGrad", {i32(shape), i32(begin), i32(end), i32(strides), dy},
                {{"T", base_dtype(dy.dtype())},
                 {"Index", DType::int32},
                 {"begin_mask", m.begin},
                 {"end_mask", m.end},
                 {"ellipsis_mask", m.ellipsis},
                 {"new_axis_mask", m.new_axis},
                 {"shrink_axis_mask", m.shrink_axis}});
}

Tensor f32(const Shape& s, const std::vector<float>& v) { return tensor<float>(s, v); }

}  // namespace

BOOST_AUTO_TEST_SUITE(array_slice_ops)

BOOST_AUTO_TEST_CASE(strided_slice_grad_scatters_dy_into_zeros) {
  // x[1:3, 0:4:2] of a [3,4] x
  BOOST_TEST(grad({3, 4}, {1, 0}, {3, 4}, {1, 2}, f32({2, 2}, {1, 2, 3, 4})) ==
             "float32[3,4] [[0,0,0,0],[1,0,2,0],[3,0,4,0]]");
  // x[::-1]
  BOOST_TEST(grad({4}, {0}, {0}, {-1}, tensor<double>({4}, {1, 2, 3, 4}), {1, 1}) ==
             "float64[4] [4,3,2,1]");
  // x[-1:0:-2]: elements 3 and 1
  BOOST_TEST(grad({4}, {-1}, {0}, {-2}, tensor<int32_t>({2}, {7, 8})) == "int32[4] [0,8,0,7]");
  // x[1] (shrink)
  BOOST_TEST(grad({3}, {1}, {2}, {1}, Tensor::scalar(5.0f), {0, 0, 0, 0, 1}) == "float32[3] [0,5,0]");
}

BOOST_AUTO_TEST_CASE(strided_slice_grad_with_ellipsis_and_new_axis) {
  // x[..., tf.newaxis, 1] of a [2,2] x has shape [2,1].
  Masks m;
  m.ellipsis = 1;
  m.new_axis = 2;
  m.shrink_axis = 4;
  BOOST_TEST(grad({2, 2}, {0, 0, 1}, {0, 0, 2}, {1, 1, 1}, f32({2, 1}, {7, 8}), m) ==
             "float32[2,2] [[0,7],[0,8]]");
  // x[:, 1:] of a [2,3] x as a [2,2] dy, written with begin_mask on dim 0.
  BOOST_TEST(grad({2, 3}, {5, 1}, {0, 3}, {1, 1}, f32({2, 2}, {1, 2, 3, 4}), {1, 1}) ==
             "float32[2,3] [[0,1,2],[0,3,4]]");
}

BOOST_AUTO_TEST_CASE(strided_slice_grad_empty_and_other_dtypes) {
  BOOST_TEST(grad({3}, {2}, {1}, {1}, f32({0}, {})) == "float32[3] [0,0,0]");
  BOOST_TEST(grad({0, 2}, {0}, {0}, {1}, f32({0, 2}, {}), {1, 1}) == "float32[0,2] []");
  BOOST_TEST(grad({3}, {0}, {3}, {2}, Tensor::vector<std::string>({"a", "b"})) ==
             "string[3] [\"a\",\"\",\"b\"]");
  BOOST_TEST(result("StridedSliceGrad",
                    {Tensor::vector<int64_t>({2}), Tensor::vector<int64_t>({1}),
                     Tensor::vector<int64_t>({2}), Tensor::vector<int64_t>({1}),
                     tensor<bool>({1}, {true})},
                    {{"T", DType::boolean}, {"Index", DType::int64}}) == "bool[2] [false,true]");
}

BOOST_AUTO_TEST_CASE(strided_slice_grad_errors) {
  BOOST_TEST(grad({3, 4}, {1, 0}, {3, 4}, {1, 2}, f32({3}, {1, 2, 3})) ==
             "error: invalid_argument: StridedSliceGrad: dy has shape [3] but the slice of shape "
             "[3,4] has shape [2,2]");
  BOOST_TEST(grad({3}, {0}, {3}, {0}, f32({3}, {1, 2, 3})) ==
             "error: invalid_argument: StridedSlice: strides[0] must be non-zero");
  BOOST_TEST(grad({-3}, {0}, {3}, {1}, f32({3}, {1, 2, 3})) ==
             "error: invalid_argument: StridedSliceGrad shape [-3] has a negative dimension");
  BOOST_TEST(grad({3}, {5}, {6}, {1}, Tensor::scalar(1.0f), {0, 0, 0, 0, 1}) ==
             "error: invalid_argument: StridedSlice: index 5 of dimension 0 is out of bounds for "
             "size 3");
  BOOST_TEST(grad({3}, {0, 0}, {1}, {1}, f32({1}, {1})) ==
             "error: invalid_argument: StridedSlice begin [0,0], end [1] and strides [1] must have "
             "the same length");
}

BOOST_AUTO_TEST_SUITE_END()
