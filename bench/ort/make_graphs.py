#!/usr/bin/env python3
"""Writes the TensorFlow GraphDefs (text form) that compute what the ONNX
models of make_models.py compute, for tagflow.

    python3 make_graphs.py [OUT_DIR]        # default graphs/

Plain Python, no library. Two forms of every loop, same n fed as the
Placeholder "n" (int32 scalar):

  *_tf1.pbtxt   TensorFlow 1 control flow, the node pattern tf.while_loop and
                tf.cond write: Enter / Merge / Less / LoopCond / Switch /
                Identity / NextIteration / Exit in frame "w", invariants
                entering with is_constant, constants in the frame hanging on
                the loop's Identity by a control edge; tf.cond as Switch on
                the predicate with switch_t / switch_f pivots and a Merge.
  *_tf2.pbtxt   TensorFlow 2 functional form: StatelessWhile over library
                functions (cond, body); captured tensors passed as loop
                variables, as while_v2 does; tf.cond in the body as StatelessIf.

  count     i = 0; while i < n: i += 1                          fetch w/Exit, While:0
  matmul    m = m0; n times: m = m @ K (64x64, K a permutation)  fetch w/m_exit, While:2
  rnn       h = 0; for t < n: h = tanh(X[t mod 64] W + h U + b)   fetch w/h_exit, While:2
  rnn_hH_bB the same at hidden H, batch B; batch element k at step t takes
            row (t + k) mod 64 of X                              fetch w/h_exit, While:2
  lstm_bB   h = c = 0; for t < n: gates = BiasAdd(x_t W + h U, b), Split in
            i f g o; c = sigmoid(f) c + sigmoid(i) tanh(g); h = sigmoid(o) tanh(c)
                                                                 fetch w/h_exit, While:2
  if        acc = 0; for i < n: acc = i % 2 == 1 ? acc + 5 : acc - 2
                                                                 fetch w/acc_exit, While:2
  mm_chain_1000.pbtxt  1000 MatMuls m @ K chained, no loop (baseline)  fetch m_final
  cnn_bB.pbtxt  Conv2D, BiasAdd, Relu, MaxPool twice, Mean over H W, MatMul,
            BiasAdd; no loop; x [B, 32, 32, 3] a Placeholder fed from
            cnn_bB_x.npy (written here too)                      fetch logits
"""

import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import weights as wts  # noqa: E402

CHAIN_LENGTHS = (1000,)  # run with --steps: the slope over steps, per node
H = wts.H


# --- GraphDef text, node by node (as tests/actors/test_graphs.hpp does) ---

def q(s):
    return '"' + s + '"'


def node(name, op, inputs=(), attrs=""):
    ins = "".join(" input: " + q(i) for i in inputs)
    return "node { name: %s op: %s%s %s }\n" % (q(name), q(op), ins, attrs)


def type_attr(key, dtype):
    return "attr { key: %s value { type: %s } }" % (q(key), dtype)


def int_attr(key, value):
    return "attr { key: %s value { i: %d } }" % (q(key), value)


def fmt_float(v):
    r = repr(float(v))
    return r[:-2] if r.endswith(".0") else r


def shape_text(dims):
    return "tensor_shape {%s }" % "".join(" dim { size: %d }" % d for d in dims)


def tensor_text(dtype, dims, values):
    field = "float_val" if dtype == "DT_FLOAT" else "int_val"
    fmt = fmt_float if dtype == "DT_FLOAT" else str
    vals = " ".join("%s: %s" % (field, fmt(v)) for v in values)
    return "tensor { dtype: %s %s %s }" % (dtype, shape_text(dims), vals)


def const_attrs(dtype, dims, values):
    return "%s attr { key: \"value\" value { %s } }" % (type_attr("dtype", dtype),
                                                       tensor_text(dtype, dims, values))


def const(name, dtype, dims, values, control=()):
    return node(name, "Const", ["^" + c for c in control], const_attrs(dtype, dims, values))


def int_const(name, value, control=()):
    return const(name, "DT_INT32", [], [value], control)


def placeholder_n():
    return node("n", "Placeholder", (), type_attr("dtype", "DT_INT32") +
                " attr { key: \"shape\" value { shape {} } }")


def enter(name, inp, frame, is_constant=False, dtype="DT_INT32", parallel_iterations=10):
    return node(name, "Enter", [inp],
                "%s attr { key: \"frame_name\" value { s: %s } } attr { key: \"is_constant\" value { b: %s } } %s"
                % (type_attr("T", dtype), q(frame), "true" if is_constant else "false",
                   int_attr("parallel_iterations", parallel_iterations)))


def unary(name, op, inp, dtype="DT_INT32"):
    return node(name, op, [inp], type_attr("T", dtype))


def binary(name, op, a, b, dtype="DT_INT32"):
    return node(name, op, [a, b], type_attr("T", dtype))


def merge(name, inputs, dtype="DT_INT32"):
    return node(name, "Merge", inputs, type_attr("T", dtype) + " " + int_attr("N", len(inputs)))


def counting_loop(p, start, limit, body_extra=""):
    """p/i = start; while p/i < limit: p/i += 1, frame p; the body sees the
    counter as p/Identity and the predicate as p/LoopCond."""
    return (enter(p + "/Enter", start, p) + enter(p + "/limit", limit, p, True) +
            merge(p + "/Merge", [p + "/Enter", p + "/NextIteration"]) +
            binary(p + "/Less", "Less", p + "/Merge", p + "/limit") +
            node(p + "/LoopCond", "LoopCond", [p + "/Less"]) +
            binary(p + "/Switch", "Switch", p + "/Merge", p + "/LoopCond") +
            unary(p + "/Identity", "Identity", p + "/Switch:1") +
            int_const(p + "/step", 1, [p + "/Identity"]) +
            binary(p + "/Add", "Add", p + "/Identity", p + "/step") + body_extra +
            unary(p + "/NextIteration", "NextIteration", p + "/Add") +
            unary(p + "/Exit", "Exit", p + "/Switch"))


def loop_var(p, v, init, dtype):
    """A loop variable v of frame p: Enter, Merge (with p/v_next), Switch on
    p/LoopCond, Identity (v in the body: p/v_identity), Exit (p/v_exit).
    The body must define p/v_next (the NextIteration)."""
    return (enter("%s/%s_enter" % (p, v), init, p, False, dtype) +
            merge("%s/%s_merge" % (p, v), ["%s/%s_enter" % (p, v), "%s/%s_next" % (p, v)], dtype) +
            binary("%s/%s_switch" % (p, v), "Switch", "%s/%s_merge" % (p, v), p + "/LoopCond", dtype) +
            unary("%s/%s_identity" % (p, v), "Identity", "%s/%s_switch:1" % (p, v), dtype) +
            unary("%s/%s_exit" % (p, v), "Exit", "%s/%s_switch" % (p, v), dtype))


def graphdef(nodes, library=""):
    return nodes + ("library {\n%s}\n" % library) + "versions { producer: 27 }\n"


# --- function library (TF2) ---

def arg(name, dtype):
    return "name: %s type: %s" % (q(name), dtype)


def function(name, inputs, outputs, node_defs, rets):
    sig = "signature { name: %s%s%s }" % (
        q(name), "".join(" input_arg { %s }" % arg(n, t) for n, t in inputs),
        "".join(" output_arg { %s }" % arg(n, t) for n, t in outputs))
    body = "".join("  node_def { %s }\n" % nd for nd in node_defs)
    ret = "".join("  ret { key: %s value: %s }\n" % (q(k), q(v)) for k, v in rets)
    return "function {\n  %s\n%s%s}\n" % (sig, body, ret)


def fnode(name, op, inputs=(), attrs=""):
    ins = "".join(" input: " + q(i) for i in inputs)
    return "name: %s op: %s%s %s" % (q(name), q(op), ins, attrs)


def fconst(name, dtype, dims, values):
    return fnode(name, "Const", (), const_attrs(dtype, dims, values))


def list_attr(key, dtypes):
    return "attr { key: %s value { list {%s } } }" % (q(key), "".join(" type: " + t for t in dtypes))


def func_attr(key, fname):
    return "attr { key: %s value { func { name: %s } } }" % (q(key), q(fname))


def stateless_while(name, inputs, dtypes, cond, body):
    return node(name, "StatelessWhile", inputs,
                "%s %s %s %s" % (list_attr("T", dtypes), func_attr("cond", cond), func_attr("body", body),
                                 int_attr("parallel_iterations", 10)))


def less_cond(fname, loop_vars):
    """cond(i, n, ...) = i < n."""
    return function(fname, loop_vars, [("p", "DT_BOOL")],
                    [fnode("lt", "Less", ["i", "n"], type_attr("T", "DT_INT32"))], [("p", "lt:z:0")])


# --- the cases ---

def zero_and_n():
    return int_const("zero", 0) + placeholder_n()


def count_tf1():
    return graphdef(zero_and_n() + counting_loop("w", "zero", "n"))


def count_tf2():
    lv = [("i", "DT_INT32"), ("n", "DT_INT32")]
    body = function("count_body", lv, [("i1", "DT_INT32"), ("n1", "DT_INT32")],
                    [fconst("one", "DT_INT32", [], [1]),
                     fnode("next", "AddV2", ["i", "one:output:0"], type_attr("T", "DT_INT32"))],
                    [("i1", "next:z:0"), ("n1", "n")])
    return graphdef(zero_and_n() + stateless_while("While", ["zero", "n"], ["DT_INT32"] * 2,
                                                   "count_cond", "count_body"),
                    less_cond("count_cond", lv) + body)


def matmul_consts(w):
    return const("m0", "DT_FLOAT", [H, H], w["m0"]) + const("K", "DT_FLOAT", [H, H], w["K"])


def matmul_tf1(w):
    body = (loop_var("w", "m", "m0", "DT_FLOAT") + enter("w/k", "K", "w", True, "DT_FLOAT") +
            node("w/mm", "MatMul", ["w/m_identity", "w/k"], type_attr("T", "DT_FLOAT")) +
            unary("w/m_next", "NextIteration", "w/mm", "DT_FLOAT"))
    return graphdef(zero_and_n() + matmul_consts(w) + counting_loop("w", "zero", "n", body))


def matmul_tf2(w):
    lv = [("i", "DT_INT32"), ("n", "DT_INT32"), ("m", "DT_FLOAT"), ("k", "DT_FLOAT")]
    body = function("matmul_body", lv, [("i1", "DT_INT32"), ("n1", "DT_INT32"), ("m1", "DT_FLOAT"),
                                        ("k1", "DT_FLOAT")],
                    [fconst("one", "DT_INT32", [], [1]),
                     fnode("next", "AddV2", ["i", "one:output:0"], type_attr("T", "DT_INT32")),
                     fnode("mm", "MatMul", ["m", "k"], type_attr("T", "DT_FLOAT"))],
                    [("i1", "next:z:0"), ("n1", "n"), ("m1", "mm:product:0"), ("k1", "k")])
    return graphdef(zero_and_n() + matmul_consts(w) +
                    stateless_while("While", ["zero", "n", "m0", "K"],
                                    ["DT_INT32", "DT_INT32", "DT_FLOAT", "DT_FLOAT"],
                                    "matmul_cond", "matmul_body"),
                    less_cond("matmul_cond", lv) + body)


def mm_chain(w, length):
    text = matmul_consts(w)
    prev = "m0"
    for k in range(length):
        out = "m_final" if k == length - 1 else "m%d" % (k + 1)
        text += node(out, "MatMul", [prev, "K"], type_attr("T", "DT_FLOAT"))
        prev = out
    return graphdef(text)


def rnn_consts(w, r, B):
    Hr = r["H"]
    return (const("X", "DT_FLOAT", [wts.TABLE, wts.IN], w["X"]) + const("W", "DT_FLOAT", [wts.IN, Hr], r["W"]) +
            const("U", "DT_FLOAT", [Hr, Hr], r["U"]) + const("b", "DT_FLOAT", [1, Hr], r["b"]) +
            const("h0", "DT_FLOAT", [B, Hr], [0.0] * (B * Hr)))


GATHER_ATTRS = " ".join([type_attr("Tparams", "DT_FLOAT"), type_attr("Tindices", "DT_INT32"),
                         type_attr("Taxis", "DT_INT32"), int_attr("batch_dims", 0)])
RESHAPE_ATTRS = type_attr("T", "DT_INT32") + " " + type_attr("Tshape", "DT_INT32")


def batch_rows_tf1(B):
    """w/x_t: the [B, IN] rows of X for step w/Identity, row (t + k) mod 64
    for batch element k. Batch 1 keeps the anchor's FloorMod, Reshape,
    GatherV2; a larger batch adds the offsets 0..B-1 (AddV2, FloorMod,
    GatherV2)."""
    text = int_const("w/table_rows", wts.TABLE, ["w/Identity"])
    if B == 1:
        text += (const("w/shape1", "DT_INT32", [1], [1], ["w/Identity"]) +
                 int_const("w/axis", 0, ["w/Identity"]) +
                 binary("w/row", "FloorMod", "w/Identity", "w/table_rows") +
                 node("w/row1", "Reshape", ["w/row", "w/shape1"], RESHAPE_ATTRS))
    else:
        text += (const("w/offsets", "DT_INT32", [B], list(range(B)), ["w/Identity"]) +
                 int_const("w/axis", 0, ["w/Identity"]) +
                 binary("w/rows", "AddV2", "w/Identity", "w/offsets") +
                 binary("w/row1", "FloorMod", "w/rows", "w/table_rows"))
    return text + node("w/x_t", "GatherV2", ["w/X", "w/row1", "w/axis"], GATHER_ATTRS)


def batch_rows_tf2(B):
    """The same as node defs of a function body (x_t:output:0)."""
    i32 = "DT_INT32"
    table_rows, axis = fconst("table_rows", i32, [], [wts.TABLE]), fconst("axis", i32, [], [0])
    if B == 1:
        return [table_rows, fconst("shape1", i32, [1], [1]), axis,
                fnode("row", "FloorMod", ["i", "table_rows:output:0"], type_attr("T", i32)),
                fnode("row1", "Reshape", ["row:z:0", "shape1:output:0"], RESHAPE_ATTRS),
                fnode("x_t", "GatherV2", ["x", "row1:output:0", "axis:output:0"], GATHER_ATTRS)]
    return [table_rows, axis, fconst("offsets", i32, [B], list(range(B))),
            fnode("rows", "AddV2", ["i", "offsets:output:0"], type_attr("T", i32)),
            fnode("row1", "FloorMod", ["rows:z:0", "table_rows:output:0"], type_attr("T", i32)),
            fnode("x_t", "GatherV2", ["x", "row1:z:0", "axis:output:0"], GATHER_ATTRS)]


def rnn_tf1(w, r, B):
    inv = "".join(enter("w/" + c, c, "w", True, "DT_FLOAT") for c in ("X", "W", "U", "b"))
    body = (loop_var("w", "h", "h0", "DT_FLOAT") + inv + batch_rows_tf1(B) +
            node("w/xw", "MatMul", ["w/x_t", "w/W"], type_attr("T", "DT_FLOAT")) +
            node("w/hu", "MatMul", ["w/h_identity", "w/U"], type_attr("T", "DT_FLOAT")) +
            binary("w/s", "AddV2", "w/xw", "w/hu", "DT_FLOAT") +
            binary("w/pre", "AddV2", "w/s", "w/b", "DT_FLOAT") +
            unary("w/tanh", "Tanh", "w/pre", "DT_FLOAT") +
            unary("w/h_next", "NextIteration", "w/tanh", "DT_FLOAT"))
    return graphdef(zero_and_n() + rnn_consts(w, r, B) + counting_loop("w", "zero", "n", body))


def rnn_tf2(w, r, B):
    f, i32 = "DT_FLOAT", "DT_INT32"
    lv = [("i", i32), ("n", i32), ("h", f), ("x", f), ("w", f), ("u", f), ("b", f)]
    outs = [(name + "1", t) for name, t in lv]
    body = function("rnn_body", lv, outs,
                    [fconst("one", i32, [], [1])] + batch_rows_tf2(B) +
                    [fnode("xw", "MatMul", ["x_t:output:0", "w"], type_attr("T", f)),
                     fnode("hu", "MatMul", ["h", "u"], type_attr("T", f)),
                     fnode("s", "AddV2", ["xw:product:0", "hu:product:0"], type_attr("T", f)),
                     fnode("pre", "AddV2", ["s:z:0", "b"], type_attr("T", f)),
                     fnode("tanh", "Tanh", ["pre:z:0"], type_attr("T", f)),
                     fnode("next", "AddV2", ["i", "one:output:0"], type_attr("T", i32))],
                    [("i1", "next:z:0"), ("n1", "n"), ("h1", "tanh:y:0"), ("x1", "x"), ("w1", "w"),
                     ("u1", "u"), ("b1", "b")])
    return graphdef(zero_and_n() + rnn_consts(w, r, B) +
                    stateless_while("While", ["zero", "n", "h0", "X", "W", "U", "b"],
                                    [t for _, t in lv], "rnn_cond", "rnn_body"),
                    less_cond("rnn_cond", lv) + body)


def lstm_consts(w, l, B):
    Hl = l["H"]
    zeros = [0.0] * (B * Hl)
    return (const("X", "DT_FLOAT", [wts.TABLE, wts.IN], w["X"]) +
            const("W", "DT_FLOAT", [wts.IN, 4 * Hl], l["W"]) + const("U", "DT_FLOAT", [Hl, 4 * Hl], l["U"]) +
            const("b", "DT_FLOAT", [4 * Hl], l["b"]) +
            const("h0", "DT_FLOAT", [B, Hl], zeros) + const("c0", "DT_FLOAT", [B, Hl], zeros))


SPLIT_ATTRS = type_attr("T", "DT_FLOAT") + " " + int_attr("num_split", 4)
BIAS_ADD_ATTRS = type_attr("T", "DT_FLOAT") + " attr { key: \"data_format\" value { s: \"NHWC\" } }"


def lstm_tf1(w, l, B):
    """gates = BiasAdd(x_t W + h U, b), Split in i f g o; c = sigmoid(f) c +
    sigmoid(i) tanh(g); h = sigmoid(o) tanh(c). h and c are loop variables."""
    f = "DT_FLOAT"
    inv = "".join(enter("w/" + c, c, "w", True, f) for c in ("X", "W", "U", "b"))
    body = (loop_var("w", "h", "h0", f) + loop_var("w", "c", "c0", f) + inv + batch_rows_tf1(B) +
            node("w/xw", "MatMul", ["w/x_t", "w/W"], type_attr("T", f)) +
            node("w/hu", "MatMul", ["w/h_identity", "w/U"], type_attr("T", f)) +
            binary("w/s", "AddV2", "w/xw", "w/hu", f) +
            node("w/gates", "BiasAdd", ["w/s", "w/b"], BIAS_ADD_ATTRS) +
            int_const("w/split_dim", 1, ["w/Identity"]) +
            node("w/split", "Split", ["w/split_dim", "w/gates"], SPLIT_ATTRS) +
            unary("w/i", "Sigmoid", "w/split:0", f) + unary("w/f", "Sigmoid", "w/split:1", f) +
            unary("w/g", "Tanh", "w/split:2", f) + unary("w/o", "Sigmoid", "w/split:3", f) +
            binary("w/fc", "Mul", "w/f", "w/c_identity", f) + binary("w/ig", "Mul", "w/i", "w/g", f) +
            binary("w/c_new", "AddV2", "w/fc", "w/ig", f) +
            unary("w/tc", "Tanh", "w/c_new", f) + binary("w/h_new", "Mul", "w/o", "w/tc", f) +
            unary("w/h_next", "NextIteration", "w/h_new", f) + unary("w/c_next", "NextIteration", "w/c_new", f))
    return graphdef(zero_and_n() + lstm_consts(w, l, B) + counting_loop("w", "zero", "n", body))


def lstm_tf2(w, l, B):
    f, i32 = "DT_FLOAT", "DT_INT32"
    lv = [("i", i32), ("n", i32), ("h", f), ("c", f), ("x", f), ("w", f), ("u", f), ("b", f)]
    outs = [(name + "1", t) for name, t in lv]
    tf = type_attr("T", f)
    body = function("lstm_body", lv, outs,
                    [fconst("one", i32, [], [1]), fconst("split_dim", i32, [], [1])] + batch_rows_tf2(B) +
                    [fnode("xw", "MatMul", ["x_t:output:0", "w"], tf),
                     fnode("hu", "MatMul", ["h", "u"], tf),
                     fnode("s", "AddV2", ["xw:product:0", "hu:product:0"], tf),
                     fnode("gates", "BiasAdd", ["s:z:0", "b"], BIAS_ADD_ATTRS),
                     fnode("split", "Split", ["split_dim:output:0", "gates:output:0"], SPLIT_ATTRS),
                     fnode("ig_", "Sigmoid", ["split:output:0"], tf),
                     fnode("fg_", "Sigmoid", ["split:output:1"], tf),
                     fnode("gg_", "Tanh", ["split:output:2"], tf),
                     fnode("og_", "Sigmoid", ["split:output:3"], tf),
                     fnode("fc", "Mul", ["fg_:y:0", "c"], tf),
                     fnode("ig", "Mul", ["ig_:y:0", "gg_:y:0"], tf),
                     fnode("c_new", "AddV2", ["fc:z:0", "ig:z:0"], tf),
                     fnode("tc", "Tanh", ["c_new:z:0"], tf),
                     fnode("h_new", "Mul", ["og_:y:0", "tc:y:0"], tf),
                     fnode("next", "AddV2", ["i", "one:output:0"], type_attr("T", i32))],
                    [("i1", "next:z:0"), ("n1", "n"), ("h1", "h_new:z:0"), ("c1", "c_new:z:0"), ("x1", "x"),
                     ("w1", "w"), ("u1", "u"), ("b1", "b")])
    return graphdef(zero_and_n() + lstm_consts(w, l, B) +
                    stateless_while("While", ["zero", "n", "h0", "c0", "X", "W", "U", "b"],
                                    [t for _, t in lv], "lstm_cond", "lstm_body"),
                    less_cond("lstm_cond", lv) + body)


def list_ints_attr(key, values):
    return "attr { key: %s value { list {%s } } }" % (q(key), "".join(" i: %d" % v for v in values))


def str_attr(key, value):
    return "attr { key: %s value { s: %s } }" % (q(key), q(value))


def cnn(c, B):
    """x [B, 32, 32, 3] (Placeholder, fed) -> Conv2D 3x3x16 SAME, BiasAdd,
    Relu, MaxPool 2x2/2 -> Conv2D 3x3x32 SAME, BiasAdd, Relu, MaxPool ->
    Mean over H, W -> MatMul 32x10, BiasAdd -> logits [B, 10]. NHWC."""
    f = "DT_FLOAT"
    h, wd, ch = wts.CNN_IMAGE
    f1, f2 = wts.CNN_FILTERS
    k = wts.CNN_CLASSES
    nhwc = str_attr("data_format", "NHWC")
    conv = " ".join([type_attr("T", f), list_ints_attr("strides", [1, 1, 1, 1]), str_attr("padding", "SAME"),
                     nhwc, list_ints_attr("dilations", [1, 1, 1, 1]),
                     "attr { key: \"use_cudnn_on_gpu\" value { b: true } }"])
    pool = " ".join([type_attr("T", f), list_ints_attr("ksize", [1, 2, 2, 1]),
                     list_ints_attr("strides", [1, 2, 2, 1]), str_attr("padding", "VALID"), nhwc])
    bias = type_attr("T", f) + " " + nhwc
    mean = " ".join([type_attr("T", f), type_attr("Tidx", "DT_INT32"),
                     "attr { key: \"keep_dims\" value { b: false } }"])
    text = (node("x", "Placeholder", (), type_attr("dtype", f) +
                 " attr { key: \"shape\" value { shape {%s } } }" % "".join(
                     " dim { size: %d }" % d for d in (B, h, wd, ch))) +
            const("w1", f, [3, 3, ch, f1], c["w1"]) + const("b1", f, [f1], c["b1"]) +
            const("w2", f, [3, 3, f1, f2], c["w2"]) + const("b2", f, [f2], c["b2"]) +
            const("wd", f, [f2, k], c["wd"]) + const("bd", f, [k], c["bd"]) +
            const("hw", "DT_INT32", [2], [1, 2]) +
            node("conv1", "Conv2D", ["x", "w1"], conv) + node("bias1", "BiasAdd", ["conv1", "b1"], bias) +
            unary("relu1", "Relu", "bias1", f) + node("pool1", "MaxPool", ["relu1"], pool) +
            node("conv2", "Conv2D", ["pool1", "w2"], conv) + node("bias2", "BiasAdd", ["conv2", "b2"], bias) +
            unary("relu2", "Relu", "bias2", f) + node("pool2", "MaxPool", ["relu2"], pool) +
            node("mean", "Mean", ["pool2", "hw"], mean) +
            node("dense", "MatMul", ["mean", "wd"], type_attr("T", f)) +
            node("logits", "BiasAdd", ["dense", "bd"], bias))
    return graphdef(text)


def write_npy(path, dims, values):
    """A float32 .npy file (format 1.0), plain Python."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d, " % d for d in dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%df" % len(values), *values))


def if_tf1():
    c = "w/cond"
    body = (loop_var("w", "acc", "zero", "DT_INT32") +
            int_const("w/two", 2, ["w/Identity"]) + int_const("w/one", 1, ["w/Identity"]) +
            binary("w/parity", "FloorMod", "w/Identity", "w/two") +
            binary("w/odd", "Equal", "w/parity", "w/one") +
            # tf.cond(odd, lambda: acc + 5, lambda: acc - 2)
            binary(c + "/Switch", "Switch", "w/odd", "w/odd", "DT_BOOL") +
            unary(c + "/switch_t", "Identity", c + "/Switch:1", "DT_BOOL") +
            unary(c + "/switch_f", "Identity", c + "/Switch:0", "DT_BOOL") +
            unary(c + "/pred_id", "Identity", "w/odd", "DT_BOOL") +
            binary(c + "/acc_switch", "Switch", "w/acc_identity", c + "/pred_id") +
            int_const(c + "/five", 5, [c + "/switch_t"]) +
            binary(c + "/add", "Add", c + "/acc_switch:1", c + "/five") +
            int_const(c + "/two", 2, [c + "/switch_f"]) +
            binary(c + "/sub", "Sub", c + "/acc_switch", c + "/two") +
            merge(c + "/Merge", [c + "/sub", c + "/add"]) +
            unary("w/acc_next", "NextIteration", c + "/Merge"))
    return graphdef(zero_and_n() + counting_loop("w", "zero", "n", body))


def if_tf2():
    i32 = "DT_INT32"
    lv = [("i", i32), ("n", i32), ("acc", i32)]
    t_attr = type_attr("T", i32)
    branch = lambda name, op, k: function(  # noqa: E731
        name, [("x", i32)], [("y", i32)],
        [fconst(name + "_k", i32, [], [k]), fnode(name + "_r", op, ["x", name + "_k:output:0"], t_attr)],
        [("y", name + "_r:z:0")])
    if_attrs = " ".join([type_attr("Tcond", "DT_BOOL"), list_attr("Tin", [i32]), list_attr("Tout", [i32]),
                         func_attr("then_branch", "add_five"), func_attr("else_branch", "sub_two")])
    body = function("if_body", lv, [("i1", i32), ("n1", i32), ("acc1", i32)],
                    [fconst("one", i32, [], [1]), fconst("two", i32, [], [2]),
                     fnode("parity", "FloorMod", ["i", "two:output:0"], t_attr),
                     fnode("odd", "Equal", ["parity:z:0", "one:output:0"], t_attr),
                     fnode("branch", "StatelessIf", ["odd:z:0", "acc"], if_attrs),
                     fnode("next", "AddV2", ["i", "one:output:0"], t_attr)],
                    [("i1", "next:z:0"), ("n1", "n"), ("acc1", "branch:output:0")])
    return graphdef(zero_and_n() + stateless_while("While", ["zero", "n", "zero"], [i32] * 3,
                                                   "if_cond", "if_body"),
                    less_cond("if_cond", lv) + body + branch("add_five", "AddV2", 5) +
                    branch("sub_two", "Sub", 2))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "graphs")
    os.makedirs(out, exist_ok=True)
    w = wts.all_weights()
    graphs = {
        "count_tf1": count_tf1(), "count_tf2": count_tf2(),
        "matmul_tf1": matmul_tf1(w), "matmul_tf2": matmul_tf2(w),
        "if_tf1": if_tf1(), "if_tf2": if_tf2(),
    }
    e = wts.extra_weights()
    for Hr, B in wts.RNN_SHAPES:
        name = wts.rnn_name(Hr, B)
        graphs[name + "_tf1"] = rnn_tf1(w, e["rnn_h%d" % Hr], B)
        graphs[name + "_tf2"] = rnn_tf2(w, e["rnn_h%d" % Hr], B)
    lstm = e["lstm_h%d" % wts.LSTM_HIDDEN]
    for B in wts.LSTM_BATCHES:
        graphs["lstm_b%d_tf1" % B] = lstm_tf1(w, lstm, B)
        graphs["lstm_b%d_tf2" % B] = lstm_tf2(w, lstm, B)
    image = 1
    for d in wts.CNN_IMAGE:
        image *= d
    for B in wts.CNN_BATCHES:
        graphs["cnn_b%d" % B] = cnn(e["cnn"], B)
        # The fed input (--feed x=@graphs/cnn_bB_x.npy): the first B images.
        write_npy(os.path.join(out, "cnn_b%d_x.npy" % B), (B,) + wts.CNN_IMAGE, e["cnn"]["x"][:B * image])
    for length in CHAIN_LENGTHS:
        graphs["mm_chain_%d" % length] = mm_chain(w, length)
    header = "# Generated by make_graphs.py (bench/ort); do not edit.\n"
    for name, text in graphs.items():
        with open(os.path.join(out, name + ".pbtxt"), "w") as f:
            f.write(header + text)
    print("wrote %d graphs to %s" % (len(graphs), out))


if __name__ == "__main__":
    main()
