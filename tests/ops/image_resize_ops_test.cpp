// The resize ops (ops/image_resize_ops.cpp; suite image_ops, with
// image_codec_ops_test.cpp). Values are those of
// scripts/resize_reference.py (numpy, from TensorFlow's documented rules);
// the Grad ops are checked as the adjoints of their forward ops:
// sum(d * resize(x)) == sum(resize_grad(d) * x).
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "inferred_shape.hpp"
#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

BOOST_AUTO_TEST_SUITE(image_ops)
// --- resizes: values of scripts/resize_reference.py ----------------------------

Tensor size2(int32_t h, int32_t w) { return Tensor::vector<int32_t>({h, w}); }

template <class T>
Tensor cast_tensor(const Shape& shape, const std::vector<double>& values) {
  Tensor t(dtype_v<T>, shape);
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<T>()[i] = static_cast<T>(values[i]);
  return t;
}

std::vector<double> arange(int n, double step = 1, double start = 0) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(start + i * step);
  return v;
}

void check_values(const Expected<Tensor>& out, const Shape& shape, const std::vector<double>& expected,
                  double tolerance = 1e-5) {
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST((out->shape() == shape));
  BOOST_TEST_REQUIRE(out->num_elements() == static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i)
    BOOST_TEST(std::abs(element_as_double(*out, static_cast<int64_t>(i)) - expected[i]) <= tolerance,
               "element " << i << ": " << element_as_double(*out, static_cast<int64_t>(i)) << " vs " << expected[i]);
}

Expected<Tensor> resize(const std::string& op, Tensor images, int32_t h, int32_t w, bool align = false,
                        bool half = false) {
  return run_op1(op, {std::move(images), size2(h, w)}, {{"align_corners", align}, {"half_pixel_centers", half}});
}

BOOST_AUTO_TEST_CASE(resize_bilinear_values) {
  const std::vector<double> a = {1, 2, 4, 8, 16, 32};
  // bilinear_upscale 2x3->4x5
  const std::vector<double> upscale = {1.0, 1.600000023841858, 2.4000000953674316, 3.6000001430511475, 4.0,
                                       4.5, 7.199999809265137, 10.80000114440918, 16.200000762939453, 18.0,
                                       8.0, 12.800000190734863, 19.200000762939453, 28.80000114440918, 32.0,
                                       8.0, 12.800000190734863, 19.200000762939453, 28.80000114440918, 32.0};
  check_values(resize("ResizeBilinear", cast_tensor<float>(Shape{1, 2, 3, 1}, a), 4, 5), Shape{1, 4, 5, 1}, upscale);
  // Every input dtype is read as float: the same values from each.
  check_values(resize("ResizeBilinear", cast_tensor<uint8_t>(Shape{1, 2, 3, 1}, a), 4, 5), Shape{1, 4, 5, 1}, upscale);
  check_values(resize("ResizeBilinear", cast_tensor<int8_t>(Shape{1, 2, 3, 1}, a), 4, 5), Shape{1, 4, 5, 1}, upscale);
  check_values(resize("ResizeBilinear", cast_tensor<int16_t>(Shape{1, 2, 3, 1}, a), 4, 5), Shape{1, 4, 5, 1}, upscale);
  check_values(resize("ResizeBilinear", cast_tensor<uint16_t>(Shape{1, 2, 3, 1}, a), 4, 5), Shape{1, 4, 5, 1}, upscale);
  check_values(resize("ResizeBilinear", cast_tensor<int32_t>(Shape{1, 2, 3, 1}, a), 4, 5), Shape{1, 4, 5, 1}, upscale);
  check_values(resize("ResizeBilinear", cast_tensor<int64_t>(Shape{1, 2, 3, 1}, a), 4, 5), Shape{1, 4, 5, 1}, upscale);
  check_values(resize("ResizeBilinear", cast_tensor<double>(Shape{1, 2, 3, 1}, a), 4, 5), Shape{1, 4, 5, 1}, upscale);
  check_values(resize("ResizeBilinear", cast_tensor<Eigen::half>(Shape{1, 2, 3, 1}, a), 4, 5), Shape{1, 4, 5, 1},
               upscale);
  check_values(resize("ResizeBilinear", cast_tensor<Eigen::bfloat16>(Shape{1, 2, 3, 1}, a), 4, 5),
               Shape{1, 4, 5, 1}, upscale);
  BOOST_TEST((resize("ResizeBilinear", cast_tensor<uint8_t>(Shape{1, 2, 3, 1}, a), 4, 5)->dtype() == DType::float32));

  const Tensor b = cast_tensor<float>(Shape{1, 4, 4, 1}, arange(16, 1.5));
  // bilinear_downscale 4x4->3x2
  check_values(resize("ResizeBilinear", b, 3, 2), Shape{1, 3, 2, 1}, {0.0, 3.0, 8.0, 11.0, 16.0, 19.0});
  // bilinear_half_pixel_downscale 4x4->3x2
  check_values(resize("ResizeBilinear", b, 3, 2, false, true), Shape{1, 3, 2, 1},
               {1.7500001192092896, 4.75, 9.75, 12.75, 17.75, 20.75});
  // bilinear_align_corners 2x2->3x3
  check_values(resize("ResizeBilinear", cast_tensor<float>(Shape{1, 2, 2, 1}, {0, 10, 20, 40}), 3, 3, true),
               Shape{1, 3, 3, 1}, {0.0, 5.0, 10.0, 10.0, 17.5, 25.0, 20.0, 30.0, 40.0});
  // bilinear_half_pixel 2x3->3x5 (b2, c2)
  const Tensor d = cast_tensor<float>(Shape{2, 2, 3, 2}, arange(24, 0.25, -1));
  check_values(resize("ResizeBilinear", d, 3, 5, false, true), Shape{2, 3, 5, 2},
               {-1.0, -0.75, -0.7999999523162842, -0.5499999523162842, -0.5, -0.25, -0.19999992847442627,
                0.05000007152557373, 0.0, 0.25, -0.25, 0.0, -0.04999995231628418, 0.20000004768371582, 0.25, 0.5,
                0.5500000715255737, 0.8000000715255737, 0.75, 1.0, 0.5, 0.75, 0.7000000476837158, 0.9500000476837158,
                1.0, 1.25, 1.3000000715255737, 1.5500000715255737, 1.5, 1.75, 2.0, 2.25, 2.200000047683716,
                2.450000047683716, 2.5, 2.75, 2.8000001907348633, 3.0500001907348633, 3.0, 3.25, 2.75, 3.0,
                2.950000047683716, 3.200000047683716, 3.25, 3.5, 3.5500001907348633, 3.8000001907348633, 3.75, 4.0,
                3.5, 3.75, 3.700000047683716, 3.950000047683716, 4.0, 4.25, 4.300000190734863, 4.550000190734863, 4.5,
                4.75});
  // The same size is a copy (TensorFlow's shortcut), infinities included.
  const float inf = std::numeric_limits<float>::infinity();
  Expected<Tensor> same = resize("ResizeBilinear", Tensor::from_vector<float>(Shape{1, 1, 2, 1}, {inf, 1}), 1, 2);
  BOOST_TEST_REQUIRE(same.ok());
  BOOST_TEST(same->data<float>()[0] == inf);
}

BOOST_AUTO_TEST_CASE(resize_nearest_neighbor_values) {
  // nearest_upscale 2x3->4x5
  const std::vector<double> upscale = {0, 0, 1, 1, 2, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5, 3, 3, 4, 4, 5};
  for (DType t : {DType::uint8, DType::int64, DType::half, DType::float64}) {
    BOOST_TEST_CONTEXT(dtype_name(t)) {
      Tensor n;
      dispatch_pod(t, [&](auto v) { n = cast_tensor<decltype(v)>(Shape{1, 2, 3, 1}, arange(6)); });
      Expected<Tensor> out = resize("ResizeNearestNeighbor", n, 4, 5);
      check_values(out, Shape{1, 4, 5, 1}, upscale, 0);
      BOOST_TEST((out->dtype() == t));
    }
  }
  const Tensor m = cast_tensor<int32_t>(Shape{1, 3, 3, 1}, arange(9));
  // nearest_align_corners 3x3->5x4
  check_values(resize("ResizeNearestNeighbor", m, 5, 4, true), Shape{1, 5, 4, 1},
               {0, 1, 1, 2, 3, 4, 4, 5, 3, 4, 4, 5, 6, 7, 7, 8, 6, 7, 7, 8}, 0);
  const Tensor q = cast_tensor<int32_t>(Shape{1, 4, 4, 1}, arange(16));
  // nearest_half_pixel 4x4->3x2, nearest_downscale 4x4->3x2
  check_values(resize("ResizeNearestNeighbor", q, 3, 2, false, true), Shape{1, 3, 2, 1}, {1, 3, 9, 11, 13, 15}, 0);
  check_values(resize("ResizeNearestNeighbor", q, 3, 2), Shape{1, 3, 2, 1}, {0, 2, 4, 6, 8, 10}, 0);
  // nearest_half_pixel_upscale 2x3->3x5 (b2, c2)
  check_values(resize("ResizeNearestNeighbor", cast_tensor<float>(Shape{2, 2, 3, 2}, arange(24)), 3, 5, false, true),
               Shape{2, 3, 5, 2},
               {0,  1,  0,  1,  2,  3,  4,  5,  4,  5,  6,  7,  6,  7,  8,  9,  10, 11, 10, 11,
                6,  7,  6,  7,  8,  9,  10, 11, 10, 11, 12, 13, 12, 13, 14, 15, 16, 17, 16, 17,
                18, 19, 18, 19, 20, 21, 22, 23, 22, 23, 18, 19, 18, 19, 20, 21, 22, 23, 22, 23},
               0);
}

BOOST_AUTO_TEST_CASE(resize_errors) {
  const Tensor image = cast_tensor<float>(Shape{1, 2, 2, 1}, {1, 2, 3, 4});
  for (const char* op : {"ResizeBilinear", "ResizeNearestNeighbor"}) {
    BOOST_TEST_CONTEXT(op) {
      BOOST_TEST(resize(op, image, 3, 3, true, true).status().to_string() ==
                 "invalid_argument: If half_pixel_centers is True, align_corners must be False.");
      BOOST_TEST(error_of(op, {cast_tensor<float>(Shape{2, 2, 1}, {1, 2, 3, 4}), size2(3, 3)}) ==
                 "invalid_argument: images must be 4-dimensional [batch, height, width, channels], got shape [2,2,1]");
      BOOST_TEST(error_of(op, {Tensor(DType::float32, Shape{1, 2, 2, 0}), size2(3, 3)}) ==
                 "invalid_argument: image must have at least one channel");
      BOOST_TEST(contains(error_of(op, {Tensor(DType::float32, Shape{1, 0, 2, 1}), size2(3, 3)}),
                          "input image must be of non-zero size"));
      BOOST_TEST(error_of(op, {image, Tensor::vector<int32_t>({3, 3, 3})}) ==
                 "invalid_argument: size must be a 1-D tensor of 2 elements [height, width], got shape [3]");
      BOOST_TEST(error_of(op, {image, Tensor::vector<int64_t>({3, 3})}) == "invalid_argument: size must be int32, got int64");
      BOOST_TEST(error_of(op, {image, size2(0, 3)}) == "invalid_argument: size must be positive, got [0, 3]");
      BOOST_TEST(contains(error_of(op, {Tensor::from_vector<bool>(Shape{1, 1, 1, 1}, {true}), size2(1, 1)}),
                          "not one of"));
    }
  }
  BOOST_TEST(error_of("ResizeBilinearGrad", {Tensor(DType::float32, Shape{1, 2, 2}), image}) ==
             "invalid_argument: grads must be 4-dimensional [batch, height, width, channels], got shape [1,2,2]");
  BOOST_TEST(contains(error_of("ResizeBilinearGrad", {Tensor(DType::float32, Shape{1, 2, 2, 1}),
                                                      Tensor(DType::float32, Shape{1, 0, 2, 1})}),
                      "original dimensions must be positive"));
  BOOST_TEST(contains(error_of("ResizeBilinearGrad",
                               {Tensor(DType::float32, Shape{1, 2, 2, 1}), Tensor(DType::int32, Shape{1, 2, 2, 1})},
                               {{"T", DType::int32}}),
                      "not one of"));
  BOOST_TEST(error_of("ResizeNearestNeighborGrad", {image, size2(-1, 2)}) ==
             "invalid_argument: size must be positive, got [-1, 2]");
  BOOST_TEST(contains(error_of("ResizeNearestNeighborGrad", {Tensor(DType::int16, Shape{1, 2, 2, 1}), size2(1, 1)}),
                      "not one of"));
}

// --- the Grad ops are the adjoints of the resizes ------------------------------

double dot(const Tensor& a, const Tensor& b) {
  BOOST_TEST_REQUIRE(a.num_elements() == b.num_elements());
  double s = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) s += element_as_double(a, i) * element_as_double(b, i);
  return s;
}

template <class T>
Tensor random_values(const Shape& shape, std::mt19937& rng) {
  std::uniform_real_distribution<double> uniform(-2, 2);
  Tensor t(dtype_v<T>, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i)
    t.mutable_data<T>()[i] = static_cast<T>(std::is_integral_v<T> ? std::round(uniform(rng) * 5) : uniform(rng));
  return t;
}

struct ResizeCase {
  int in_h, in_w, out_h, out_w;
  bool align, half;
};

const ResizeCase kAdjointCases[] = {
    {3, 4, 5, 7, false, false}, {5, 7, 3, 4, false, false}, {3, 4, 5, 7, true, false}, {5, 7, 3, 4, true, false},
    {3, 4, 5, 7, false, true},  {5, 7, 3, 4, false, true},  {4, 4, 4, 4, false, false}, {3, 5, 1, 1, true, false},
    {1, 1, 3, 2, false, true},  {2, 6, 6, 2, false, false}};

BOOST_AUTO_TEST_CASE(resize_bilinear_grad_is_the_adjoint) {
  // sum(d * resize(x)) == sum(resize_grad(d) * x) for random x and d.
  std::mt19937 rng(5);
  for (const ResizeCase& k : kAdjointCases) {
    BOOST_TEST_CONTEXT(k.in_h << "x" << k.in_w << " -> " << k.out_h << "x" << k.out_w << " align " << k.align
                              << " half " << k.half) {
      const AttrMap attrs = {{"align_corners", k.align}, {"half_pixel_centers", k.half}};
      for (DType t : {DType::float32, DType::float64}) {
        Tensor x;
        dispatch_pod(t, [&](auto v) { x = random_values<decltype(v)>(Shape{2, k.in_h, k.in_w, 3}, rng); });
        const Tensor d = random_values<float>(Shape{2, k.out_h, k.out_w, 3}, rng);
        Expected<Tensor> y = run_op1("ResizeBilinear", {x, size2(k.out_h, k.out_w)}, attrs);
        Expected<Tensor> dx = run_op1("ResizeBilinearGrad", {d, x}, attrs);
        BOOST_TEST_REQUIRE((y.ok() && dx.ok()));
        BOOST_TEST((dx->dtype() == t));
        BOOST_TEST((dx->shape() == x.shape()));
        BOOST_TEST(std::abs(dot(d, *y) - dot(*dx, x)) <= 1e-4 * (1 + std::abs(dot(d, *y))));
      }
      // half and bfloat16 accumulate in float, then round once.
      const Tensor d = random_values<float>(Shape{1, k.out_h, k.out_w, 2}, rng);
      Expected<Tensor> in_float = run_op1("ResizeBilinearGrad", {d, Tensor(DType::float32, Shape{1, k.in_h, k.in_w, 2})},
                                          attrs);
      Expected<Tensor> in_half = run_op1("ResizeBilinearGrad", {d, Tensor(DType::half, Shape{1, k.in_h, k.in_w, 2})},
                                         attrs);
      BOOST_TEST_REQUIRE((in_float.ok() && in_half.ok()));
      for (int64_t i = 0; i < in_float->num_elements(); ++i)
        BOOST_TEST(static_cast<float>(in_half->data<Eigen::half>()[i]) ==
                   static_cast<float>(Eigen::half(in_float->data<float>()[i])));
    }
  }
}

BOOST_AUTO_TEST_CASE(resize_nearest_neighbor_grad_is_the_adjoint) {
  std::mt19937 rng(9);
  for (const ResizeCase& k : kAdjointCases) {
    BOOST_TEST_CONTEXT(k.in_h << "x" << k.in_w << " -> " << k.out_h << "x" << k.out_w << " align " << k.align
                              << " half " << k.half) {
      const AttrMap attrs = {{"align_corners", k.align}, {"half_pixel_centers", k.half}};
      // int32: exact; float: within rounding.
      for (DType t : {DType::int32, DType::float32}) {
        Tensor x, d;
        dispatch_pod(t, [&](auto v) {
          x = random_values<decltype(v)>(Shape{2, k.in_h, k.in_w, 3}, rng);
          d = random_values<decltype(v)>(Shape{2, k.out_h, k.out_w, 3}, rng);
        });
        Expected<Tensor> y = run_op1("ResizeNearestNeighbor", {x, size2(k.out_h, k.out_w)}, attrs);
        Expected<Tensor> dx = run_op1("ResizeNearestNeighborGrad", {d, size2(k.in_h, k.in_w)}, attrs);
        BOOST_TEST_REQUIRE((y.ok() && dx.ok()));
        BOOST_TEST((dx->shape() == x.shape()));
        BOOST_TEST(std::abs(dot(d, *y) - dot(*dx, x)) <= (t == DType::int32 ? 0 : 1e-4 * (1 + std::abs(dot(d, *y)))));
      }
    }
  }
  // uint8 sums wrap, as TensorFlow's T accumulation: 200 + 100 = 44 (mod 256).
  Expected<Tensor> wrapped = run_op1("ResizeNearestNeighborGrad",
                                     {Tensor::from_vector<uint8_t>(Shape{1, 1, 2, 1}, {200, 100}), size2(1, 1)});
  BOOST_TEST_REQUIRE(wrapped.ok());
  BOOST_TEST(wrapped->data<uint8_t>()[0] == 44);
}

BOOST_AUTO_TEST_CASE(resize_shape_functions) {
  const OutputInfo images = known_input(DType::float32, shape::known({2, -1, -1, 3}));
  const OutputInfo size = known_input(DType::int32, shape::vector(2), size2(5, 7));
  const OutputInfo unknown_size = known_input(DType::int32, shape::vector(2));
  for (const char* op : {"ResizeBilinear", "ResizeNearestNeighbor", "ResizeNearestNeighborGrad"}) {
    BOOST_TEST_CONTEXT(op) {
      BOOST_TEST(inferred(op, {images, size}) == "[2,5,7,3]");
      BOOST_TEST(inferred(op, {images, unknown_size}) == "[2,?,?,3]");
      BOOST_TEST(contains(inferred(op, {known_input(DType::float32, shape::known({2, 3})), size}),
                          "must have rank 4"));
      BOOST_TEST(contains(inferred(op, {images, known_input(DType::int32, shape::vector(3))}),
                          "size must be a vector of 2 elements, not [3]"));
    }
  }
  BOOST_TEST(inferred("ResizeBilinearGrad", {known_input(DType::float32, shape::known({2, 5, 7, 3})),
                                             known_input(DType::float32, shape::known({2, 4, 4, 3}))}) ==
             "[2,4,4,3]");
}


BOOST_AUTO_TEST_SUITE_END()

}  // namespace
