// The row updates of variables (ops/scatter_kernels.cpp): ScatterAdd,
// ScatterSub, ScatterUpdate on ref variables and their ResourceScatter*
// twins, run as the executor runs them against one ResourceManager; values
// against a naive loop, repeated indices, scalar updates, readers keeping
// the value they read, and errors that leave the variable unchanged.
#include <boost/test/unit_test.hpp>

#include "op_result.hpp"
#include "ops/resource.hpp"

using namespace tagflow::ops;
using testing::contains;
using testing::RunOptions;
using testing::tensor;

namespace {

struct Session {
  ResourceManager rm;

  // A ref variable named `name` holding `value`; returns its ref.
  Tensor variable(const std::string& name, const Tensor& value) {
    BOOST_TEST_REQUIRE(rm.assign_variable(name, value).ok());
    return make_handle(name);
  }
  // Runs a scatter op; "ok" or "error: ...".
  std::string scatter(const std::string& op, const Tensor& ref, const Tensor& indices,
                      const Tensor& updates) {
    const bool resource = op.rfind("Resource", 0) == 0;
    AttrMap attrs{{resource ? "dtype" : "T", base_dtype(updates.dtype())},
                  {"Tindices", base_dtype(indices.dtype())}};
    auto out = testing::run_op(op, {ref, indices, updates}, attrs, RunOptions{&rm, 1, ""});
    if (!out.ok()) return "error: " + out.status().to_string();
    if (!resource) BOOST_TEST((*out)[0].scalar_value<std::string>() == ref.scalar_value<std::string>());
    return "ok";
  }
  std::string value(const std::string& name) {
    auto v = rm.read_variable(name);
    return v.ok() ? v->debug_string() : "error: " + v.status().to_string();
  }
};

Tensor ix(std::vector<int32_t> v) { return Tensor::vector<int32_t>(v); }

}  // namespace

BOOST_AUTO_TEST_SUITE(scatter_kernels)

BOOST_AUTO_TEST_CASE(scatter_add_matches_a_naive_loop) {
  Session s;
  std::vector<float> v(5 * 3), u(4 * 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  for (size_t i = 0; i < u.size(); ++i) u[i] = 0.5f * static_cast<float>(i + 1);
  const std::vector<int64_t> idx = {4, 0, 4, 2};
  Tensor ref = s.variable("w", tensor<float>({5, 3}, v));
  BOOST_TEST(s.scatter("ScatterAdd", ref, Tensor::vector<int64_t>(idx), tensor<float>({4, 3}, u)) == "ok");
  std::vector<float> want = v;
  for (size_t i = 0; i < idx.size(); ++i)
    for (size_t j = 0; j < 3; ++j) want[static_cast<size_t>(idx[i]) * 3 + j] += u[i * 3 + j];
  BOOST_TEST(s.value("w") == tensor<float>({5, 3}, want).debug_string());
}

BOOST_AUTO_TEST_CASE(scatter_sub_update_and_scalar_updates) {
  Session s;
  Tensor ref = s.variable("v", Tensor::vector<int64_t>({10, 20, 30}));
  BOOST_TEST(s.scatter("ScatterSub", ref, ix({2, 2}), Tensor::vector<int64_t>({1, 2})) == "ok");
  BOOST_TEST(s.value("v") == "int64[3] [10,20,27]");
  BOOST_TEST(s.scatter("ScatterAdd", ref, ix({0, 1}), Tensor::scalar<int64_t>(5)) == "ok");
  BOOST_TEST(s.value("v") == "int64[3] [15,25,27]");
  // ScatterUpdate: the last of repeated indices wins; works for strings.
  BOOST_TEST(s.scatter("ScatterUpdate", ref, ix({1, 1}), Tensor::vector<int64_t>({7, 8})) == "ok");
  BOOST_TEST(s.value("v") == "int64[3] [15,8,27]");
  Tensor names = s.variable("names", tensor<std::string>({2, 1}, {"a", "b"}));
  BOOST_TEST(s.scatter("ScatterUpdate", names, ix({1}), tensor<std::string>({1, 1}, {"z"})) == "ok");
  BOOST_TEST(s.value("names") == "string[2,1] [[\"a\"],[\"z\"]]");
  // Empty indices change nothing.
  BOOST_TEST(s.scatter("ScatterAdd", ref, ix({}), Tensor::vector<int64_t>({})) == "ok");
  BOOST_TEST(s.value("v") == "int64[3] [15,8,27]");
}

BOOST_AUTO_TEST_CASE(a_reader_keeps_the_value_it_read) {
  Session s;
  Tensor ref = s.variable("r", Tensor::vector<float>({1, 2}));
  Expected<Tensor> before = s.rm.read_variable("r");
  BOOST_TEST_REQUIRE(before.ok());
  BOOST_TEST(s.scatter("ScatterAdd", ref, ix({1}), Tensor::vector<float>({10})) == "ok");
  BOOST_TEST(before->debug_string() == "float32[2] [1,2]");
  BOOST_TEST(s.value("r") == "float32[2] [1,12]");
}

BOOST_AUTO_TEST_CASE(resource_scatters_update_resource_variables) {
  Session s;
  Tensor h = s.variable("res", tensor<double>({2, 2}, {1, 1, 1, 1}));
  BOOST_TEST(s.scatter("ResourceScatterAdd", h, ix({1, 1}), tensor<double>({2, 2}, {1, 2, 3, 4})) == "ok");
  BOOST_TEST(s.value("res") == "float64[2,2] [[1,1],[5,7]]");
  BOOST_TEST(s.scatter("ResourceScatterSub", h, ix({0}), Tensor::scalar<double>(0.5)) == "ok");
  BOOST_TEST(s.value("res") == "float64[2,2] [[0.5,0.5],[5,7]]");
  BOOST_TEST(s.scatter("ResourceScatterUpdate", h, ix({0}), tensor<double>({1, 2}, {9, 8})) == "ok");
  BOOST_TEST(s.value("res") == "float64[2,2] [[9,8],[5,7]]");
}

BOOST_AUTO_TEST_CASE(scatter_errors_leave_the_variable_unchanged) {
  Session s;
  Tensor ref = s.variable("e", tensor<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}));
  BOOST_TEST(s.scatter("ScatterAdd", ref, ix({0, 3}), tensor<int32_t>({2, 2}, {1, 1, 1, 1})) ==
             "error: invalid_argument: variable 'e': ScatterAdd indices[1] = 3 is not in [0, 3)");
  BOOST_TEST(s.scatter("ScatterAdd", ref, ix({-1}), tensor<int32_t>({1, 2}, {1, 1})) ==
             "error: invalid_argument: variable 'e': ScatterAdd indices[0] = -1 is not in [0, 3)");
  BOOST_TEST(s.scatter("ScatterAdd", ref, ix({0}), tensor<int32_t>({1, 3}, {1, 1, 1})) ==
             "error: invalid_argument: variable 'e': ScatterAdd updates must have shape "
             "indices.shape + params.shape[1:] = [1,2] or be a scalar, got [1,3] (indices [1], "
             "params [3,2])");
  BOOST_TEST(s.scatter("ScatterAdd", ref, ix({0}), tensor<float>({1, 2}, {1, 1})) ==
             "error: invalid_argument: variable 'e': ScatterAdd updates are float32, the "
             "variable holds int32");
  BOOST_TEST(s.value("e") == "int32[3,2] [[1,2],[3,4],[5,6]]");
  BOOST_TEST(s.scatter("ScatterAdd", make_handle("nothing"), ix({0}), Tensor::scalar<int32_t>(1)) ==
             "error: failed_precondition: variable 'nothing' is not initialized");
  Tensor scalar = s.variable("scalar", Tensor::scalar<int32_t>(1));
  BOOST_TEST(contains(s.scatter("ScatterAdd", scalar, ix({0}), Tensor::scalar<int32_t>(1)),
                      "needs a variable of rank >= 1"));
  // Booleans are not a number type.
  Tensor flags = s.variable("flags", Tensor::vector<bool>({true}));
  BOOST_TEST(contains(s.scatter("ScatterAdd", flags, ix({0}), Tensor::vector<bool>({true})),
                      "not one of"));
}

BOOST_AUTO_TEST_SUITE_END()
