// ResourceManager: variables across steps, stacks and TensorArrays tied to
// steps, handles and refs, and concurrent use from several threads.
#include "ops/resource.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "op_result.hpp"

using namespace tagflow::ops;
using testing::contains;
using testing::tensor;

namespace {

std::string error_text(const Status& s) { return s.ok() ? "ok" : s.to_string(); }
template <class T>
std::string error_text(const Expected<T>& e) {
  return e.ok() ? "ok" : e.status().to_string();
}
std::string show(const Expected<Tensor>& t) {
  return t.ok() ? t->debug_string() : "error: " + t.status().to_string();
}

Tensor f32(std::vector<float> v) { return Tensor::vector<float>(v); }

}  // namespace

BOOST_AUTO_TEST_SUITE(resource)

// --- handles -------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(handles_are_scalar_resource_tensors_naming_the_resource) {
  Tensor h = make_handle("c/v");
  BOOST_TEST((h.dtype() == DType::resource));
  BOOST_TEST(h.shape().is_scalar());
  BOOST_TEST(h.scalar_value<std::string>() == "c/v");
  BOOST_TEST(*handle_name(h) == "c/v");
  BOOST_TEST(error_text(handle_name(f32({1}), "input 0")) ==
             "invalid_argument: input 0 must be a scalar resource handle, got float32[1] [1]");
  BOOST_TEST(error_text(handle_name(Tensor(), "input 0")) ==
             "invalid_argument: input 0 must be a scalar resource handle, got no tensor");
  BOOST_TEST(error_text(handle_name(make_handle(""))) ==
             "invalid_argument: handle is a handle with no name");
}

// --- variables -----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(reading_a_never_assigned_variable_is_failed_precondition) {
  ResourceManager rm;
  BOOST_TEST(error_text(rm.read_variable("x")) ==
             "failed_precondition: variable 'x' is not initialized");
  BOOST_TEST(rm.declare_variable("x", DType::float32, PartialShape{false, {2}}).ok());
  BOOST_TEST(!rm.is_initialized("x"));
  BOOST_TEST(error_text(rm.read_variable("x")) ==
             "failed_precondition: variable 'x' is not initialized");
  BOOST_TEST(error_text(rm.assign_add("x", f32({1, 2}))) ==
             "failed_precondition: variable 'x' is not initialized");
}

BOOST_AUTO_TEST_CASE(variables_keep_their_value_across_steps) {
  ResourceManager rm;
  BOOST_TEST(rm.assign_variable("v", f32({1, 2})).ok());
  rm.end_step(0);
  rm.end_step(1);
  BOOST_TEST(rm.is_initialized("v"));
  BOOST_TEST(show(rm.read_variable("v")) == "float32[2] [1,2]");
  BOOST_TEST(rm.assign_add("v", f32({10, 20})).ok());
  rm.end_step(2);
  BOOST_TEST(show(rm.read_variable("v")) == "float32[2] [11,22]");
  BOOST_TEST(rm.assign_sub("v", f32({1, 1})).ok());
  BOOST_TEST(show(rm.read_variable("v")) == "float32[2] [10,21]");
}

BOOST_AUTO_TEST_CASE(an_update_never_changes_a_value_already_read) {
  ResourceManager rm;
  BOOST_TEST(rm.assign_variable("v", f32({1, 2})).ok());
  Tensor before = *rm.read_variable("v");
  BOOST_TEST(rm.assign_add("v", f32({1, 1})).ok());
  BOOST_TEST(before.debug_string() == "float32[2] [1,2]");
  // Nobody else holds the new value: the next update may write in place,
  // and still a value read in between stays as it was.
  BOOST_TEST(rm.assign_add("v", f32({1, 1})).ok());
  Tensor middle = *rm.read_variable("v");
  BOOST_TEST(rm.assign_add("v", f32({1, 1})).ok());
  BOOST_TEST(middle.debug_string() == "float32[2] [3,4]");
  BOOST_TEST(show(rm.read_variable("v")) == "float32[2] [4,5]");
}

BOOST_AUTO_TEST_CASE(updates_need_the_variables_dtype_and_shape) {
  ResourceManager rm;
  BOOST_TEST(rm.assign_variable("v", f32({1, 2})).ok());
  BOOST_TEST(error_text(rm.assign_add("v", f32({1, 2, 3}))) ==
             "invalid_argument: cannot add float32[3] to variable 'v', which is float32[2]");
  BOOST_TEST(error_text(rm.assign_sub("v", Tensor::vector<int32_t>({1, 2}))) ==
             "invalid_argument: cannot subtract int32[2] from variable 'v', which is float32[2]");
  BOOST_TEST(error_text(rm.assign_variable("v", Tensor::scalar<int32_t>(1))) ==
             "invalid_argument: cannot assign a int32 value to variable 'v' of dtype float32");
  BOOST_TEST(rm.assign_variable("s", Tensor::string_scalar("a")).ok());
  BOOST_TEST(error_text(rm.assign_add("s", Tensor::string_scalar("b"))) ==
             "unimplemented: variable 's': cannot add or subtract values of dtype string");
}

BOOST_AUTO_TEST_CASE(validate_shape_checks_the_declared_and_the_current_shape) {
  ResourceManager rm;
  BOOST_TEST(rm.declare_variable("v", DType::float32, PartialShape{false, {-1, 2}}).ok());
  BOOST_TEST(error_text(rm.assign_variable("v", f32({1, 2}), true)) ==
             "invalid_argument: cannot assign a value of shape [2] to variable 'v' of shape "
             "[?,2] (validate_shape is set)");
  BOOST_TEST(rm.assign_variable("v", tensor<float>({3, 2}, {1, 2, 3, 4, 5, 6}), true).ok());
  BOOST_TEST(error_text(rm.assign_variable("v", tensor<float>({1, 2}, {1, 2}), true)) ==
             "invalid_argument: cannot assign a value of shape [1,2] to variable 'v' of shape "
             "[3,2] (validate_shape is set)");
  // Without validation any shape of the right dtype goes.
  BOOST_TEST(rm.assign_variable("v", f32({7}), false).ok());
  BOOST_TEST(show(rm.read_variable("v")) == "float32[1] [7]");
}

BOOST_AUTO_TEST_CASE(declaring_a_variable_again_with_another_dtype_is_an_error) {
  ResourceManager rm;
  BOOST_TEST(rm.declare_variable("v", DType::float32, PartialShape{}).ok());
  BOOST_TEST(rm.declare_variable("v", DType::float32, PartialShape{}).ok());
  BOOST_TEST(error_text(rm.declare_variable("v", DType::int32, PartialShape{})) ==
             "invalid_argument: variable 'v' has dtype float32, not int32");
}

BOOST_AUTO_TEST_CASE(deref_reads_the_variable_a_ref_names) {
  ResourceManager rm;
  BOOST_TEST(rm.assign_variable("/v", Tensor::scalar<int64_t>(5)).ok());
  BOOST_TEST(show(deref(make_handle("/v"), rm)) == "int64[] 5");
  BOOST_TEST(error_text(deref(make_handle("/w"), rm)) ==
             "failed_precondition: variable '/w' is not initialized");
  BOOST_TEST(error_text(deref(Tensor::scalar<float>(1), rm)) ==
             "invalid_argument: a ref must be a scalar resource handle, got float32[] 1");
}

BOOST_AUTO_TEST_CASE(accumulate_adds_in_place_only_into_an_unshared_buffer) {
  Tensor a = f32({1, 2});
  Tensor shared = a;
  BOOST_TEST(accumulate(a, f32({1, 1}), false).ok());
  BOOST_TEST(shared.debug_string() == "float32[2] [1,2]");
  BOOST_TEST(a.debug_string() == "float32[2] [2,3]");
  BOOST_TEST(a.is_unique());
  const void* buffer = a.raw_data();
  BOOST_TEST(accumulate(a, f32({2, 2}), true).ok());
  BOOST_TEST(a.raw_data() == buffer);
  BOOST_TEST(a.debug_string() == "float32[2] [0,1]");
  Tensor h = Tensor::scalar<Eigen::half>(Eigen::half(1.5f));
  BOOST_TEST(accumulate(h, Tensor::scalar<Eigen::half>(Eigen::half(2.0f)), false).ok());
  BOOST_TEST(static_cast<float>(h.scalar_value<Eigen::half>()) == 3.5f);
  Tensor b = Tensor::scalar<bool>(true);
  BOOST_TEST(error_text(accumulate(b, Tensor::scalar<bool>(true), false)) ==
             "unimplemented: cannot add or subtract values of dtype bool");
}

// --- stacks --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(stacks_pop_in_reverse_order_and_refuse_an_empty_pop) {
  ResourceManager rm;
  std::string s = rm.create_stack("while/stack", 7, DType::int32, -1);
  BOOST_TEST(s.find("while/stack#") == 0u);
  BOOST_TEST(contains(s, "@step7"));
  for (int32_t i = 0; i < 3; ++i) BOOST_TEST(rm.push_stack(s, Tensor::scalar<int32_t>(i)).ok());
  for (int32_t i = 2; i >= 0; --i) BOOST_TEST(show(rm.pop_stack(s)) == "int32[] " + std::to_string(i));
  BOOST_TEST(error_text(rm.pop_stack(s)) ==
             "out_of_range: stack '" + s + "' is empty: nothing to pop");
  BOOST_TEST(error_text(rm.push_stack(s, Tensor::scalar<float>(1))) ==
             "invalid_argument: cannot push a float32 value onto stack '" + s + "' of int32");
}

BOOST_AUTO_TEST_CASE(a_push_beyond_max_size_is_an_error) {
  ResourceManager rm;
  std::string s = rm.create_stack("st", 1, DType::float32, 2);
  BOOST_TEST(rm.push_stack(s, Tensor::scalar<float>(1)).ok());
  BOOST_TEST(rm.push_stack(s, Tensor::scalar<float>(2)).ok());
  BOOST_TEST(error_text(rm.push_stack(s, Tensor::scalar<float>(3))) ==
             "out_of_range: stack '" + s + "' is full: it already holds its max_size of 2 elements");
  BOOST_TEST(rm.pop_stack(s).ok());
  BOOST_TEST(rm.push_stack(s, Tensor::scalar<float>(3)).ok());
}

BOOST_AUTO_TEST_CASE(every_creation_makes_a_new_stack) {
  ResourceManager rm;
  std::string a = rm.create_stack("st", 1, DType::float32, -1);
  std::string b = rm.create_stack("st", 1, DType::float32, -1);
  BOOST_TEST(a != b);
  BOOST_TEST(rm.push_stack(a, Tensor::scalar<float>(1)).ok());
  BOOST_TEST(error_text(rm.pop_stack(b)) == "out_of_range: stack '" + b + "' is empty: nothing to pop");
}

BOOST_AUTO_TEST_CASE(end_step_frees_only_that_steps_stacks_and_tensor_arrays) {
  ResourceManager rm;
  std::string s1 = rm.create_stack("st", 1, DType::float32, -1);
  std::string s2 = rm.create_stack("st", 2, DType::float32, -1);
  TensorArray::Options o;
  o.size = 2;
  std::string t1 = *rm.create_tensor_array("ta", 1, o);
  std::string t2 = *rm.create_tensor_array("ta", 2, o);
  std::string g1 = *rm.tensor_array_grad(t1, "gradients");
  BOOST_TEST(rm.assign_variable("v", f32({1})).ok());
  BOOST_TEST(rm.num_stacks() == 2u);
  BOOST_TEST(rm.num_tensor_arrays() == 3u);

  rm.end_step(1);
  BOOST_TEST(rm.num_stacks() == 1u);
  BOOST_TEST(rm.num_tensor_arrays() == 1u);
  BOOST_TEST(error_text(rm.push_stack(s1, Tensor::scalar<float>(1))) ==
             "not_found: stack '" + s1 +
                 "' does not exist (never created, or freed when its step ended)");
  BOOST_TEST(error_text(rm.pop_stack(s1)) ==
             "not_found: stack '" + s1 +
                 "' does not exist (never created, or freed when its step ended)");
  BOOST_TEST(error_text(rm.tensor_array(t1)) ==
             "not_found: TensorArray '" + t1 +
                 "' does not exist (never created, or freed when its step ended)");
  BOOST_TEST(!rm.tensor_array(g1).ok());
  BOOST_TEST(rm.push_stack(s2, Tensor::scalar<float>(1)).ok());
  BOOST_TEST(rm.tensor_array(t2).ok());
  BOOST_TEST(rm.is_initialized("v"));

  rm.end_step(2);
  BOOST_TEST(rm.num_stacks() == 0u);
  BOOST_TEST(rm.num_tensor_arrays() == 0u);
}

BOOST_AUTO_TEST_CASE(a_resource_held_across_end_step_reports_that_it_is_closed) {
  ResourceManager rm;
  TensorArray::Options o;
  o.size = 1;
  std::string t = *rm.create_tensor_array("ta", 3, o);
  std::shared_ptr<TensorArray> held = *rm.tensor_array(t);
  rm.end_step(3);
  BOOST_TEST(error_text(held->write(0, f32({1}))) ==
             "failed_precondition: TensorArray '" + t + "' has been closed");
}

BOOST_AUTO_TEST_CASE(closed_stacks_refuse_push_and_pop) {
  ResourceManager rm;
  std::string s = rm.create_stack("st", 1, DType::float32, -1);
  BOOST_TEST(rm.close_stack(s).ok());
  BOOST_TEST(error_text(rm.push_stack(s, Tensor::scalar<float>(1))) ==
             "failed_precondition: stack '" + s + "' has been closed");
  BOOST_TEST(error_text(rm.pop_stack(s)) ==
             "failed_precondition: stack '" + s + "' has been closed");
  BOOST_TEST(error_text(rm.close_stack("nope")) ==
             "not_found: stack 'nope' does not exist (never created, or freed when its step "
             "ended)");
}

BOOST_AUTO_TEST_CASE(tensor_array_sizes_are_checked) {
  ResourceManager rm;
  TensorArray::Options o;
  o.size = -1;
  BOOST_TEST(error_text(rm.create_tensor_array("ta", 1, o)) ==
             "invalid_argument: TensorArray size must be in [0, 16777216], got -1");
  o.size = kMaxTensorArraySize + 1;
  BOOST_TEST(!rm.create_tensor_array("ta", 1, o).ok());
}

BOOST_AUTO_TEST_CASE(the_gradient_array_is_made_once_per_source) {
  ResourceManager rm;
  TensorArray::Options o;
  o.size = 3;
  std::string t = *rm.create_tensor_array("ta", 1, o);
  std::string g = *rm.tensor_array_grad(t, "gradients");
  BOOST_TEST(g == t + "@gradients");
  BOOST_TEST(*rm.tensor_array_grad(t, "gradients") == g);
  BOOST_TEST(*rm.tensor_array_grad(t, "gradients_1") == t + "@gradients_1");
  BOOST_TEST(*(*rm.tensor_array(g))->size() == 3);
  BOOST_TEST(error_text(rm.tensor_array_grad("nope", "gradients")) ==
             "not_found: TensorArray 'nope' does not exist (never created, or freed when its "
             "step ended)");
}

// --- concurrency ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(four_threads_update_one_variable_without_losing_an_update) {
  ResourceManager rm;
  BOOST_TEST(rm.assign_variable("counter", Tensor::scalar<int64_t>(0)).ok());
  BOOST_TEST(rm.assign_variable("vec", f32({0, 0, 0})).ok());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        if (!rm.assign_add("counter", Tensor::scalar<int64_t>(1)).ok()) ++failures;
        if (!rm.assign_add("vec", f32({1, 2, 3})).ok()) ++failures;
        // Readers see whole updates only: every element a multiple of its step.
        Tensor v = *rm.read_variable("vec");
        const float* p = v.data<float>();
        if (p[1] != 2 * p[0] || p[2] != 3 * p[0]) ++failures;
        std::string s = rm.create_stack("st", static_cast<uint64_t>(t), DType::int32, -1);
        if (!rm.push_stack(s, Tensor::scalar<int32_t>(i)).ok()) ++failures;
        if (!rm.pop_stack(s).ok()) ++failures;
      }
      rm.end_step(static_cast<uint64_t>(t));
    });
  for (auto& th : threads) th.join();
  BOOST_TEST(failures.load() == 0);
  BOOST_TEST(show(rm.read_variable("counter")) == "int64[] 4000");
  BOOST_TEST(show(rm.read_variable("vec")) == "float32[3] [4000,8000,12000]");
  BOOST_TEST(rm.num_stacks() == 0u);
}

BOOST_AUTO_TEST_CASE(concurrent_first_gradient_calls_make_one_array) {
  ResourceManager rm;
  TensorArray::Options o;
  o.size = 2;
  std::string t = *rm.create_tensor_array("ta", 1, o);
  std::vector<std::string> names(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < names.size(); ++i)
    threads.emplace_back([&, i] { names[i] = *rm.tensor_array_grad(t, "gradients"); });
  for (auto& th : threads) th.join();
  for (const std::string& n : names) BOOST_TEST(n == t + "@gradients");
  BOOST_TEST(rm.num_tensor_arrays() == 2u);
}

BOOST_AUTO_TEST_CASE(four_threads_write_one_tensor_array) {
  ResourceManager rm;
  TensorArray::Options o;
  o.dtype = DType::int32;
  o.dynamic_size = true;
  std::string t = *rm.create_tensor_array("ta", 1, o);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int th = 0; th < 4; ++th)
    threads.emplace_back([&, th] {
      auto array = *rm.tensor_array(t);
      for (int32_t i = th; i < 400; i += 4)
        if (!array->write(i, Tensor::scalar<int32_t>(i)).ok()) ++failures;
    });
  for (auto& th : threads) th.join();
  BOOST_TEST(failures.load() == 0);
  auto array = *rm.tensor_array(t);
  BOOST_TEST(*array->size() == 400);
  std::vector<int64_t> all(400);
  for (int64_t i = 0; i < 400; ++i) all[static_cast<size_t>(i)] = i;
  Tensor g = *array->gather(all, PartialShape{true, {}});
  bool in_order = true;
  for (int32_t i = 0; i < 400; ++i) in_order = in_order && g.data<int32_t>()[i] == i;
  BOOST_TEST(in_order);
}

BOOST_AUTO_TEST_SUITE_END()
