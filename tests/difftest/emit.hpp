// A difftest Program (program.hpp) written as a graph, in one of four forms:
//
// - tf1: a GraphDef as TensorFlow 1.x's Python API writes one — every
//   Const of a loop body or branch has a control input from its pivot, an
//   op of a loop body whose inputs are all loop invariants (a NextIteration
//   among them) has one from the body's pivot, an Enter of an outer loop's
//   invariant has one from the outer pivot, and a loop's predicate
//   constants have one from its first Merge;
// - any_level: the same graph without those pivot edges where the graph
//   still means something without them, as hand-made GraphDefs are: body
//   constants depend on the loop's Merge or pivot, whichever, and a
//   NextIteration of a loop invariant on any node dead in the loop's last
//   iteration;
// - builder: GraphBuilder's while_loop and cond (TF 1 primitives; the
//   builder's own rules for pivots, captures and constants);
// - tf2: GraphBuilder in its TF 2 style (functional While and If over
//   library functions), run as written or lowered.
//
// A NextIteration's extra control inputs (Next::control) exist only in the
// two GraphDef forms; TensorArrays and stacks exist in every form but tf2
// (TF 2 has TensorLists instead), whose programs are drawn without them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graph/graph.hpp"
#include "ops/status.hpp"
#include "ops/tensor.hpp"
#include "program.hpp"

namespace tagflow::difftest {

enum class Form { tf1, any_level, builder, tf2 };

const char* form_name(Form f);
// "tf1", "any-level", "builder" or "tf2"; false if none.
bool parse_form(const std::string& text, Form* out);

struct Emitted {
  graph::Graph graph;
  std::vector<std::pair<std::string, ops::Tensor>> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> inits;  // targets run first, one step each (the variables' initialisers)
};

ops::Expected<Emitted> emit(const Program& p, Form form);

// The GraphDef text of the two GraphDef forms (for saving a case).
std::string emit_text(const Program& p, Form form);

}  // namespace tagflow::difftest
