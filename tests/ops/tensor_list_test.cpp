// The TensorList ops (ops/list_ops.cpp) and their values (ops/variant.hpp):
// every kernel's values against hand-computed ones, TensorFlow's errors
// (dtype mismatch, index out of range, pop from empty, unset elements of a
// partial shape), and copy on write — a list changed after being shared
// leaves the other holder's view as it was, an unshared one is changed in
// place.
#include <boost/test/unit_test.hpp>

#include "op_result.hpp"
#include "ops/variant.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

AttrMap list_attrs(DType element = DType::float32) {
  return {{"element_dtype", element}, {"shape_type", DType::int32}};
}

Tensor shape_input(const std::vector<int32_t>& dims) { return Tensor::vector<int32_t>(dims); }
Tensor unknown_rank() { return Tensor::scalar<int32_t>(-1); }
Tensor floats(const Shape& shape, const std::vector<float>& v) { return Tensor::from_vector<float>(shape, v); }

Tensor must(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs) {
  Expected<Tensor> t = run_op1(op, std::move(inputs), std::move(attrs));
  BOOST_REQUIRE_MESSAGE(t.ok(), op << ": " << t.status().to_string());
  return *t;
}

std::vector<Tensor> must_all(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs) {
  auto t = run_op(op, std::move(inputs), std::move(attrs));
  BOOST_REQUIRE_MESSAGE(t.ok(), op << ": " << t.status().to_string());
  return *t;
}

std::string error(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs) {
  auto t = run_op(op, std::move(inputs), std::move(attrs));
  return t.ok() ? std::string("<ok>") : t.status().to_string();
}

Tensor empty_list(const std::vector<int32_t>& shape, int32_t max = -1, DType element = DType::float32) {
  return must("EmptyTensorList", {shape_input(shape), Tensor::scalar<int32_t>(max)}, list_attrs(element));
}

Tensor reserve(Tensor shape, int32_t n) {
  return must("TensorListReserve", {std::move(shape), Tensor::scalar<int32_t>(n)}, list_attrs());
}

// Inputs moved in (an initializer list would copy them, and a kernel would
// never see a uniquely held list).
std::vector<Tensor> moved(Tensor a, Tensor b, Tensor c = Tensor()) {
  std::vector<Tensor> v;
  v.push_back(std::move(a));
  v.push_back(std::move(b));
  if (c.valid()) v.push_back(std::move(c));
  return v;
}

Tensor push(Tensor list, Tensor item) {
  const DType d = item.dtype();
  return must("TensorListPushBack", moved(std::move(list), std::move(item)), {{"element_dtype", d}});
}

const TensorList& list(const Tensor& t) { return *list_of(t).value(); }

int32_t length(const Tensor& l) {
  return must("TensorListLength", {l}, {}).scalar_value<int32_t>();
}

std::string stack(const Tensor& l, Tensor shape = unknown_rank(), AttrMap attrs = {{"element_dtype", DType::float32}}) {
  auto t = run_op1("TensorListStack", {l, std::move(shape)}, std::move(attrs));
  return t.ok() ? t->debug_string() : "error: " + t.status().to_string();
}

std::string get_item(const Tensor& l, int32_t i, Tensor shape = unknown_rank()) {
  auto t = run_op1("TensorListGetItem", {l, Tensor::scalar<int32_t>(i), std::move(shape)},
                   {{"element_dtype", DType::float32}});
  return t.ok() ? t->debug_string() : "error: " + t.status().to_string();
}

Tensor set_item(Tensor l, int32_t i, Tensor item, bool resize = false) {
  return must("TensorListSetItem", moved(std::move(l), Tensor::scalar<int32_t>(i), std::move(item)),
              {{"element_dtype", DType::float32}, {"resize_if_index_out_of_bounds", resize}});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tensor_list)

BOOST_AUTO_TEST_CASE(push_length_and_stack_of_an_empty_list) {
  Tensor l = empty_list({2});
  BOOST_TEST(l.debug_string() == "variant[] TensorList<float32>[0 elements]");
  BOOST_TEST(length(l) == 0);
  l = push(l, floats({2}, {1, 2}));
  l = push(l, floats({2}, {3, 4}));
  l = push(l, floats({2}, {5, 6}));
  BOOST_TEST(l.debug_string() == "variant[] TensorList<float32>[3 elements]");
  BOOST_TEST(length(l) == 3);
  BOOST_TEST(stack(l) == "float32[3,2] [[1,2],[3,4],[5,6]]");
  BOOST_TEST(stack(l, shape_input({2})) == "float32[3,2] [[1,2],[3,4],[5,6]]");
  BOOST_TEST(get_item(l, 1) == "float32[2] [3,4]");
  // Stacking an empty list needs a fully defined shape.
  BOOST_TEST(stack(empty_list({0, 3})) == "float32[0,0,3] []");
  BOOST_TEST(contains(stack(empty_list({-1})), "not fully defined"), stack(empty_list({-1})));
  // num_elements checks the length.
  BOOST_TEST(contains(stack(l, unknown_rank(), {{"element_dtype", DType::float32}, {"num_elements", int64_t{2}}}),
                      "expected a list of 2 elements, got one of 3"));
}

BOOST_AUTO_TEST_CASE(element_dtype_mismatches_are_errors) {
  Tensor l = empty_list({});
  BOOST_TEST(contains(error("TensorListPushBack", {l, Tensor::scalar<int32_t>(1)}, {{"element_dtype", DType::int32}}),
                      "element dtype mismatch: the op's element_dtype is int32 but the list holds float32 elements"));
  l = push(l, Tensor::scalar<float>(1));
  BOOST_TEST(contains(stack(l, unknown_rank(), {{"element_dtype", DType::int64}}), "element dtype mismatch"));
  BOOST_TEST(contains(error("TensorListGetItem", {l, Tensor::scalar<int32_t>(0), unknown_rank()},
                            {{"element_dtype", DType::float64}}),
                      "the op's element_dtype is float64"));
  // Not a list at all.
  BOOST_TEST(contains(error("TensorListLength", {Tensor(DType::variant, Shape{})}, {}),
                      "input_handle is not a TensorList: it holds <empty variant>"));
  BOOST_TEST(contains(error("TensorListLength", {Tensor::scalar<float>(1)}, {}),
                      "input_handle must be a scalar variant tensor"));
}

BOOST_AUTO_TEST_CASE(push_checks_shape_and_bound) {
  Tensor l = empty_list({-1, 2}, 2);
  BOOST_TEST(contains(error("TensorListPushBack", {l, floats({3}, {1, 2, 3})}, {{"element_dtype", DType::float32}}),
                      "cannot push a tensor of shape [3] to a list of element shape [?,2]"));
  l = push(l, floats({1, 2}, {1, 2}));
  l = push(l, floats({3, 2}, {1, 2, 3, 4, 5, 6}));
  BOOST_TEST(contains(error("TensorListPushBack", {l, floats({1, 2}, {1, 2})}, {{"element_dtype", DType::float32}}),
                      "cannot push to a full list: it has 2 elements, max_num_elements is 2"));
  BOOST_TEST(contains(error("EmptyTensorList", {shape_input({}), Tensor::scalar<int32_t>(-2)}, list_attrs()),
                      "max_num_elements must be -1"));
}

BOOST_AUTO_TEST_CASE(element_shape_inputs) {
  BOOST_TEST(must("TensorListElementShape", {empty_list({-1, 3})}, {{"shape_type", DType::int32}}).debug_string() ==
             "int32[2] [-1,3]");
  Tensor unknown = must("EmptyTensorList", {unknown_rank(), Tensor::scalar<int32_t>(-1)}, list_attrs());
  BOOST_TEST(must("TensorListElementShape", {unknown}, {{"shape_type", DType::int64}}).debug_string() == "int64[] -1");
  Tensor from_int64 = must("EmptyTensorList", {Tensor::vector<int64_t>({4}), Tensor::scalar<int32_t>(-1)},
                           {{"element_dtype", DType::float32}, {"shape_type", DType::int64}});
  BOOST_TEST(list(from_int64).element_shape.to_string() == "[4]");
  BOOST_TEST(contains(error("EmptyTensorList", {Tensor::scalar<int32_t>(3), Tensor::scalar<int32_t>(-1)}, list_attrs()),
                      "the only valid scalar shape is -1 (unknown rank), got 3"));
  BOOST_TEST(contains(error("EmptyTensorList", {shape_input({2, -2}), Tensor::scalar<int32_t>(-1)}, list_attrs()),
                      "dimension -2"));
}

BOOST_AUTO_TEST_CASE(unset_elements_of_a_known_shape_read_as_zeros) {
  Tensor l = reserve(shape_input({2}), 3);
  BOOST_TEST(length(l) == 3);
  BOOST_TEST(get_item(l, 1) == "float32[2] [0,0]");
  BOOST_TEST(stack(l) == "float32[3,2] [[0,0],[0,0],[0,0]]");
  l = set_item(l, 1, floats({2}, {5, 6}));
  BOOST_TEST(stack(l) == "float32[3,2] [[0,0],[5,6],[0,0]]");
  // The op's element_shape completes a partial list shape.
  Tensor partial = reserve(shape_input({-1}), 2);
  BOOST_TEST(get_item(partial, 0, shape_input({3})) == "float32[3] [0,0,0]");
  BOOST_TEST(stack(partial, shape_input({1})) == "float32[2,1] [[0],[0]]");
  BOOST_TEST(contains(get_item(partial, 0, shape_input({2, 2})), "does not fit the list's element shape [?]"));
}

BOOST_AUTO_TEST_CASE(unset_elements_of_a_partial_shape_are_errors_naming_the_shape) {
  Tensor l = reserve(unknown_rank(), 3);
  BOOST_TEST(contains(get_item(l, 0), "reading unset element 0: the element shape ? is not fully defined"),
             get_item(l, 0));
  BOOST_TEST(contains(stack(l), "the element shape ? is not fully defined"));
  // A set element fixes the shape: GetItem and Stack infer it, as TensorFlow does.
  l = set_item(l, 2, floats({2}, {7, 8}));
  BOOST_TEST(get_item(l, 0) == "float32[2] [0,0]");
  BOOST_TEST(stack(l) == "float32[3,2] [[0,0],[0,0],[7,8]]");
  // Elements of different shapes cannot be stacked.
  l = set_item(l, 1, floats({3}, {1, 2, 3}));
  BOOST_TEST(contains(stack(l), "list element 2 has shape [2], not [3]"), stack(l));
  // PopBack does not look at the other elements.
  Tensor p = reserve(shape_input({-1}), 1);
  p = set_item(p, 0, floats({1}, {9}));
  p = push(p, floats({1}, {4}));
  p = must("TensorListResize", {p, Tensor::scalar<int32_t>(3)}, {});
  BOOST_TEST(contains(error("TensorListPopBack", {p, unknown_rank()}, {{"element_dtype", DType::float32}}),
                      "reading unset element 2: the element shape [?] is not fully defined"));
}

BOOST_AUTO_TEST_CASE(get_item_out_of_range_names_index_and_length) {
  Tensor l = push(empty_list({}), Tensor::scalar<float>(1));
  BOOST_TEST(contains(get_item(l, 5), "cannot read element 5 of a list of 1 elements"));
  BOOST_TEST(contains(get_item(l, -1), "cannot read element -1 of a list of 1 elements"));
  BOOST_TEST(get_item(l, 0) == "float32[] 1");
}

BOOST_AUTO_TEST_CASE(pop_back_returns_the_last_element) {
  Tensor l = push(push(empty_list({}), Tensor::scalar<float>(1)), Tensor::scalar<float>(2));
  auto out = must_all("TensorListPopBack", {l, unknown_rank()}, {{"element_dtype", DType::float32}});
  BOOST_TEST(out[1].debug_string() == "float32[] 2");
  BOOST_TEST(length(out[0]) == 1);
  BOOST_TEST(length(l) == 2);  // l was shared: unchanged
  out = must_all("TensorListPopBack", {out[0], unknown_rank()}, {{"element_dtype", DType::float32}});
  BOOST_TEST(out[1].debug_string() == "float32[] 1");
  BOOST_TEST(contains(error("TensorListPopBack", {out[0], unknown_rank()}, {{"element_dtype", DType::float32}}),
                      "cannot pop from an empty list"));
}

BOOST_AUTO_TEST_CASE(set_item_out_of_range_and_resize_if_index_out_of_bounds) {
  Tensor l = reserve(shape_input({}), 2);
  BOOST_TEST(contains(error("TensorListSetItem", {l, Tensor::scalar<int32_t>(2), Tensor::scalar<float>(1)},
                            {{"element_dtype", DType::float32}}),
                      "cannot set element 2 of a list of 2 elements"));
  BOOST_TEST(contains(error("TensorListSetItem", {l, Tensor::scalar<int32_t>(0), floats({1}, {1})},
                            {{"element_dtype", DType::float32}}),
                      "cannot set element 0 to a tensor of shape [1]: the list's element shape is []"));
  Tensor grown = set_item(l, 4, Tensor::scalar<float>(3), true);
  BOOST_TEST(length(grown) == 5);
  BOOST_TEST(stack(grown) == "float32[5] [0,0,0,0,3]");
  BOOST_TEST(length(l) == 2);
}

BOOST_AUTO_TEST_CASE(from_tensor_and_back) {
  Tensor t = floats({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor l = must("TensorListFromTensor", {t, shape_input({-1})}, list_attrs());
  BOOST_TEST(length(l) == 3);
  BOOST_TEST(list(l).element_shape.to_string() == "[?]");
  BOOST_TEST(get_item(l, 2) == "float32[2] [5,6]");
  BOOST_TEST(stack(l) == t.debug_string());
  Tensor l2 = must("TensorListFromTensor", {t, shape_input({2})}, list_attrs());
  BOOST_TEST(stack(l2) == t.debug_string());
  BOOST_TEST(contains(error("TensorListFromTensor", {t, shape_input({3})}, list_attrs()),
                      "element_shape [3] does not fit the rows of a tensor of shape [3,2]"));
  BOOST_TEST(contains(error("TensorListFromTensor", {Tensor::scalar<float>(1), unknown_rank()}, list_attrs()),
                      "tensor must be at least a vector, got shape []"));
}

BOOST_AUTO_TEST_CASE(gather_picks_elements_in_index_order) {
  Tensor l = must("TensorListFromTensor", {floats({3}, {10, 20, 30}), shape_input({})}, list_attrs());
  auto gather = [&](std::vector<int32_t> idx) {
    auto t = run_op1("TensorListGather", {l, Tensor::vector<int32_t>(idx), unknown_rank()},
                     {{"element_dtype", DType::float32}});
    return t.ok() ? t->debug_string() : "error: " + t.status().to_string();
  };
  BOOST_TEST(gather({2, 0, 2}) == "float32[3] [30,10,30]");
  BOOST_TEST(gather({}) == "float32[0] []");
  BOOST_TEST(contains(gather({3}), "index 3 is out of range for a list of 3 elements"));
}

BOOST_AUTO_TEST_CASE(concat_along_the_first_dimension) {
  Tensor l = empty_list({-1, 2});
  l = push(l, floats({1, 2}, {1, 2}));
  l = push(l, floats({2, 2}, {3, 4, 5, 6}));
  auto out = must_all("TensorListConcatV2", {l, unknown_rank(), Tensor::vector<int64_t>({})}, list_attrs());
  BOOST_TEST(out[0].debug_string() == "float32[3,2] [[1,2],[3,4],[5,6]]");
  BOOST_TEST(out[1].debug_string() == "int64[2] [1,2]");
  // An unset element: its first dimension from leading_dims, zeros.
  Tensor gap = must("TensorListResize", {l, Tensor::scalar<int32_t>(3)}, {});
  out = must_all("TensorListConcatV2", {gap, unknown_rank(), Tensor::vector<int64_t>({0, 0, 1})}, list_attrs());
  BOOST_TEST(out[0].debug_string() == "float32[4,2] [[1,2],[3,4],[5,6],[0,0]]");
  BOOST_TEST(out[1].debug_string() == "int64[3] [1,2,1]");
  BOOST_TEST(contains(error("TensorListConcatV2", {gap, unknown_rank(), Tensor::vector<int64_t>({})}, list_attrs()),
                      "list element 2 is unset, its first dimension is unknown"));
  // Elements of equal first dimension fix it for the unset ones.
  Tensor even = reserve(shape_input({-1}), 3);
  even = set_item(even, 0, floats({2}, {1, 2}));
  even = set_item(even, 2, floats({2}, {3, 4}));
  out = must_all("TensorListConcatV2", {even, unknown_rank(), Tensor::vector<int64_t>({})}, list_attrs());
  BOOST_TEST(out[0].debug_string() == "float32[6] [1,2,0,0,3,4]");
  // Scalars cannot be concatenated; an empty list needs the rest of the shape.
  BOOST_TEST(contains(error("TensorListConcatV2", {empty_list({}), unknown_rank(), Tensor::vector<int64_t>({})},
                            list_attrs()),
                      "at least vectors"));
  out = must_all("TensorListConcatV2", {empty_list({-1, 3}), unknown_rank(), Tensor::vector<int64_t>({})},
                 list_attrs());
  BOOST_TEST(out[0].debug_string() == "float32[0,3] []");
}

BOOST_AUTO_TEST_CASE(scatter_into_new_and_existing_lists) {
  Tensor rows = floats({2, 2}, {1, 2, 3, 4});
  Tensor l = reserve(shape_input({2}), 3);
  Tensor s = must("TensorListScatterIntoExistingList", {l, rows, Tensor::vector<int32_t>({2, 0})},
                  {{"element_dtype", DType::float32}});
  BOOST_TEST(stack(s) == "float32[3,2] [[3,4],[0,0],[1,2]]");
  Tensor grown = must("TensorListScatterIntoExistingList", {l, rows, Tensor::vector<int32_t>({4, 0})},
                      {{"element_dtype", DType::float32}});
  BOOST_TEST(length(grown) == 5);
  BOOST_TEST(contains(error("TensorListScatterIntoExistingList", {l, rows, Tensor::vector<int32_t>({-1, 0})},
                            {{"element_dtype", DType::float32}}),
                      "scatter index -1 is negative"));
  BOOST_TEST(contains(error("TensorListScatterIntoExistingList", {l, rows, Tensor::vector<int32_t>({1})},
                            {{"element_dtype", DType::float32}}),
                      "needs 2 indices, got 1"));
  Tensor v2 = must("TensorListScatterV2", {rows, Tensor::vector<int32_t>({1, 0}), shape_input({2}),
                                           Tensor::scalar<int32_t>(4)}, list_attrs());
  BOOST_TEST(stack(v2) == "float32[4,2] [[3,4],[1,2],[0,0],[0,0]]");
  BOOST_TEST(contains(error("TensorListScatterV2", {rows, Tensor::vector<int32_t>({1, 4}), shape_input({2}),
                                                    Tensor::scalar<int32_t>(4)}, list_attrs()),
                      "scatter index 4 is out of range for a list of 4 elements"));
  Tensor v1 = must("TensorListScatter", {rows, Tensor::vector<int32_t>({1, 0}), shape_input({2})}, list_attrs());
  BOOST_TEST(stack(v1) == "float32[2,2] [[3,4],[1,2]]");
}

BOOST_AUTO_TEST_CASE(split_resize_and_push_back_batch) {
  Tensor t = floats({5}, {1, 2, 3, 4, 5});
  Tensor l = must("TensorListSplit", {t, shape_input({-1}), Tensor::vector<int64_t>({2, 0, 3})}, list_attrs());
  BOOST_TEST(length(l) == 3);
  BOOST_TEST(get_item(l, 0) == "float32[2] [1,2]");
  BOOST_TEST(get_item(l, 1) == "float32[0] []");
  BOOST_TEST(get_item(l, 2) == "float32[3] [3,4,5]");
  BOOST_TEST(contains(error("TensorListSplit", {t, shape_input({-1}), Tensor::vector<int64_t>({2, 2})}, list_attrs()),
                      "lengths add up to 4, the tensor has 5 rows"));
  Tensor shorter = must("TensorListResize", {l, Tensor::scalar<int32_t>(1)}, {});
  BOOST_TEST(length(shorter) == 1);
  BOOST_TEST(contains(error("TensorListResize", {l, Tensor::scalar<int32_t>(-1)}, {}), "non-negative size, got -1"));

  Tensor handles(DType::variant, Shape{2});
  handles.mutable_data<VariantPtr>()[0] = empty_list({}).data<VariantPtr>()[0];
  handles.mutable_data<VariantPtr>()[1] = push(empty_list({}), Tensor::scalar<float>(9)).data<VariantPtr>()[0];
  Tensor batch = must("TensorListPushBackBatch", {handles, floats({2}, {7, 8})}, {{"element_dtype", DType::float32}});
  const auto& first = static_cast<const TensorList&>(*batch.data<VariantPtr>()[0]);
  const auto& second = static_cast<const TensorList&>(*batch.data<VariantPtr>()[1]);
  BOOST_TEST(first.elements.size() == 1u);
  BOOST_TEST(first.elements[0].debug_string() == "float32[] 7");
  BOOST_TEST(second.elements.size() == 2u);
  BOOST_TEST(second.elements[1].debug_string() == "float32[] 8");
}

BOOST_AUTO_TEST_CASE(a_shared_list_is_copied_on_write_and_an_unshared_one_changed_in_place) {
  Tensor l = push(empty_list({}), Tensor::scalar<float>(1));
  const VariantValue* value = l.data<VariantPtr>()[0].get();
  // Shared: `keep` holds the same buffer, so the push copies.
  Tensor keep = l;
  Tensor pushed = push(l, Tensor::scalar<float>(2));
  BOOST_TEST(pushed.data<VariantPtr>()[0].get() != value);
  BOOST_TEST(length(keep) == 1);
  BOOST_TEST(stack(keep) == "float32[1] [1]");
  BOOST_TEST(stack(pushed) == "float32[2] [1,2]");
  // The element tensors themselves are shared, not copied.
  BOOST_TEST(list(pushed).elements[0].shares_buffer_with(list(keep).elements[0]));
  // The same value in another buffer is shared too.
  Tensor other = variant_scalar(keep.data<VariantPtr>()[0]);
  l = Tensor();
  Tensor pushed_other = push(std::move(other), Tensor::scalar<float>(3));
  BOOST_TEST(pushed_other.data<VariantPtr>()[0].get() != value);
  BOOST_TEST(stack(keep) == "float32[1] [1]");
  BOOST_TEST(stack(pushed_other) == "float32[2] [1,3]");
  // Unshared: the kernel holds the only tensor and the only value.
  const VariantValue* before = pushed.data<VariantPtr>()[0].get();
  Tensor in_place = push(std::move(pushed), Tensor::scalar<float>(4));
  BOOST_TEST(in_place.data<VariantPtr>()[0].get() == before);
  BOOST_TEST(stack(in_place) == "float32[3] [1,2,4]");
  // The same for SetItem, PopBack and Resize.
  Tensor set = set_item(std::move(in_place), 0, Tensor::scalar<float>(5));
  BOOST_TEST(set.data<VariantPtr>()[0].get() == before);
  auto popped = must_all("TensorListPopBack", moved(std::move(set), unknown_rank()), {{"element_dtype", DType::float32}});
  BOOST_TEST(popped[0].data<VariantPtr>()[0].get() == before);
  BOOST_TEST(stack(popped[0]) == "float32[2] [5,2]");
}

BOOST_AUTO_TEST_CASE(variant_tensors_compare_print_and_count_their_elements) {
  Tensor a = push(empty_list({2}), floats({2}, {1, 2}));
  Tensor b = push(empty_list({2}), floats({2}, {1, 2}));
  Tensor c = push(empty_list({2}), floats({2}, {1, 3}));
  BOOST_TEST((a == b));
  BOOST_TEST((a != c));
  BOOST_TEST((a != empty_list({2})));
  BOOST_TEST((Tensor(DType::variant, Shape{2}) == Tensor(DType::variant, Shape{2})));
  BOOST_TEST((Tensor(DType::variant, Shape{}) != a));
  Tensor big = push(empty_list({1000}), Tensor(DType::float32, Shape{1000}));
  BOOST_TEST(big.heap_bytes() > 4000u);
  BOOST_TEST(big.heap_bytes() < 4000u + 1024u);
  BOOST_TEST(Tensor(DType::variant, Shape{3}).debug_string() ==
             "variant[3] [<empty variant>,<empty variant>,<empty variant>]");
  // Kernels that move elements (here Pack and Identity) share the values.
  Tensor packed = must("Pack", {a, c}, {{"N", int64_t{2}}, {"T", DType::variant}, {"axis", int64_t{0}}});
  BOOST_TEST(packed.debug_string() == "variant[2] [TensorList<float32>[1 element],TensorList<float32>[1 element]]");
  BOOST_TEST(packed.data<VariantPtr>()[1].get() == c.data<VariantPtr>()[0].get());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(optional_ops)

BOOST_AUTO_TEST_CASE(from_value_has_value_and_get_value) {
  Tensor x = Tensor::scalar<float>(1.5f);
  Tensor y = Tensor::vector<int64_t>({4, 5});
  AttrList types;
  types.type = {DType::float32, DType::int64};
  Tensor o = must("OptionalFromValue", {x, y}, {{"Toutput_types", types}});
  BOOST_TEST(o.debug_string() == "variant[] Optional[2 components]");
  BOOST_TEST(must("OptionalHasValue", {o}, {}).scalar_value<bool>());
  AttrList shapes;
  shapes.shape = {PartialShape{false, {}}, PartialShape{false, {-1}}};
  auto out = must_all("OptionalGetValue", {o}, {{"output_types", types}, {"output_shapes", shapes}});
  BOOST_REQUIRE(out.size() == 2u);
  BOOST_TEST((out[0] == x));
  BOOST_TEST((out[1] == y));
  // Wrong types or shapes.
  AttrList wrong = types;
  wrong.type[1] = DType::int32;
  BOOST_TEST(contains(error("OptionalGetValue", {o}, {{"output_types", wrong}, {"output_shapes", shapes}}),
                      "component 1 of the optional is int64, output_types says int32"));
  AttrList wrong_shape = shapes;
  wrong_shape.shape[1] = PartialShape{false, {3}};
  BOOST_TEST(contains(error("OptionalGetValue", {o}, {{"output_types", types}, {"output_shapes", wrong_shape}}),
                      "component 1 of the optional has shape [2], output_shapes says [3]"));
}

BOOST_AUTO_TEST_CASE(none_has_no_value) {
  Tensor none = must("OptionalNone", {}, {});
  BOOST_TEST(none.debug_string() == "variant[] Optional<none>");
  BOOST_TEST(!must("OptionalHasValue", {none}, {}).scalar_value<bool>());
  AttrList types;
  types.type = {DType::float32};
  AttrList shapes;
  shapes.shape = {PartialShape{true, {}}};
  BOOST_TEST(contains(error("OptionalGetValue", {none}, {{"output_types", types}, {"output_shapes", shapes}}),
                      "the optional has no value"));
  BOOST_TEST(contains(error("OptionalHasValue", {empty_list({})}, {}), "optional is not an Optional"));
}

BOOST_AUTO_TEST_SUITE_END()
