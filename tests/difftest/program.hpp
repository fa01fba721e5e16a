// The random programs of the split-versus-one-device test (docs/testing.md,
// "The randomized split-versus-one-device test"): a program is a tree of
// blocks — the root, loop bodies, cond branches — whose statements compute
// int32 scalars, run while loops and conds, and write TensorArrays, stacks
// and resource variables. The same program is written in several forms
// (emit.hpp): a GraphDef as TensorFlow 1.x's Python API writes one, the same
// without the pivot edges TensorFlow adds (the "any-level" form, as
// hand-made GraphDefs are), GraphBuilder's TF 1 form and its TF 2 form
// (functional While and If).
//
// Programs terminate by construction: every loop's variable 0 is a counter
// (`i += step`, step >= 1) against a limit of small values (constants, the
// feed, other counters), and every NextIteration depends on a value that is
// dead in the loop's last iteration. Values stay within int32: every Add and
// Sub is taken modulo kModulus. Everything else is drawn at random:
// operands from every enclosing level, zero-iteration loops, constant-false
// predicates, loop invariants and constants fed straight to NextIteration,
// control inputs from the body (inside conds too), loops inside conds and
// conds inside loops, dead frame instances.
//
// A Program is a plain value: copied and edited freely (the shrinker does).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tagflow::difftest {

constexpr int32_t kModulus = 1009;

enum class BlockKind { root, loop_body, then_branch, else_branch };

// An operand: a constant or a slot (a value defined earlier in this block or
// in an enclosing one).
struct Value {
  enum class Kind { constant, slot };
  Kind kind = Kind::constant;
  int32_t constant = 0;
  // A constant made where it is read (TensorFlow's Const with a control
  // input from the block's pivot) rather than the root's, entered.
  bool local = false;
  int block = 0;
  int slot = 0;

  static Value of(int32_t c, bool local = false) {
    Value v;
    v.constant = c;
    v.local = local;
    return v;
  }
  static Value at(int block, int slot) {
    Value v;
    v.kind = Kind::slot;
    v.block = block;
    v.slot = slot;
    return v;
  }
  bool is_slot() const { return kind == Kind::slot; }
  bool operator==(const Value& o) const {
    return kind == o.kind && (is_slot() ? block == o.block && slot == o.slot
                                        : constant == o.constant && local == o.local);
  }
};

struct Block {
  BlockKind kind = BlockKind::root;
  int parent = -1;  // -1: the root
  int owner = -1;   // the loop or cond statement it belongs to
  std::vector<int> stmts;
  // Slots: the root's start with the feeds, a loop body's with its loop
  // variables (then the variable's read, if the loop updates one), then
  // each statement's outputs in order.
  int num_slots = 0;
};

enum class Pred {
  less,         // i < limit
  less_and,     // i < limit && var[pred_var] < bound
  const_false,  // a constant false made dependent on the Merge: zero iterations
};

// What one loop variable's NextIteration takes.
struct Next {
  Value value;
  std::vector<Value> control;  // slots of the body or of conds inside it
};

struct Stmt {
  enum class Kind { compute, loop, cond };
  Kind kind = Kind::compute;
  int block = 0;       // where it is
  int first_slot = 0;  // its outputs' first slot in `block`
  int num_outputs = 0;
  bool removed = false;  // the shrinker's: left out, its outputs read as 1

  // compute: op(a, b); Add and Sub modulo kModulus
  std::string op;
  Value a, b;

  // loop: outputs are its variables' Exits, then the TensorArray's size and
  // sum, then the stack's checksum
  int body = -1;
  std::vector<Value> init;  // per variable; 0 is the counter
  Value limit;
  int step = 1;
  Pred pred = Pred::less;
  int pred_var = 1;
  Value bound;
  int parallel_iterations = 10;
  std::vector<Next> next;  // per variable; next[0].value is i + step, whatever it says
  bool tensor_array = false;
  Value ta_value;  // written at the iteration's index
  bool stack = false;
  Value stack_value;  // pushed every iteration, popped by a second loop after
  int variable = -1;  // the resource variable it adds to (its read is a body slot)
  Value var_addend;

  // cond: Less(lhs, rhs) ? then : else
  Value lhs, rhs;
  int then_block = -1, else_block = -1;
  std::vector<Value> then_out, else_out;

  int num_vars() const { return static_cast<int>(init.size()); }
};

struct Program {
  std::vector<Block> blocks;  // 0: the root
  std::vector<Stmt> stmts;
  std::vector<int32_t> feeds;  // the root's first slots: Placeholders f0, f1, ... fed these
  std::vector<int32_t> variable_inits;  // resource variable k starts at variable_inits[k]
  std::vector<Value> fetches;  // root slots

  // Indented, one statement a line.
  std::string describe() const;
  // Nesting depth of loops at `block` (the root: 0).
  int loop_depth(int block) const;
  // Whether block `inner` is `outer` or inside it.
  bool within(int inner, int outer) const;
  // Whether statement s runs: neither it nor a statement around it removed.
  bool alive(int s) const;
  // Statements alive.
  int size() const;
  int total_loops() const;
};

struct GeneratorOptions {
  int max_depth = 4;       // loops nested at most this deep
  int max_stmts = 14;      // statements in all, about
  int max_trip = 3;        // a counter's limit is at most this (plus small sources)
  bool arrays = true;      // TensorArrays and stacks
  bool variables = true;   // resource variables
  bool tf1_quirks = true;  // constant-false predicates, straight NextIterations, control inputs
};

Program random_program(uint64_t seed, const GeneratorOptions& options = {});

}  // namespace tagflow::difftest
