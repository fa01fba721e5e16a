// GraphBuilder's control-flow contexts (private to graph/builder*.cpp): the
// root, one per cond branch and one per while loop, each with its parent.
// A node belongs to the context that was current when it was made; a value
// is visible in its own context and every context nested in it, and is
// captured (Switch for a branch, is_constant Enter for a loop) on its way in.
#pragma once

#include <string>

#include "graph/builder/builder.hpp"

namespace tagflow::graph {
inline namespace builder {

// Attr values the functional ops take, for builder*.cpp.
inline ops::AttrList type_list_attr(const std::vector<DType>& types) {
  ops::AttrList l;
  l.type = types;
  return l;
}

inline ops::NameAttrList func_attr(const std::string& name) {
  ops::NameAttrList f;
  f.name = name;
  return f;
}

struct GraphBuilder::Context {
  enum class Kind { root, branch, loop };
  Kind kind = Kind::root;
  int parent = -1;
  std::string name;   // the cond's or loop's name scope: "cond", "outer/while"
  std::string scope;  // prefix of the nodes it makes: "cond/"
  // The node input-less ops get a control edge from: a branch's switch_t /
  // switch_f; a loop's first Merge while its cond runs, then its first body
  // Identity (as TensorFlow's WhileContext does).
  Output pivot;
  // branch: the predicate (pred_id, in the parent context) and the Switch
  // port of this branch (1 true, 0 false).
  Output pred;
  int branch = 0;
  // loop
  std::string frame_name;
  int64_t parallel_iterations = 10;
};

}  // namespace builder
}  // namespace tagflow::graph
