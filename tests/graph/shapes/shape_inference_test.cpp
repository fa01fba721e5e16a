// Static shape inference (graph/shapes/shape_inference.hpp): shapes through
// broadcasting, MatMul, Reshape with -1 and known shape values, through a
// while loop to its fixed point, through functional While/If bodies; the
// errors that name the node; every op with a kernel has a shape function;
// the corpus infers without error.
#include <boost/test/unit_test.hpp>

#include "graph/builder/builder.hpp"
#include "graph/graph_test_util.hpp"
#include "graph/shapes/shape_inference.hpp"
#include "graph/validate.hpp"
#include "ops/op_def.hpp"

namespace tagflow::ops {
// For BOOST_TEST's messages.
inline std::ostream& operator<<(std::ostream& o, const PartialShape& s) { return o << s.to_string(); }
}  // namespace tagflow::ops

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;
using ops::DType;
using ops::PartialShape;
using ops::Tensor;

namespace {

PartialShape dims(std::vector<int64_t> d) { return {false, std::move(d)}; }
const PartialShape kUnknown{true, {}};

Graph finish(GraphBuilder& b) {
  auto g = b.finish();
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

ShapeMap infer(const Graph& g, const ShapeInferenceOptions& options = {}) {
  auto s = infer_shapes(g, options);
  if (!s.ok()) throw std::runtime_error(s.status().to_string());
  return std::move(s).value();
}

PartialShape shape_of(const ShapeMap& m, Output o) { return m.at(o.endpoint()).shape; }

}  // namespace

BOOST_AUTO_TEST_SUITE(shape_inference)

BOOST_AUTO_TEST_CASE(binary_ops_broadcast_and_refuse_shapes_that_cannot) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, dims({2, 1, 3}), "x");
  Output y = b.placeholder(DType::float32, dims({4, 3}), "y");
  Output u = b.placeholder(DType::float32, dims({-1, 3}), "u");
  Output s = b.scalar(2.0f);
  Output xy = b.add(x, y, "xy");
  Output uy = b.mul(u, y, "uy");
  Output xs = b.sub(x, s, "xs");
  Graph g = finish(b);
  ShapeMap m = infer(g);
  // [2,1,3] + [4,3]: [1,3] against [4,3] gives [4,3]; the leading 2 stays.
  BOOST_TEST(shape_of(m, xy) == dims({2, 4, 3}));
  // An unknown dimension against 4 can only be 4 (or 1, which gives 4).
  BOOST_TEST(shape_of(m, uy) == dims({4, 3}));
  BOOST_TEST(shape_of(m, xs) == dims({2, 1, 3}));
  BOOST_TEST((m.at(xy.endpoint()).dtype == DType::float32));

  GraphBuilder bad;
  Output a = bad.placeholder(DType::float32, dims({2, 3}), "a");
  Output c = bad.placeholder(DType::float32, dims({4, 3}), "c");
  bad.add(a, c, "sum");
  auto r = infer_shapes(finish(bad));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((r.status().code() == ops::Error::invalid_argument));
  BOOST_TEST(r.status().message() == "AddV2 'sum': shapes cannot broadcast: [2,3] and [4,3]", r.status().message());
}

BOOST_AUTO_TEST_CASE(matmul_inner_dimensions_that_differ_name_the_node_and_both_shapes) {
  GraphBuilder b;
  Output a = b.placeholder(DType::float32, dims({2, 3}), "a");
  Output c = b.placeholder(DType::float32, dims({4, 5}), "c");
  b.matmul(a, c, false, false, "mm");
  Graph g = finish(b);
  auto r = infer_shapes(g);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message() == "MatMul 'mm': inner dimensions differ: [2,3] x [4,5]", r.status().message());
  BOOST_TEST(!check_shapes(g).ok());

  // Transposed, the same inputs agree where the dims do: [3,2]^T x [3,5].
  GraphBuilder ok;
  Output p = ok.placeholder(DType::float32, dims({3, 2}), "p");
  Output q = ok.placeholder(DType::float32, dims({3, -1}), "q");
  Output pq = ok.matmul(p, q, true, false, "pq");
  ShapeMap m = infer(finish(ok));
  BOOST_TEST(shape_of(m, pq) == dims({2, -1}));
}

BOOST_AUTO_TEST_CASE(reshape_fills_in_minus_one_and_checks_the_element_count) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, dims({4, 6}), "x");
  Output r1 = b.reshape(x, b.vector<int32_t>({-1, 3}), "r1");
  // The new shape computed from Shape(x): [x.shape[0] * 2, -1].
  Output sx = b.shape(x);
  Output first = b.op1("StridedSlice", {sx, b.vector<int32_t>({0}), b.vector<int32_t>({1}), b.vector<int32_t>({1})},
                       {{"shrink_axis_mask", int64_t{1}}});
  Output twice = b.mul(first, b.scalar<int32_t>(2));
  Output r2 = b.reshape(x, b.stack({twice, b.scalar<int32_t>(-1)}), "r2");
  Output f = b.fill(b.shape(r2), b.scalar(1.0f), "f");
  Graph g = finish(b);
  ShapeMap m = infer(g);
  BOOST_TEST(shape_of(m, r1) == dims({8, 3}));  // 24 elements / 3
  BOOST_TEST(shape_of(m, twice) == dims({}));
  BOOST_REQUIRE(m.at(twice.endpoint()).value.has_value());
  BOOST_TEST(m.at(twice.endpoint()).value->scalar_value<int32_t>() == 8);
  BOOST_TEST(shape_of(m, r2) == dims({8, 3}));
  BOOST_TEST(shape_of(m, f) == dims({8, 3}));

  GraphBuilder bad;
  Output y = bad.placeholder(DType::float32, dims({4, 6}), "y");
  bad.reshape(y, bad.vector<int32_t>({5, 5}), "r");
  auto r = infer_shapes(finish(bad));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.status().message(), "Reshape 'r': cannot reshape [4,6] (24 elements) into [5,5]"),
             r.status().message());
}

// A loop variable that grows by one element per iteration: the first
// pass sees [1], the back edge brings [2]; at the fixed point the Merge,
// the body and the Exit have [?]. The counter keeps its scalar shape.
BOOST_AUTO_TEST_CASE(a_while_loop_reaches_a_fixed_point_where_a_changing_dim_is_unknown) {
  GraphBuilder b;
  Output x0 = b.vector<float>({1.0f});
  Output i0 = b.scalar<int32_t>(0);
  Output w = b.placeholder(DType::float32, dims({3, 4}), "w");
  Outputs out = b.while_loop(
      [&](const std::vector<Output>& v) { return b.less(v[0], b.scalar<int32_t>(5)); },
      [&](const std::vector<Output>& v) {
        Output grown = b.concat({v[1], b.vector<float>({2.0f})}, b.scalar<int32_t>(0));
        Output kept = b.matmul(v[2], b.op1("Transpose", {v[2], b.vector<int32_t>({1, 0})}));
        return std::vector<Output>{b.add(v[0], b.scalar<int32_t>(1)), grown, b.identity(w)};
        (void)kept;
      },
      {i0, x0, w});
  Graph g = finish(b);
  ShapeMap m = infer(g);
  BOOST_TEST(shape_of(m, out[0]) == dims({}));
  BOOST_TEST(!m.at(out[0].endpoint()).value.has_value());  // 0, then 1, ...: not one value
  BOOST_TEST(shape_of(m, out[1]) == dims({-1}));
  BOOST_TEST(shape_of(m, out[2]) == dims({3, 4}));
  // Every Merge of the loop agrees with its Exit.
  int merges = 0;
  for (const Node& n : g.nodes())
    if (n.op == "Merge") {
      ++merges;
      const PartialShape& s = m.at({g.find(n.name), 0}).shape;
      BOOST_TEST((s == dims({}) || s == dims({-1}) || s == dims({3, 4})), n.name << " " << s.to_string());
    }
  BOOST_TEST(merges == 3);
}

BOOST_AUTO_TEST_CASE(merge_generalises_its_inputs_and_switch_passes_its_input_through) {
  GraphBuilder b;
  Output p = b.placeholder(DType::boolean, dims({}), "p");
  Output x = b.placeholder(DType::float32, dims({2, 3}), "x");
  Outputs r = b.cond(p, [&] { return std::vector<Output>{b.identity(x), b.identity(x)}; },
                     [&] {
                       return std::vector<Output>{b.op1("Transpose", {x, b.vector<int32_t>({1, 0})}),
                                                  b.reshape(x, b.vector<int32_t>({6}))};
                     });
  Graph g = finish(b);
  ShapeMap m = infer(g);
  BOOST_TEST(shape_of(m, r[0]) == dims({-1, -1}));  // [2,3] or [3,2]
  BOOST_TEST(shape_of(m, r[1]) == kUnknown);        // rank 2 or rank 1
  for (const Node& n : g.nodes())
    if (n.op == "Switch" && n.inputs[0] == x.endpoint()) {
      BOOST_TEST(m.at({g.find(n.name), 0}).shape == dims({2, 3}));
      BOOST_TEST(m.at({g.find(n.name), 1}).shape == dims({2, 3}));
    }
}

BOOST_AUTO_TEST_CASE(functional_while_and_if_follow_their_functions) {
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x0 = b.vector<float>({1.0f});
  Output m0 = b.placeholder(DType::float32, dims({2, 2}), "m");
  Output i0 = b.scalar<int32_t>(0);
  Outputs out = b.while_loop(
      [&](const std::vector<Output>& v) { return b.less(v[0], b.scalar<int32_t>(3)); },
      [&](const std::vector<Output>& v) {
        return std::vector<Output>{b.add(v[0], b.scalar<int32_t>(1)),
                                   b.concat({v[1], b.vector<float>({0.0f})}, b.scalar<int32_t>(0)),
                                   b.matmul(v[2], v[2])};
      },
      {i0, x0, m0});
  Output p = b.placeholder(DType::boolean, dims({}), "p");
  Outputs c = b.cond(p, [&] { return std::vector<Output>{b.mul(m0, m0)}; },
                     [&] { return std::vector<Output>{b.add(m0, b.scalar(1.0f))}; });
  Graph g = finish(b);
  ShapeMap m = infer(g);
  BOOST_TEST(shape_of(m, out[0]) == dims({}));
  BOOST_TEST(shape_of(m, out[1]) == dims({-1}));
  BOOST_TEST(shape_of(m, out[2]) == dims({2, 2}));
  BOOST_TEST(shape_of(m, c[0]) == dims({2, 2}));
}

BOOST_AUTO_TEST_CASE(feeds_replace_the_shape_of_what_they_feed) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, kUnknown, "x");
  Output y = b.square(x, "y");
  Graph g = finish(b);
  ShapeInferenceOptions o;
  o.feeds["x"] = dims({5, 7});
  BOOST_TEST(shape_of(infer(g, o), y) == dims({5, 7}));
  BOOST_TEST(shape_of(infer(g), y) == kUnknown);
  o.feeds["nope:1"] = dims({});
  auto r = infer_shapes(g, o);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.status().message(), "feed 'nope:1'"));
}

BOOST_AUTO_TEST_CASE(reductions_conv_and_pack_follow_their_attrs) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, dims({8, 5, 7, 3}), "x");
  Output sum = b.reduce_sum(x, b.vector<int32_t>({1, -1}), false);
  Output mean = b.reduce_mean(x, b.vector<int32_t>({0}), true);
  Output filter = b.placeholder(DType::float32, dims({3, 3, 3, 16}), "f");
  ops::AttrList strides;
  strides.i = {1, 2, 2, 1};
  Output same = b.op1("Conv2D", {x, filter}, {{"strides", strides}, {"padding", std::string("SAME")}});
  Output valid = b.op1("Conv2D", {x, filter}, {{"strides", strides}, {"padding", std::string("VALID")}});
  Output packed = b.stack({sum, sum, sum}, 1);
  Graph g = finish(b);
  ShapeMap m = infer(g);
  BOOST_TEST(shape_of(m, sum) == dims({8, 7}));
  BOOST_TEST(shape_of(m, mean) == dims({1, 5, 7, 3}));
  // SAME: ceil(5/2) = 3, ceil(7/2) = 4; VALID: (5-3)/2+1 = 2, (7-3)/2+1 = 3.
  BOOST_TEST(shape_of(m, same) == dims({8, 3, 4, 16}));
  BOOST_TEST(shape_of(m, valid) == dims({8, 2, 3, 16}));
  BOOST_TEST(shape_of(m, packed) == dims({8, 3, 7}));
}

// Shape arguments of unknown length, or longer than any tensor's rank,
// give unknown ranks rather than a shape of -1 or 100000 dimensions.
BOOST_AUTO_TEST_CASE(shape_arguments_of_unknown_or_absurd_length_give_unknown_rank) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, kUnknown, "x");
  Output perm = b.placeholder(DType::int32, dims({-1}), "perm");
  Output t = b.op1("Transpose", {x, perm}, {}, "t");
  Output huge = b.placeholder(DType::int32, dims({100000}), "huge");
  Output f = b.fill(huge, b.scalar(1.0f), "f");
  Output p = b.placeholder(DType::int32, dims({100000, 2}), "p");
  Output padded = b.op1("Pad", {x, p}, {}, "padded");
  Graph g = finish(b);
  ShapeMap m = infer(g);
  BOOST_TEST(shape_of(m, t) == kUnknown);
  BOOST_TEST(shape_of(m, f) == kUnknown);
  BOOST_TEST(shape_of(m, padded) == kUnknown);
}

BOOST_AUTO_TEST_CASE(every_op_with_a_kernel_has_a_shape_function) {
  // Registered with the op (OpDef::shape_fn), or a functional op's rule,
  // which graph/ runs: a node of every kernel op gets a rule.
  std::vector<std::string> missing;
  int with_kernel = 0;
  for (const ops::OpDef* def : ops::OpRegistry::global().all()) {
    const bool functional = def->role() == ops::OpRole::function_call;
    if (functional) BOOST_TEST(def->shape_function() == nullptr, def->name() << ": graph/ has its rule");
    if (!def->has_kernel()) continue;
    ++with_kernel;
    if (def->shape_function() == nullptr) missing.push_back(def->name());
  }
  BOOST_TEST(with_kernel > 200);
  std::string list;
  for (const std::string& op : missing) list += op + " ";
  BOOST_TEST(missing.empty(), "ops without a shape function: " << list);
}

BOOST_AUTO_TEST_CASE(the_corpus_infers_without_error) {
  std::vector<std::string> paths;
  for (const std::string& f : corpus_files()) paths.push_back(corpus_path(f));
  for (const char* f : {"case.pbtxt", "for.pbtxt", "if_float.pbtxt", "if_in_while.pbtxt", "nested_while.pbtxt",
                        "while_in_if.pbtxt", "while_matmul.pbtxt", "while_sum.pbtxt"})
    paths.push_back(std::string(TAGFLOW_TEST_DATA) + "/functional/" + f);
  size_t inferred = 0;
  for (const std::string& path : paths) {
    auto g = import_graph_file(path);
    BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
    ValidateOptions v;
    v.allow_unknown_ops = true;
    if (!validate(*g, v).ok()) continue;  // a corpus file that feeds a resource to Less: not a program
    auto m = infer_shapes(*g);
    BOOST_TEST(m.ok(), path << ": " << m.status().to_string());
    ++inferred;
  }
  BOOST_TEST(inferred + 1 == paths.size());
}

// The LSTM of the NER model: inside each while loop, the cell's MatMul of
// [input, h] by the kernel variable has the kernel's width (its shape attr,
// read from the file), and so does the BiasAdd of the bias variable.
BOOST_AUTO_TEST_CASE(the_lstm_loops_have_the_widths_of_their_variables) {
  Graph g = load_corpus("tfnet_lstm_crf_ner_train.pbtxt");
  ValidateOptions v;
  v.allow_unknown_ops = true;
  BOOST_REQUIRE(validate(g, v).ok());
  ShapeMap m = infer(g);
  int cells = 0;
  for (const char* scope : {"chars/bidirectional_rnn/fw", "chars/bidirectional_rnn/bw", "bi-lstm/bidirectional_rnn/fw",
                            "bi-lstm/bidirectional_rnn/bw"}) {
    const std::string s = scope;
    const std::string dir = s.substr(s.size() - 2);
    const NodeId kernel = g.find(s + "/lstm_cell/kernel");
    const NodeId matmul = g.find(s + "/" + dir + "/while/lstm_cell/MatMul");
    const NodeId bias_add = g.find(s + "/" + dir + "/while/lstm_cell/BiasAdd");
    BOOST_REQUIRE(kernel != kNoNode);
    BOOST_REQUIRE(matmul != kNoNode);
    BOOST_REQUIRE(bias_add != kNoNode);
    const PartialShape& declared = *g.node(kernel).attr<PartialShape>("shape");
    BOOST_REQUIRE(declared.dims.size() == 2u);
    BOOST_TEST(m.at({matmul, 0}).shape == dims({-1, declared.dims[1]}), s);
    BOOST_TEST(m.at({bias_add, 0}).shape == dims({-1, declared.dims[1]}), s);
    ++cells;
  }
  BOOST_TEST(cells == 4);
}

BOOST_AUTO_TEST_SUITE_END()
