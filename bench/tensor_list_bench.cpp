// What a TensorListPushBack costs (ops/list_ops.cpp, docs/performance.md
// "TensorLists"): N pushes of a float scalar through the kernel, each
// taking the list its predecessor made, as a loop's list flows from
// iteration to iteration — the list held uniquely, so each push is in
// place and O(1) — against std::vector<Tensor>::push_back of the same
// tensor, in the same run; and, for the smaller N, the same pushes with
// each list still held elsewhere when it is pushed to (shared, so the push
// copies the vector of element tensors: O(N)).
// Then the same pushes where a user makes them: a while loop of a session
// that pushes its counter to a list each iteration (the list flows through
// Enter, Merge, Switch, Identity and NextIteration), against the same loop
// without the list, in the same run.
//   tensor_list_bench [N...]      default 1000 10000 100000
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "actors/session.hpp"
#include "bench/bench_util.hpp"
#include "graph/builder/builder.hpp"
#include "ops/op_def.hpp"
#include "ops/variant.hpp"

using namespace tagflow;
using ops::DType;
using ops::Tensor;

namespace {

std::unique_ptr<ops::Kernel> make_kernel(const std::string& op, const ops::AttrMap& attrs, const ops::DTypes& in,
                                         const ops::DTypes& out) {
  const ops::OpDef* def = ops::OpRegistry::global().find(op);
  ops::KernelInit init{"bench", attrs, in, out};
  auto k = def->make_kernel(init);
  if (!k.ok()) {
    std::fprintf(stderr, "tensor_list_bench: %s\n", k.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(k).value();
}

Tensor empty_list() {
  return ops::variant_scalar(std::make_shared<ops::TensorList>(DType::float32, ops::PartialShape{false, {}}));
}

// N pushes; with `shared`, each list is still held when it is pushed to.
void pushes(const ops::Kernel& push, const Tensor& item, int64_t n, bool shared) {
  Tensor previous;
  Tensor list = empty_list();
  Tensor inputs[2];
  Tensor outputs[1];
  for (int64_t i = 0; i < n; ++i) {
    if (shared) previous = list;
    inputs[0] = std::move(list);
    inputs[1] = item;
    ops::KernelContext ctx(inputs, 2, outputs, 1);
    if (!push.compute(ctx).ok()) std::abort();
    list = std::move(outputs[0]);
  }
  if (ops::list_of(list).value()->elements.size() != static_cast<size_t>(n)) std::abort();
  bench::keep(list);
}

void vector_pushes(const Tensor& item, int64_t n) {
  std::vector<Tensor> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(item);
  bench::keep(v);
}

// while i < n: [list = PushBack(list, float(i))]; i += 1. Fetches the
// list's length (with the list) or i (without).
std::unique_ptr<actors::Session> loop_session(bool with_list, std::string* fetch) {
  using graph::Output;
  using Vars = std::vector<Output>;
  graph::GraphBuilder b;
  Output n = b.placeholder(DType::int32, {false, {}}, "n");
  Vars init{b.scalar<int32_t>(0)};
  if (with_list)
    init.push_back(b.op1("EmptyTensorList", {b.vector<int32_t>({}), b.scalar<int32_t>(-1)},
                         {{"element_dtype", DType::float32}}));
  auto loop = b.while_loop([&](const Vars& s) { return s[0] < n; },
                           [&](const Vars& s) {
                             Vars next{s[0] + 1.0};
                             if (with_list)
                               next.push_back(b.op1("TensorListPushBack", {s[1], b.cast(s[0], DType::float32)},
                                                    {{"element_dtype", DType::float32}}));
                             return next;
                           },
                           init, {/*parallel_iterations=*/10, {}, "w"});
  *fetch = with_list ? b.op1("TensorListLength", {loop[1]}).name() : b.identity(loop[0]).name();
  auto g = b.finish();
  if (!g.ok()) {
    std::fprintf(stderr, "tensor_list_bench: %s\n", g.status().to_string().c_str());
    std::exit(1);
  }
  auto s = actors::Session::create(std::move(g).value(), {});
  if (!s.ok()) {
    std::fprintf(stderr, "tensor_list_bench: %s\n", s.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(s).value();
}

int32_t run_loop(actors::Session& s, const std::string& fetch, int64_t n) {
  auto r = s.run({{"n", Tensor::scalar<int32_t>(static_cast<int32_t>(n))}}, {fetch});
  if (!r.ok() || r->at(0).scalar_value<int32_t>() != n) {
    std::fprintf(stderr, "tensor_list_bench: the loop did not run %lld times\n", static_cast<long long>(n));
    std::exit(1);
  }
  return r->at(0).scalar_value<int32_t>();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes = {1000, 10000, 100000};
  auto push = make_kernel("TensorListPushBack", {{"element_dtype", DType::float32}}, {DType::variant, DType::float32},
                          {DType::variant});
  const Tensor item = Tensor::scalar<float>(1.0f);
  std::printf("%10s %18s %18s %18s\n", "N", "ns/push unshared", "ns/vector push", "ns/push shared");
  for (int64_t n : sizes) {
    std::vector<std::function<void()>> fs = {[&] { pushes(*push, item, n, false); },
                                             [&] { vector_pushes(item, n); }};
    const bool shared = n <= 10000;  // quadratic: only the small sizes
    if (shared) fs.push_back([&] { pushes(*push, item, n, true); });
    const std::vector<double> t = bench::interleaved_medians(n >= 100000 ? 5 : 11, fs);
    const double scale = 1e9 / static_cast<double>(n);
    if (shared)
      std::printf("%10lld %18.1f %18.1f %18.1f\n", static_cast<long long>(n), t[0] * scale, t[1] * scale,
                  t[2] * scale);
    else
      std::printf("%10lld %18.1f %18.1f %18s\n", static_cast<long long>(n), t[0] * scale, t[1] * scale, "-");
  }
  std::string plain_fetch, list_fetch;
  auto plain = loop_session(false, &plain_fetch);
  auto with_list = loop_session(true, &list_fetch);
  std::printf("\nwhile loop of a session\n%10s %18s %18s %18s\n", "N", "ns/iter, push", "ns/iter, no list",
              "ns/push (diff)");
  for (int64_t n : sizes) {
    const std::vector<double> t =
        bench::interleaved_medians(n >= 100000 ? 5 : 9, {[&] { bench::keep(run_loop(*with_list, list_fetch, n)); },
                                                        [&] { bench::keep(run_loop(*plain, plain_fetch, n)); }});
    const double scale = 1e9 / static_cast<double>(n);
    std::printf("%10lld %18.1f %18.1f %18.1f\n", static_cast<long long>(n), t[0] * scale, t[1] * scale,
                (t[0] - t[1]) * scale);
  }
  return 0;
}
