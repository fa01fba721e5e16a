#include "graph/optimize/optimizer.hpp"

#include <chrono>
#include <sstream>

#include <fmt/format.h>

#include "graph/functions/implementation_selection.hpp"
#include "graph/optimize/rewrite.hpp"

namespace tagflow::graph::optimize {

Expected<Graph> select_implementations_pass(const Graph& g, const OptimizeOptions& options) {
  Graph out = g;
  const int n = select_implementations(&out);
  // Unchanged: the input, whose library copies share (select_implementations
  // made `out` a library of its own).
  if (n == 0) return g;
  if (n > 0 && options.changes != nullptr)
    options.changes->push_back({"implementation_selection", "", "rewritten",
                                fmt::format("{} call(s) pointed at the CPU implementation", n)});
  return out;
}

const std::vector<Pass>& all_passes() {
  static const std::vector<Pass> passes = {
      {"implementation_selection", "calls of functions with a CPU and a GPU implementation use the CPU one",
       select_implementations_pass},
      {"constant_folding", "nodes whose inputs are all known are computed once, into Consts", fold_constants},
      {"dead_branches", "Switches with a constant predicate lose their untaken branch; loops never entered go",
       remove_dead_branches},
      {"arithmetic", "x*1, x/1, x-0, -(-x), not(not x) and, for integers, x+0, scalar sums, factoring",
       simplify_arithmetic},
      {"common_subexpressions", "nodes computing the same value in the same frame are computed once",
       eliminate_common_subexpressions},
      {"loop_invariants", "nodes of a loop that read only invariants run once, outside the loop",
       hoist_loop_invariants},
      {"fusion", "MatMul or Conv2D + BiasAdd (+ Relu, Relu6, Elu, Tanh, Sigmoid) become one fused node", fuse_ops},
      {"prune", "Identity nodes that only forward, and nodes nothing needs, are removed", prune},
  };
  return passes;
}

const Pass* find_pass(const std::string& name) {
  for (const Pass& p : all_passes())
    if (p.name == name) return &p;
  return nullptr;
}

Expected<std::vector<const Pass*>> parse_pass_list(const std::string& list) {
  std::vector<const Pass*> out;
  if (list == "none" || list.empty()) return out;
  if (list == "default" || list == "all") {
    for (const Pass& p : all_passes()) out.push_back(&p);
    return out;
  }
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    const size_t b = name.find_first_not_of(" \t");
    const size_t e = name.find_last_not_of(" \t");
    name = b == std::string::npos ? "" : name.substr(b, e - b + 1);
    const Pass* p = find_pass(name);
    if (p == nullptr) {
      std::string known;
      for (const Pass& q : all_passes()) known += (known.empty() ? "" : ", ") + q.name;
      return Status(Error::invalid_argument,
                    fmt::format("unknown optimizer pass '{}' in '{}' (known: {}; or 'default', 'none')", name, list,
                                known));
    }
    out.push_back(p);
  }
  return out;
}

Expected<Graph> run_passes(const Graph& g, const std::vector<const Pass*>& passes, const OptimizeOptions& options,
                           std::vector<PassReport>* reports) {
  // Every pass keeps the sinks of the input, not those of its own input.
  const OptimizeOptions kept = with_sinks_kept(g, options);
  Graph current = g;
  for (const Pass* p : passes) {
    const auto start = std::chrono::steady_clock::now();
    const size_t changes_before = options.changes != nullptr ? options.changes->size() : 0;
    Expected<Graph> next = p->run(current, kept);
    if (!next.ok())
      return Status(next.status().code(), fmt::format("optimizer pass '{}': {}", p->name, next.status().message()));
    if (reports != nullptr) {
      PassReport r;
      r.pass = p->name;
      r.nodes_before = current.num_nodes();
      r.nodes_after = next->num_nodes();
      r.milliseconds =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      r.changes = options.changes != nullptr ? static_cast<int>(options.changes->size() - changes_before) : 0;
      reports->push_back(std::move(r));
    }
    current = std::move(next).value();
  }
  return current;
}

}  // namespace tagflow::graph::optimize
