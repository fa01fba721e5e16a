// The kernels of the stateful ops (ops/state_kernels.hpp) run the way the
// executor runs them: one ResourceManager for the session, a step id per
// call, handles passed from the creating op to the others.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "op_result.hpp"
#include "ops/resource.hpp"

using namespace tagflow::ops;
using testing::contains;
using testing::RunOptions;
using testing::tensor;

namespace {

const DType f32 = DType::float32;
const DType i32 = DType::int32;

// One session: its state, and the step the next call runs in.
struct Session {
  ResourceManager rm;
  uint64_t step = 1;

  Expected<std::vector<Tensor>> run(const std::string& op, std::vector<Tensor> inputs,
                                    AttrMap attrs = {}, const std::string& node = "") {
    return testing::run_op(op, std::move(inputs), std::move(attrs), RunOptions{&rm, step, node});
  }
  // Output 0 printed, "ok" for an op without outputs, or "error: ...".
  std::string show(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs = {},
                   const std::string& node = "") {
    auto out = run(op, std::move(inputs), std::move(attrs), node);
    if (!out.ok()) return "error: " + out.status().to_string();
    return out->empty() ? "ok" : (*out)[0].debug_string();
  }
  // Output 0, which the test expects to succeed.
  Tensor get(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs = {},
             const std::string& node = "") {
    auto out = run(op, std::move(inputs), std::move(attrs), node);
    BOOST_TEST_REQUIRE(out.ok(), op << ": " << out.status().to_string());
    return (*out)[0];
  }
  std::string handle_of(const Tensor& h) { return h.scalar_value<std::string>(); }

  // --- TensorArray shorthands --------------------------------------------
  Tensor array(int32_t size, AttrMap attrs = {}) {
    attrs.emplace("dtype", f32);
    return get("TensorArrayV3", {Tensor::scalar<int32_t>(size)}, attrs, "ta");
  }
  std::string write(const Tensor& ta, int32_t index, Tensor value) {
    return show("TensorArrayWriteV3", {ta, Tensor::scalar<int32_t>(index), std::move(value), flow()},
                {{"T", f32}});
  }
  std::string read(const Tensor& ta, int32_t index) {
    return show("TensorArrayReadV3", {ta, Tensor::scalar<int32_t>(index), flow()}, {{"dtype", f32}});
  }
  static Tensor flow() { return Tensor::scalar<float>(0); }
};

Tensor f(std::vector<float> v) { return Tensor::vector<float>(v); }
Tensor fs(float v) { return Tensor::scalar<float>(v); }
Tensor i32s(int32_t v) { return Tensor::scalar<int32_t>(v); }

}  // namespace

BOOST_AUTO_TEST_SUITE(state_ops)

// --- resource variables ----------------------------------------------------------

BOOST_AUTO_TEST_CASE(var_handle_names_container_and_shared_name) {
  Session s;
  AttrMap a{{"dtype", f32}, {"shape", PartialShape{}}};
  BOOST_TEST(s.handle_of(s.get("VarHandleOp", {}, a, "layer/w")) == "/layer/w");
  a["container"] = "c";
  BOOST_TEST(s.handle_of(s.get("VarHandleOp", {}, a, "layer/w")) == "c/layer/w");
  a["shared_name"] = "shared";
  BOOST_TEST(s.handle_of(s.get("VarHandleOp", {}, a, "layer/w")) == "c/shared");
  BOOST_TEST(s.show("VariableV2", {}, {{"dtype", f32}, {"shape", PartialShape{}}}, "v") ==
             "resource[] \"/v\"");
}

BOOST_AUTO_TEST_CASE(resource_variable_lives_across_steps) {
  Session s;
  Tensor v = s.get("VarHandleOp", {}, {{"dtype", f32}, {"shape", PartialShape{false, {2}}}}, "v");
  BOOST_TEST(s.show("VarIsInitializedOp", {v}) == "bool[] false");
  BOOST_TEST(s.show("ReadVariableOp", {v}, {{"dtype", f32}}) ==
             "error: failed_precondition: variable '/v' is not initialized");
  BOOST_TEST(s.show("AssignVariableOp", {v, f({1, 2})}, {{"dtype", f32}}) == "ok");
  s.rm.end_step(s.step++);
  BOOST_TEST(s.show("VarIsInitializedOp", {v}) == "bool[] true");
  BOOST_TEST(s.show("ReadVariableOp", {v}, {{"dtype", f32}}) == "float32[2] [1,2]");
  BOOST_TEST(s.show("AssignAddVariableOp", {v, f({10, 10})}, {{"dtype", f32}}) == "ok");
  s.rm.end_step(s.step++);
  BOOST_TEST(s.show("AssignSubVariableOp", {v, f({1, 2})}, {{"dtype", f32}}) == "ok");
  BOOST_TEST(s.show("ReadVariableOp", {v}, {{"dtype", f32}}) == "float32[2] [10,10]");
}

BOOST_AUTO_TEST_CASE(resource_variable_dtypes_are_checked) {
  Session s;
  Tensor v = s.get("VarHandleOp", {}, {{"dtype", f32}, {"shape", PartialShape{}}}, "v");
  BOOST_TEST(s.show("AssignVariableOp", {v, i32s(1)}, {{"dtype", i32}}) ==
             "error: invalid_argument: cannot assign a int32 value to variable '/v' of dtype "
             "float32");
  BOOST_TEST(s.show("AssignVariableOp", {v, fs(1)}, {{"dtype", f32}}) == "ok");
  BOOST_TEST(s.show("ReadVariableOp", {v}, {{"dtype", i32}}) ==
             "error: invalid_argument: variable '/v' holds float32, not int32");
  BOOST_TEST(s.show("AssignAddVariableOp", {v, f({1, 2})}, {{"dtype", f32}}) ==
             "error: invalid_argument: cannot add float32[2] to variable '/v', which is "
             "float32[]");
  BOOST_TEST(s.show("ReadVariableOp", {fs(1)}, {{"dtype", f32}}) ==
             "error: invalid_argument: resource must be a scalar resource handle, got float32[] 1");
}

BOOST_AUTO_TEST_CASE(resource_variable_validate_shape) {
  Session s;
  Tensor v = s.get("VarHandleOp", {}, {{"dtype", f32}, {"shape", PartialShape{false, {2}}}}, "v");
  AttrMap validate{{"dtype", f32}, {"validate_shape", true}};
  BOOST_TEST(s.show("AssignVariableOp", {v, f({1, 2, 3})}, validate) ==
             "error: invalid_argument: cannot assign a value of shape [3] to variable '/v' of "
             "shape [2] (validate_shape is set)");
  BOOST_TEST(s.show("AssignVariableOp", {v, f({1, 2, 3})}, {{"dtype", f32}}) == "ok");
}

BOOST_AUTO_TEST_CASE(kernels_without_session_state_fail_cleanly) {
  BOOST_TEST(testing::error_of("VarHandleOp", {}, {{"dtype", f32}, {"shape", PartialShape{}}}) ==
             "failed_precondition: this op needs session state (a ResourceManager), and the "
             "caller gave none");
  BOOST_TEST(testing::error_of("StackPopV2", {make_handle("s")}, {{"elem_type", f32}}) ==
             "failed_precondition: this op needs session state (a ResourceManager), and the "
             "caller gave none");
}

// --- ref variables ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(ref_variable_outputs_a_handle_and_assign_passes_it_on) {
  Session s;
  Tensor ref = s.get("VariableV2", {}, {{"dtype", f32}, {"shape", PartialShape{false, {2}}}}, "w");
  BOOST_TEST((ref.dtype() == DType::resource));
  BOOST_TEST(s.show("IsVariableInitialized", {ref}, {{"dtype", f32}}) == "bool[] false");
  BOOST_TEST(deref(ref, s.rm).status().to_string() ==
             "failed_precondition: variable '/w' is not initialized");

  Tensor out = s.get("Assign", {ref, f({1, 2})}, {{"T", f32}});
  BOOST_TEST((out == ref));
  BOOST_TEST(deref(out, s.rm)->debug_string() == "float32[2] [1,2]");
  BOOST_TEST(s.show("IsVariableInitialized", {ref}, {{"dtype", f32}}) == "bool[] true");

  s.rm.end_step(s.step++);
  BOOST_TEST((s.get("AssignAdd", {ref, f({1, 1})}, {{"T", f32}}) == ref));
  BOOST_TEST((s.get("AssignAdd", {ref, f({1, 1})}, {{"T", f32}}) == ref));
  BOOST_TEST((s.get("AssignSub", {ref, f({0.5f, 0.5f})}, {{"T", f32}}) == ref));
  BOOST_TEST(deref(ref, s.rm)->debug_string() == "float32[2] [2.5,3.5]");
}

BOOST_AUTO_TEST_CASE(ref_assign_validates_the_shape_unless_told_not_to) {
  Session s;
  Tensor ref = s.get("VariableV2", {}, {{"dtype", f32}, {"shape", PartialShape{false, {2}}}}, "w");
  BOOST_TEST(s.show("Assign", {ref, f({1, 2, 3})}, {{"T", f32}}) ==
             "error: invalid_argument: cannot assign a value of shape [3] to variable '/w' of "
             "shape [2] (validate_shape is set)");
  BOOST_TEST(s.show("Assign", {ref, f({1, 2, 3})}, {{"T", f32}, {"validate_shape", false}}) ==
             "resource[] \"/w\"");
  BOOST_TEST(deref(ref, s.rm)->debug_string() == "float32[3] [1,2,3]");
  BOOST_TEST(s.show("AssignAdd", {ref, f({1})}, {{"T", f32}}) ==
             "error: invalid_argument: cannot add float32[1] to variable '/w', which is "
             "float32[3]");
  BOOST_TEST(s.show("Assign", {fs(1), fs(2)}, {{"T", f32}}) ==
             "error: invalid_argument: input 0 must be a scalar resource handle, got float32[] 1");
}

BOOST_AUTO_TEST_CASE(four_threads_add_to_one_resource_variable) {
  Session s;
  Tensor v = s.get("VarHandleOp", {}, {{"dtype", DType::int64}, {"shape", PartialShape{}}}, "n");
  BOOST_TEST(s.show("AssignVariableOp", {v, Tensor::scalar<int64_t>(0)},
                    {{"dtype", DType::int64}}) == "ok");
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        auto out = testing::run_op("AssignAddVariableOp", {v, Tensor::scalar<int64_t>(1)},
                                   {{"dtype", DType::int64}},
                                   RunOptions{&s.rm, static_cast<uint64_t>(t), "add"});
        if (!out.ok()) ++failures;
      }
    });
  for (auto& t : threads) t.join();
  BOOST_TEST(failures.load() == 0);
  BOOST_TEST(s.show("ReadVariableOp", {v}, {{"dtype", DType::int64}}) == "int64[] 4000");
}

// --- stacks ----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(stack_push_returns_the_element_and_pop_reverses) {
  Session s;
  s.step = 5;
  Tensor h = s.get("StackV2", {i32s(-1)}, {{"elem_type", f32}}, "while/acc");
  BOOST_TEST(s.handle_of(h).rfind("while/acc#", 0) == 0u);
  BOOST_TEST(contains(s.handle_of(h), "@step5"));
  BOOST_TEST(s.show("StackPushV2", {h, fs(1)}, {{"T", f32}}) == "float32[] 1");
  BOOST_TEST(s.show("StackPushV2", {h, fs(2)}, {{"T", f32}}) == "float32[] 2");
  BOOST_TEST(s.show("StackPopV2", {h}, {{"elem_type", f32}}) == "float32[] 2");
  BOOST_TEST(s.show("StackPopV2", {h}, {{"elem_type", f32}}) == "float32[] 1");
  BOOST_TEST(s.show("StackPopV2", {h}, {{"elem_type", f32}}) ==
             "error: out_of_range: stack '" + s.handle_of(h) + "' is empty: nothing to pop");
  BOOST_TEST(s.show("StackPushV2", {h, i32s(1)}, {{"T", i32}}) ==
             "error: invalid_argument: cannot push a int32 value onto stack '" + s.handle_of(h) +
                 "' of float32");
  BOOST_TEST(s.show("StackCloseV2", {h}) == "ok");
  BOOST_TEST(s.show("StackPushV2", {h, fs(1)}, {{"T", f32}}) ==
             "error: failed_precondition: stack '" + s.handle_of(h) + "' has been closed");
}

BOOST_AUTO_TEST_CASE(stack_max_size_bounds_the_pushes) {
  Session s;
  Tensor h = s.get("StackV2", {i32s(1)}, {{"elem_type", f32}}, "st");
  BOOST_TEST(s.show("StackPushV2", {h, fs(1)}, {{"T", f32}}) == "float32[] 1");
  BOOST_TEST(s.show("StackPushV2", {h, fs(2)}, {{"T", f32}}) ==
             "error: out_of_range: stack '" + s.handle_of(h) +
                 "' is full: it already holds its max_size of 1 elements");
  BOOST_TEST(s.show("StackV2", {f({1, 2})}, {{"elem_type", f32}}) ==
             "error: invalid_argument: max_size must be a scalar, got shape [2]");
}

BOOST_AUTO_TEST_CASE(each_step_gets_its_own_stack_and_end_step_frees_it) {
  Session s;
  Tensor h1 = s.get("StackV2", {i32s(-1)}, {{"elem_type", f32}}, "st");
  BOOST_TEST(s.show("StackPushV2", {h1, fs(1)}, {{"T", f32}}) == "float32[] 1");
  s.step = 2;
  Tensor h2 = s.get("StackV2", {i32s(-1)}, {{"elem_type", f32}}, "st");
  BOOST_TEST(s.handle_of(h1) != s.handle_of(h2));
  BOOST_TEST(s.show("StackPopV2", {h2}, {{"elem_type", f32}}) ==
             "error: out_of_range: stack '" + s.handle_of(h2) + "' is empty: nothing to pop");
  s.rm.end_step(1);
  BOOST_TEST(s.show("StackPopV2", {h1}, {{"elem_type", f32}}) ==
             "error: not_found: stack '" + s.handle_of(h1) +
                 "' does not exist (never created, or freed when its step ended)");
  BOOST_TEST(s.show("StackPushV2", {h2, fs(3)}, {{"T", f32}}) == "float32[] 3");
  s.rm.end_step(2);
  BOOST_TEST(s.rm.num_stacks() == 0u);
}

// --- TensorArrays ----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(tensor_array_outputs_a_handle_and_a_flow) {
  Session s;
  auto out = s.run("TensorArrayV3", {i32s(2)}, {{"dtype", f32}}, "ta");
  BOOST_TEST_REQUIRE(out.ok());
  BOOST_TEST(s.handle_of((*out)[0]).rfind("ta#", 0) == 0u);
  BOOST_TEST((*out)[1].debug_string() == "float32[] 0");
  BOOST_TEST(s.show("TensorArrayV3", {i32s(-2)}, {{"dtype", f32}}) ==
             "error: invalid_argument: TensorArray size must be in [0, 16777216], got -2");
}

BOOST_AUTO_TEST_CASE(tensor_array_write_then_read) {
  Session s;
  Tensor ta = s.array(3);
  BOOST_TEST(s.write(ta, 0, f({1, 2})) == "float32[] 0");  // flow_out
  BOOST_TEST(s.write(ta, 2, f({5, 6})) == "float32[] 0");
  BOOST_TEST(s.read(ta, 2) == "float32[2] [5,6]");
  BOOST_TEST(s.show("TensorArraySizeV3", {ta, Session::flow()}) == "int32[] 3");
  const std::string name = s.handle_of(ta);
  BOOST_TEST(s.read(ta, 2) == "error: failed_precondition: cannot read TensorArray '" + name +
                                  "' index 2 again: an earlier read cleared it (clear_after_read)");
  BOOST_TEST(s.write(ta, 2, f({7, 8})) == "error: invalid_argument: cannot write TensorArray '" +
                                              name + "' index 2: it has already been read");
}

BOOST_AUTO_TEST_CASE(tensor_array_double_write_unwritten_read_and_bad_indices) {
  Session s;
  Tensor ta = s.array(2);
  const std::string name = s.handle_of(ta);
  BOOST_TEST(s.write(ta, 0, fs(1)) == "float32[] 0");
  BOOST_TEST(s.write(ta, 0, fs(2)) == "error: invalid_argument: cannot write TensorArray '" +
                                          name + "' index 0 twice: it has already been written");
  BOOST_TEST(s.read(ta, 1) == "error: failed_precondition: cannot read TensorArray '" + name +
                                  "' index 1: it has not been written");
  BOOST_TEST(s.write(ta, 2, fs(1)) == "error: out_of_range: cannot write TensorArray '" + name +
                                          "' index 2: the array has size 2 and is not "
                                          "dynamic_size");
  BOOST_TEST(s.write(ta, -1, fs(1)) == "error: out_of_range: cannot write TensorArray '" + name +
                                           "' index -1: it is negative");
  BOOST_TEST(s.read(ta, 5) == "error: out_of_range: cannot read TensorArray '" + name +
                                  "' index 5: the array has size 2");
  BOOST_TEST(s.write(ta, 1, i32s(1)) == "error: invalid_argument: cannot write a int32 value to "
                                        "TensorArray '" + name + "' of float32");
  BOOST_TEST(s.show("TensorArrayReadV3", {ta, i32s(0), Session::flow()}, {{"dtype", i32}}) ==
             "error: invalid_argument: TensorArray '" + name + "' holds float32, not int32");
  BOOST_TEST(s.read(ta, 0) == "float32[] 1");  // the failed calls changed nothing
}

BOOST_AUTO_TEST_CASE(dynamic_size_arrays_grow_on_write) {
  Session s;
  Tensor ta = s.array(0, {{"dynamic_size", true}});
  BOOST_TEST(s.write(ta, 4, fs(4)) == "float32[] 0");
  BOOST_TEST(s.show("TensorArraySizeV3", {ta, Session::flow()}) == "int32[] 5");
  BOOST_TEST(s.read(ta, 4) == "float32[] 4");
}

BOOST_AUTO_TEST_CASE(element_shapes_are_enforced) {
  Session s;
  Tensor ta = s.array(3, {{"element_shape", PartialShape{false, {-1, 2}}}});
  const std::string name = s.handle_of(ta);
  BOOST_TEST(s.write(ta, 0, f({1, 2})) ==
             "error: invalid_argument: cannot write a value of shape [2] to TensorArray '" + name +
                 "' index 0: elements have shape [?,2]");
  BOOST_TEST(s.write(ta, 0, tensor<float>({1, 2}, {1, 2})) == "float32[] 0");

  Tensor same = s.array(3, {{"identical_element_shapes", true}});
  BOOST_TEST(s.write(same, 0, f({1, 2})) == "float32[] 0");
  BOOST_TEST(s.write(same, 1, f({1, 2, 3})) ==
             "error: invalid_argument: cannot write a value of shape [3] to TensorArray '" +
                 s.handle_of(same) + "' index 1: elements have shape [2]");
}

BOOST_AUTO_TEST_CASE(gather_and_scatter) {
  Session s;
  Tensor ta = s.array(3, {{"clear_after_read", false}});
  BOOST_TEST(s.show("TensorArrayScatterV3",
                    {ta, Tensor::vector<int32_t>({2, 0}), tensor<float>({2, 2}, {1, 2, 3, 4}),
                     Session::flow()},
                    {{"T", f32}}) == "float32[] 0");
  BOOST_TEST(s.read(ta, 0) == "float32[2] [3,4]");
  BOOST_TEST(s.read(ta, 0) == "float32[2] [3,4]");  // clear_after_read is off
  BOOST_TEST(s.show("TensorArrayGatherV3", {ta, Tensor::vector<int32_t>({0, 2, 0}), Session::flow()},
                    {{"dtype", f32}}) == "float32[3,2] [[3,4],[1,2],[3,4]]");
  BOOST_TEST(s.show("TensorArrayGatherV3", {ta, Tensor::vector<int32_t>({1}), Session::flow()},
                    {{"dtype", f32}}) ==
             "error: failed_precondition: cannot read TensorArray '" + s.handle_of(ta) +
                 "' index 1: it has not been written");
  BOOST_TEST(s.show("TensorArrayScatterV3",
                    {ta, Tensor::vector<int32_t>({1, 1}), tensor<float>({2, 2}, {1, 2, 3, 4}),
                     Session::flow()},
                    {{"T", f32}}) ==
             "error: invalid_argument: cannot scatter to TensorArray '" + s.handle_of(ta) +
                 "' index 1 twice in one scatter");
  BOOST_TEST(s.read(ta, 1) == "error: failed_precondition: cannot read TensorArray '" +
                                  s.handle_of(ta) + "' index 1: it has not been written");
  BOOST_TEST(s.show("TensorArrayScatterV3",
                    {ta, Tensor::vector<int32_t>({1}), tensor<float>({2, 2}, {1, 2, 3, 4}),
                     Session::flow()},
                    {{"T", f32}}) ==
             "error: invalid_argument: cannot scatter a value of shape [2,2] into TensorArray '" +
                 s.handle_of(ta) + "' at 1 indices: its dimension 0 must be the number of indices");
}

BOOST_AUTO_TEST_CASE(gather_of_no_elements_needs_a_known_element_shape) {
  Session s;
  Tensor ta = s.array(0);
  Tensor none = Tensor::vector<int32_t>({});
  BOOST_TEST(s.show("TensorArrayGatherV3", {ta, none, Session::flow()}, {{"dtype", f32}}) ==
             "error: invalid_argument: cannot gather zero elements of TensorArray '" +
                 s.handle_of(ta) + "': the element shape is not known");
  BOOST_TEST(s.show("TensorArrayGatherV3", {ta, none, Session::flow()},
                    {{"dtype", f32}, {"element_shape", PartialShape{false, {3}}}}) ==
             "float32[0,3] []");
}

BOOST_AUTO_TEST_CASE(concat_and_split) {
  Session s;
  Tensor ta = s.array(3);
  BOOST_TEST(s.show("TensorArraySplitV3",
                    {ta, tensor<float>({5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
                     Tensor::vector<int64_t>({2, 0, 3}), Session::flow()},
                    {{"T", f32}}) == "float32[] 0");
  auto out = s.run("TensorArrayConcatV3", {ta, Session::flow()}, {{"dtype", f32}});
  BOOST_TEST_REQUIRE(out.ok());
  BOOST_TEST((*out)[0].debug_string() == "float32[5,2] [[0,1],[2,3],[4,5],[6,7],[8,9]]");
  BOOST_TEST((*out)[1].debug_string() == "int64[3] [2,0,3]");

  Tensor other = s.array(3);
  BOOST_TEST(s.show("TensorArraySplitV3",
                    {other, f({1, 2, 3}), Tensor::vector<int64_t>({1, 1}), Session::flow()},
                    {{"T", f32}}) ==
             "error: invalid_argument: cannot split a value of shape [3] into TensorArray '" +
                 s.handle_of(other) + "' with lengths [1,1]: they sum to 2, not 3");
  BOOST_TEST(s.show("TensorArraySplitV3",
                    {other, f({1, 2, 3}), Tensor::vector<int64_t>({1, 2}), Session::flow()},
                    {{"T", f32}}) ==
             "error: invalid_argument: cannot split a value of shape [3] into TensorArray '" +
                 s.handle_of(other) + "' with lengths [1,2]: the array has size 3, not 2");
  BOOST_TEST(s.show("TensorArrayConcatV3", {other, Session::flow()}, {{"dtype", f32}}) ==
             "error: failed_precondition: cannot read TensorArray '" + s.handle_of(other) +
                 "' index 0: it has not been written");
  Tensor empty = s.array(0);
  BOOST_TEST(s.show("TensorArrayConcatV3", {empty, Session::flow()},
                    {{"dtype", f32}, {"element_shape_except0", PartialShape{false, {2}}}}) ==
             "float32[0,2] []");
}

BOOST_AUTO_TEST_CASE(gradient_array_is_made_once_and_aggregates) {
  Session s;
  Tensor ta = s.array(3, {{"clear_after_read", false}});
  BOOST_TEST(s.write(ta, 0, f({1, 2})) == "float32[] 0");
  BOOST_TEST(s.write(ta, 1, f({3, 4})) == "float32[] 0");
  auto g1 = s.run("TensorArrayGradV3", {ta, fs(7)}, {{"source", "gradients"}});
  auto g2 = s.run("TensorArrayGradV3", {ta, fs(7)}, {{"source", "gradients"}});
  BOOST_TEST_REQUIRE(g1.ok());
  BOOST_TEST_REQUIRE(g2.ok());
  Tensor grad = (*g1)[0];
  BOOST_TEST(s.handle_of(grad) == s.handle_of(ta) + "@gradients");
  BOOST_TEST(s.handle_of((*g2)[0]) == s.handle_of(grad));
  BOOST_TEST((*g1)[1].debug_string() == "float32[] 7");  // flow passes through
  BOOST_TEST(s.show("TensorArraySizeV3", {grad, Session::flow()}) == "int32[] 3");

  // Writes to the gradient add up; an index written in the forward array
  // but never in the gradient reads as zeros; one never written is an error.
  BOOST_TEST(s.write(grad, 0, f({1, 1})) == "float32[] 0");
  BOOST_TEST(s.write(grad, 0, f({2, 2})) == "float32[] 0");
  BOOST_TEST(s.read(grad, 0) == "float32[2] [3,3]");
  BOOST_TEST(s.read(grad, 1) == "float32[2] [0,0]");
  BOOST_TEST(s.read(grad, 2) == "error: failed_precondition: cannot read TensorArray '" +
                                    s.handle_of(grad) + "' index 2: it has not been written");
  BOOST_TEST(s.write(grad, 1, f({1, 2, 3})) == "error: invalid_argument: cannot write TensorArray '" +
                                                   s.handle_of(grad) +
                                                   "' index 1: it has already been read");
}

BOOST_AUTO_TEST_CASE(closed_and_freed_tensor_arrays_are_errors) {
  Session s;
  Tensor ta = s.array(1);
  BOOST_TEST(s.write(ta, 0, fs(1)) == "float32[] 0");
  BOOST_TEST(s.show("TensorArrayCloseV3", {ta}) == "ok");
  BOOST_TEST(s.read(ta, 0) == "error: failed_precondition: TensorArray '" + s.handle_of(ta) +
                                  "' has been closed");
  Tensor other = s.array(1);
  s.rm.end_step(s.step);
  BOOST_TEST(s.read(other, 0) == "error: not_found: TensorArray '" + s.handle_of(other) +
                                     "' does not exist (never created, or freed when its step "
                                     "ended)");
  BOOST_TEST(s.rm.num_tensor_arrays() == 0u);
}

// --- Assert and Abort ------------------------------------------------------------

BOOST_AUTO_TEST_CASE(assert_passes_silently_and_fails_with_the_data) {
  auto attrs = [](std::vector<DType> types, int64_t summarize) {
    AttrList l;
    l.type = std::move(types);
    return AttrMap{{"T", l}, {"summarize", summarize}};
  };
  Tensor msg = Tensor::string_scalar("x must be positive");
  Tensor x = Tensor::vector<int32_t>({-1, 2, 3, 4, 5});
  BOOST_TEST(testing::run_op("Assert", {Tensor::scalar<bool>(true), msg, x},
                             attrs({DType::string, i32}, 3))
                 .ok());
  BOOST_TEST(testing::error_of("Assert", {Tensor::scalar<bool>(false), msg, x},
                               attrs({DType::string, i32}, 3)) ==
             "invalid_argument: assertion failed: [x must be positive] [-1 2 3 ...]");
  BOOST_TEST(testing::error_of("Assert", {Tensor::scalar<bool>(false), msg, x},
                               attrs({DType::string, i32}, 10)) ==
             "invalid_argument: assertion failed: [x must be positive] [-1 2 3 4 5]");
  BOOST_TEST(testing::error_of("Assert", {Tensor::scalar<bool>(false), f({0.5f})},
                               attrs({f32}, 3)) ==
             "invalid_argument: assertion failed: [0.5]");
  BOOST_TEST(testing::error_of("Assert", {Tensor::vector<bool>({true, false})}, attrs({}, 3)) ==
             "invalid_argument: Assert's condition must be a bool scalar, got bool[2] "
             "[true,false]");
}

BOOST_AUTO_TEST_CASE(abort_fails_the_step_with_its_message) {
  BOOST_TEST(testing::error_of("Abort", {}, {{"error_msg", "stop here"}}) ==
             "aborted: Abort op ran: stop here");
  BOOST_TEST(testing::error_of("Abort", {}) == "aborted: Abort op ran");
}

BOOST_AUTO_TEST_SUITE_END()
