// The gradient functions of the TensorList ops, in the form of TensorFlow's
// list_ops.py: a list's gradient is a list of its elements' gradients (an
// unset element reads as zeros), so
//   - PushBack's gradient pops the element's gradient off the list's;
//   - PopBack's pushes the element's gradient back on (onto zeros of the
//     list when the list has no gradient: ZerosLike of a list is a list of
//     as many unset elements);
//   - Stack's is FromTensor, FromTensor's is Stack;
//   - GetItem's sets the item's gradient into zeros of the list;
//   - SetItem's reads the item's gradient out and zeros it in the list's;
//   - Gather's scatters into zeros of the list, Scatter's gathers (indices
//     are taken to be distinct, as TensorFlow takes them);
//   - ConcatV2's is Split by the forward lengths, Split's is ConcatV2;
//   - Resize's resizes the gradient back to the input list's length.
// EmptyTensorList, TensorListReserve, TensorListLength and
// TensorListElementShape are not differentiable (sizes and shapes).
// They carry a While's gradient of a gradient (graph/autodiff/while_gradients.cpp):
// the gradient While pops what the forward While pushed, and
// differentiating it again pushes what the forward gradient pops.
// Gradients reach list values only with GradientOptions::functional.
// Added to GradientRegistry::global() by gradient_functions.cpp.
#include "graph/autodiff/gradient_util.hpp"

namespace tagflow::graph {
inline namespace autodiff {

namespace {

using namespace gradient_util;


AttrMap element_dtype(C& c) {
  AttrMap attrs;
  auto it = c.node().attrs.find("element_dtype");
  if (it != c.node().attrs.end()) attrs["element_dtype"] = it->second;
  return attrs;
}

// Whether an element of this dtype takes a gradient: numbers, and the
// lists and optionals a nested functional op's accumulators hold.
bool element_flows(DType t) { return is_differentiable(t) || t == DType::variant; }

// The list gradient of output `i`, or zeros of that list.
Expected<Endpoint> list_dy(C& c, int i) {
  if (std::optional<Endpoint> d = c.dy(i)) return *d;
  TRY(Endpoint out, c.output(i));
  return c.op1("ZerosLike", {out}, {{"T", DType::variant}});
}

// The shape of a tensor's rows (its shape without the first dimension).
Expected<Endpoint> row_shape(C& c, Endpoint t) {
  TRY(Endpoint shape, c.op1("Shape", {t}, {{"out_type", DType::int32}}));
  TRY(Endpoint begin, c.int_vector({1}));
  TRY(Endpoint size, c.int_vector({-1}));
  return c.op1("Slice", {shape, begin, size}, {{"T", DType::int32}, {"Index", DType::int32}});
}

// TensorListPushBack(list, x) -> list'.
Status push_back_grad(C& c) {
  std::optional<Endpoint> d = c.dy(0);
  if (!d) return ok_status();
  TRY(Endpoint x, c.input(1));
  TRY(Endpoint shape, c.op1("Shape", {x}, {{"out_type", DType::int32}}));
  TRY(std::vector<Endpoint> popped, c.op("TensorListPopBack", {*d, shape}, element_dtype(c)));
  c.set(0, popped[0]);
  if (element_flows(c.input_type(1))) c.set(1, popped[1]);
  return ok_status();
}

// TensorListPopBack(list, element_shape) -> (list', x).
Status pop_back_grad(C& c) {
  if (!c.dy(0) && !c.dy(1)) return ok_status();
  TRY(Endpoint dlist, list_dy(c, 0));
  TRY(Endpoint dx, c.dy_or_zeros(1));
  TRY(Endpoint pushed, c.op1("TensorListPushBack", {dlist, dx}, element_dtype(c)));
  c.set(0, pushed);
  return ok_status();
}

// TensorListStack(list, element_shape) -> tensor.
Status stack_grad(C& c) {
  std::optional<Endpoint> d = c.dy(0);
  if (!d) return ok_status();
  TRY(Endpoint shape, c.input(1));
  AttrMap attrs = element_dtype(c);
  attrs["shape_type"] = DType::int32;
  TRY(Endpoint list, c.op1("TensorListFromTensor", {*d, shape}, attrs));
  c.set(0, list);
  return ok_status();
}

// TensorListFromTensor(tensor, element_shape) -> list.
Status from_tensor_grad(C& c) {
  std::optional<Endpoint> d = c.dy(0);
  if (!d || !is_differentiable(c.input_type(0))) return ok_status();
  TRY(Endpoint t, c.input(0));
  TRY(Endpoint element_shape, row_shape(c, t));
  TRY(Endpoint stacked, c.op1("TensorListStack", {*d, element_shape}, element_dtype(c)));
  c.set(0, stacked);
  return ok_status();
}

// TensorListGetItem(list, index, element_shape) -> item.
Status get_item_grad(C& c) {
  std::optional<Endpoint> d = c.dy(0);
  if (!d) return ok_status();
  TRY(Endpoint list, c.input(0));
  TRY(Endpoint index, c.input(1));
  TRY(Endpoint zeros, c.op1("ZerosLike", {list}, {{"T", DType::variant}}));
  TRY(Endpoint set, c.op1("TensorListSetItem", {zeros, index, *d}, element_dtype(c)));
  c.set(0, set);
  return ok_status();
}

// TensorListSetItem(list, index, item) -> list'.
Status set_item_grad(C& c) {
  std::optional<Endpoint> d = c.dy(0);
  if (!d) return ok_status();
  TRY(Endpoint index, c.input(1));
  TRY(Endpoint item, c.input(2));
  TRY(Endpoint shape, c.op1("Shape", {item}, {{"out_type", DType::int32}}));
  if (element_flows(c.input_type(2))) {
    TRY(Endpoint ditem, c.op1("TensorListGetItem", {*d, index, shape}, element_dtype(c)));
    c.set(2, ditem);
  }
  TRY(Endpoint zero, c.op1("ZerosLike", {item}));
  TRY(Endpoint dlist, c.op1("TensorListSetItem", {*d, index, zero}, element_dtype(c)));
  c.set(0, dlist);
  return ok_status();
}

// The element shape of the list a tensor is split into (or concatenated
// from): its rows' shape with an unknown first dimension.
Expected<Endpoint> split_shape(C& c, Endpoint t) {
  TRY(Endpoint rows, row_shape(c, t));
  TRY(Endpoint unknown, c.int_vector({-1}));
  TRY(Endpoint axis, c.scalar(DType::int32, 0));
  return c.op1("ConcatV2", {unknown, rows, axis});
}

// TensorListGather(list, indices, element_shape) -> values.
Status gather_grad(C& c) {
  std::optional<Endpoint> d = c.dy(0);
  if (!d) return ok_status();
  TRY(Endpoint list, c.input(0));
  TRY(Endpoint indices, c.input(1));
  TRY(Endpoint zeros, c.op1("ZerosLike", {list}, {{"T", DType::variant}}));
  TRY(Endpoint scattered, c.op1("TensorListScatterIntoExistingList", {zeros, *d, indices}, element_dtype(c)));
  c.set(0, scattered);
  return ok_status();
}

// TensorListScatter(tensor, indices, element_shape) and TensorListScatterV2
// (with num_elements) -> list.
Status scatter_grad(C& c) {
  std::optional<Endpoint> d = c.dy(0);
  if (!d || !is_differentiable(c.input_type(0))) return ok_status();
  TRY(Endpoint t, c.input(0));
  TRY(Endpoint indices, c.input(1));
  TRY(Endpoint rows, row_shape(c, t));
  TRY(Endpoint gathered, c.op1("TensorListGather", {*d, indices, rows}, element_dtype(c)));
  c.set(0, gathered);
  return ok_status();
}

// TensorListScatterIntoExistingList(list, tensor, indices) -> list'.
Status scatter_into_grad(C& c) {
  std::optional<Endpoint> d = c.dy(0);
  if (!d) return ok_status();
  TRY(Endpoint t, c.input(1));
  TRY(Endpoint indices, c.input(2));
  if (element_flows(c.input_type(1))) {
    TRY(Endpoint rows, row_shape(c, t));
    TRY(Endpoint gathered, c.op1("TensorListGather", {*d, indices, rows}, element_dtype(c)));
    c.set(1, gathered);
  }
  TRY(Endpoint zeros, c.op1("ZerosLike", {t}));
  TRY(Endpoint dlist, c.op1("TensorListScatterIntoExistingList", {*d, zeros, indices}, element_dtype(c)));
  c.set(0, dlist);
  return ok_status();
}

// TensorListConcatV2(list, element_shape, leading_dims) -> (tensor, lengths).
Status concat_grad(C& c) {
  std::optional<Endpoint> d = c.dy(0);
  if (!d) return ok_status();
  TRY(Endpoint lengths, c.output(1));
  TRY(Endpoint shape, split_shape(c, *d));
  AttrMap attrs = element_dtype(c);
  attrs["shape_type"] = DType::int32;
  TRY(Endpoint split, c.op1("TensorListSplit", {*d, shape, lengths}, attrs));
  c.set(0, split);
  return ok_status();
}

// TensorListSplit(tensor, element_shape, lengths) -> list.
Status split_grad(C& c) {
  std::optional<Endpoint> d = c.dy(0);
  if (!d || !is_differentiable(c.input_type(0))) return ok_status();
  TRY(Endpoint t, c.input(0));
  TRY(Endpoint lengths, c.input(2));
  TRY(Endpoint shape, split_shape(c, t));
  AttrMap attrs = element_dtype(c);
  attrs["shape_type"] = DType::int32;
  TRY(std::vector<Endpoint> concat, c.op("TensorListConcatV2", {*d, shape, lengths}, attrs));
  c.set(0, concat[0]);
  return ok_status();
}

// TensorListResize(list, size) -> list'.
Status resize_grad(C& c) {
  std::optional<Endpoint> d = c.dy(0);
  if (!d) return ok_status();
  TRY(Endpoint list, c.input(0));
  TRY(Endpoint length, c.op1("TensorListLength", {list}));
  TRY(Endpoint resized, c.op1("TensorListResize", {*d, length}));
  c.set(0, resized);
  return ok_status();
}

}  // namespace

bool is_list_gradient_op(const std::string& op) {
  return op == "TensorListPushBack" || op == "TensorListPopBack" || op == "TensorListStack" ||
         op == "TensorListFromTensor" || op == "TensorListGetItem" || op == "TensorListSetItem" ||
         op == "TensorListGather" || op == "TensorListScatterIntoExistingList" || op == "TensorListConcatV2" ||
         op == "TensorListResize";
}

void add_list_gradients(GradientRegistry& r) {
  add(r, "TensorListPushBack", push_back_grad);
  add(r, "TensorListPopBack", pop_back_grad);
  add(r, "TensorListStack", stack_grad);
  add(r, "TensorListFromTensor", from_tensor_grad);
  add(r, "TensorListGetItem", get_item_grad);
  add(r, "TensorListSetItem", set_item_grad);
  add(r, "TensorListGather", gather_grad);
  add(r, "TensorListScatter", scatter_grad);
  add(r, "TensorListScatterV2", scatter_grad);
  add(r, "TensorListScatterIntoExistingList", scatter_into_grad);
  add(r, "TensorListConcatV2", concat_grad);
  add(r, "TensorListSplit", split_grad);
  add(r, "TensorListResize", resize_grad);
  for (const char* op : {"EmptyTensorList", "TensorListReserve", "TensorListLength", "TensorListElementShape"})
    r.add_not_differentiable(op);
}

}  // namespace autodiff
}  // namespace tagflow::graph
