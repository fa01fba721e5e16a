// GraphBuilder::map_fn and scan: while loops that read their inputs from
// TensorArrays and collect per-iteration results in TensorArrays — in the
// tf2 style from and in TensorLists, as TensorFlow 2's TensorArray does in
// a while_v2 loop (TensorListFromTensor / TensorListGetItem for the
// inputs, a TensorListReserve loop variable set by TensorListSetItem and
// stacked by TensorListStack for the results), so that the loop holds no
// state and its gradient can be differentiated again.
#include "graph/builder/builder.hpp"

namespace tagflow::graph {
inline namespace builder {

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

Outputs GraphBuilder::tensor_array_loop(const std::string& what, const std::string& name,
                                        const std::vector<Output>& elems,
                                        const std::vector<Output>& accumulators,
                                        const std::vector<DType>& collected, const ScanFn& fn,
                                        int64_t parallel_iterations) {
  if (!ok()) return {};
  const std::string scope = unique_name(scope_prefix(), name.empty() ? what : name);
  const std::string where = what + " " + quoted(scope);
  if (elems.empty()) {
    fail(Error::invalid_argument, where + " needs at least one tensor to iterate over");
    return {};
  }
  for (size_t i = 0; i < elems.size(); ++i)
    if (Status s = check_input(elems[i], where + " elems " + std::to_string(i)); !s.ok()) {
      record_error(s);
      return {};
    }
  scopes_.push_back(scope + "/");
  NameScope guard(this);

  // n = shape(elems[0])[0]; every input is scattered into a TensorArray
  // (tf2 style: made a TensorList).
  const Output zero = scalar(int32_t{0});
  const Output one = scalar(int32_t{1});
  const Output n = gather(shape(elems[0]), zero, zero, NodeOptions::unique("num_elems"));
  const bool lists = style_ == Style::tf2;
  const Output indices = lists ? Output{} : range(zero, n, one);
  // TensorArrays: a handle and a flow per tensor, read and written through
  // the handle, the flow a loop variable. TensorLists: the list itself
  // (an input list is captured by the body, a result list is a loop
  // variable); list ops take element_shape -1 (unknown), their elements
  // being set.
  const Output unknown_shape = lists ? scalar(int32_t{-1}) : Output{};
  auto list_attrs = [](DType t) { return ops::AttrMap{{"element_dtype", t}, {"shape_type", DType::int32}}; };
  std::vector<Output> in_handles, in_flows, out_handles, vars{zero};
  for (const Output& e : elems) {
    const DType t = ops::base_dtype(e.dtype);
    if (lists) {
      in_handles.push_back(op1("TensorListFromTensor", {e, unknown_shape}, list_attrs(t),
                               NodeOptions::unique("TensorListFromTensor")));
      continue;
    }
    Outputs ta = op("TensorArrayV3", {n}, {{"dtype", t}}, NodeOptions::unique("TensorArray"));
    in_handles.push_back(ta[0]);
    in_flows.push_back(op1("TensorArrayScatterV3", {ta[0], indices, e, ta[1]}, {},
                           NodeOptions::unique("TensorArrayScatter")));
  }
  vars.insert(vars.end(), accumulators.begin(), accumulators.end());
  for (DType t : collected) {
    if (lists) {
      vars.push_back(op1("TensorListReserve", {unknown_shape, n}, list_attrs(t), NodeOptions::unique("TensorListReserve")));
      continue;
    }
    Outputs ta = op("TensorArrayV3", {n}, {{"dtype", t}}, NodeOptions::unique("TensorArray"));
    out_handles.push_back(ta[0]);
    vars.push_back(ta[1]);
  }
  if (!ok()) return {};
  const size_t num_acc = accumulators.size();

  auto cond_fn = [&](const std::vector<Output>& v) { return less(v[0], n); };
  auto body_fn = [&](const std::vector<Output>& v) -> std::vector<Output> {
    const Output i = v[0];
    std::vector<Output> slices;
    for (size_t k = 0; k < elems.size(); ++k) {
      const DType t = ops::base_dtype(elems[k].dtype);
      slices.push_back(lists ? op1("TensorListGetItem", {in_handles[k], i, unknown_shape}, {{"element_dtype", t}},
                                   NodeOptions::unique("TensorListGetItem"))
                             : op1("TensorArrayReadV3", {in_handles[k], i, in_flows[k]}, {{"dtype", t}},
                                   NodeOptions::unique("TensorArrayRead")));
    }
    std::vector<Output> acc(v.begin() + 1, v.begin() + 1 + static_cast<std::ptrdiff_t>(num_acc));
    std::vector<Output> results = fn(acc, slices);
    if (!ok()) return {};
    if (results.size() != collected.size()) {
      fail(Error::invalid_argument, where + ": fn returns " + std::to_string(results.size()) +
                                        " tensors but " + std::to_string(collected.size()) +
                                        " were expected");
      return {};
    }
    std::vector<Output> next{add(i, one)};
    for (size_t k = 0; k < results.size(); ++k) {
      if (k < num_acc) next.push_back(results[k]);
      if (ok() && ops::base_dtype(results[k].dtype) != collected[k]) {
        fail(Error::invalid_argument, where + ": fn result " + std::to_string(k) + " is " +
                                          ops::dtype_name(results[k].dtype) + " but " +
                                          ops::dtype_name(collected[k]) + " was expected");
        return {};
      }
    }
    for (size_t k = 0; k < results.size(); ++k)
      next.push_back(lists ? op1("TensorListSetItem", {v[1 + num_acc + k], i, results[k]},
                                 {{"element_dtype", collected[k]}}, NodeOptions::unique("TensorListSetItem"))
                           : op1("TensorArrayWriteV3", {out_handles[k], i, results[k], v[1 + num_acc + k]}, {},
                                 NodeOptions::unique("TensorArrayWrite")));
    return next;
  };
  WhileOptions options;
  options.parallel_iterations = parallel_iterations;
  Outputs exits = while_loop(cond_fn, body_fn, vars, options);
  if (!ok()) return {};
  std::vector<Output> stacked;
  for (size_t k = 0; k < collected.size(); ++k) {
    const Output list = exits[1 + num_acc + k];
    stacked.push_back(lists ? op1("TensorListStack", {list, unknown_shape}, {{"element_dtype", collected[k]}},
                                  NodeOptions::unique("TensorListStack"))
                            : op1("TensorArrayGatherV3", {out_handles[k], indices, list}, {{"dtype", collected[k]}},
                                  NodeOptions::unique("TensorArrayGather")));
  }
  if (!ok()) return {};
  return Outputs(stacked, stacked.empty() ? exits.control() : stacked.front().control());
}

Outputs GraphBuilder::map_fn(const MapFn& fn, const std::vector<Output>& elems,
                             const std::vector<DType>& out_dtypes, const std::string& name,
                             int64_t parallel_iterations) {
  if (GraphBuilder* t = forward_target()) return t->map_fn(fn, elems, out_dtypes, name, parallel_iterations);
  std::vector<DType> collected = out_dtypes;
  if (collected.empty())
    for (const Output& e : elems) collected.push_back(ops::base_dtype(e.dtype));
  ScanFn each = [&](const std::vector<Output>&, const std::vector<Output>& slices) {
    return fn(slices);
  };
  return tensor_array_loop("map", name, elems, {}, collected, each, parallel_iterations);
}

Outputs GraphBuilder::scan(const ScanFn& fn, const std::vector<Output>& elems,
                           const std::vector<Output>& initializer, const std::string& name,
                           int64_t parallel_iterations) {
  if (GraphBuilder* t = forward_target()) return t->scan(fn, elems, initializer, name, parallel_iterations);
  std::vector<DType> collected;
  for (const Output& a : initializer) collected.push_back(ops::base_dtype(a.dtype));
  if (ok() && initializer.empty()) {
    fail(Error::invalid_argument, "scan needs at least one initial accumulator");
    return {};
  }
  return tensor_array_loop("scan", name, elems, initializer, collected, fn, parallel_iterations);
}

}  // namespace builder
}  // namespace tagflow::graph
