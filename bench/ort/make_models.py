#!/usr/bin/env python3
"""Writes the ONNX models of the side-by-side loop benchmarks.

    python3 make_models.py [OUT_DIR]        # default build/models

Needs `protoc` and the Python protobuf runtime (Debian: protobuf-compiler,
python3-protobuf; run it with /usr/bin/python3 if another python3 comes
first on PATH). The Python classes are generated from onnx.proto into
build/pb/ at every run; nothing generated is kept beside the sources.

Every model takes the trip count as input "n" (int32 scalar), so the cost of
one iteration is the slope between two n, which cancels the per-call cost of
the binding. Models (opset 17, IR version 8):

  count_cond    i = 0; while i < n: i += 1        Loop, cond computed in the body
                                                   (Less + Add a turn, as TF's loop)
  count_trip    the same with Loop's trip count M = n (Add + Identity a turn)
  matmul_loop   m = m0; n times: m = m @ K         64x64 float, K a permutation matrix
  mm_chain_U    U MatMuls m @ K chained, no Loop   baseline; m0 is an input (no folding)
  rnn_loop      h = 0; for t < n: h = tanh(X[t mod 64] W + h U + b)   hidden 64, batch 1
  rnn_scan      the same over Scan, xs ([n, 64], fed) the scanned input
  rnn_hH_bB_loop, rnn_hH_bB_scan   the same at hidden H and batch B (weights.RNN_SHAPES);
                batch element k at step t takes row (t + k) mod 64 of X
  lstm_bB_loop  h = c = 0; for t < n: gates = x_t W + h U + b, split in i f g o;
                c = sigmoid(f) c + sigmoid(i) tanh(g); h = sigmoid(o) tanh(c)
                hidden 64, batch B, the ops spelled out in a Loop
  lstm_bB_op    the same as ONNX's LSTM op over xs ([n, B, 64], fed)
  cnn_bB        conv 3x3x16 + relu, maxpool 2, conv 3x3x32 + relu, maxpool 2,
                mean over H W, dense 32 -> 10; x [B, 3, 32, 32] fed (NCHW), no loop
  if_loop       acc = 0; for i < n: acc = (i % 2 == 1) ? acc + 5 : acc - 2   If in the body
"""

import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import weights as wts  # noqa: E402

PB_DIR = os.path.join(HERE, "build", "pb")
CHAIN_LENGTHS = (100, 1000)


def load_onnx_pb2():
    os.makedirs(PB_DIR, exist_ok=True)
    subprocess.run(["protoc", "--proto_path=" + HERE, "--python_out=" + PB_DIR,
                    os.path.join(HERE, "onnx.proto")], check=True)
    sys.path.insert(0, PB_DIR)
    import onnx_pb2  # noqa: E402
    return onnx_pb2


onnx = load_onnx_pb2()
T = onnx.TensorProto
A = onnx.AttributeProto
FLOAT, INT32, INT64, BOOL = T.FLOAT, T.INT32, T.INT64, T.BOOL
_PACK = {FLOAT: "f", INT32: "i", INT64: "q", BOOL: "?"}


def tensor(name, dtype, dims, values):
    t = T(name=name, data_type=dtype, dims=list(dims))
    t.raw_data = struct.pack("<%d%s" % (len(values), _PACK[dtype]), *values)
    return t


def vinfo(name, dtype, dims):
    """A typed value; dims None: unknown rank; a str in dims: a symbolic dim."""
    v = onnx.ValueInfoProto(name=name)
    tt = v.type.tensor_type
    tt.elem_type = dtype
    if dims is not None:
        tt.shape.SetInParent()
        for d in dims:
            dim = tt.shape.dim.add()
            if isinstance(d, str):
                dim.dim_param = d
            else:
                dim.dim_value = d
    return v


def node(op, inputs, outputs, name=None, **attrs):
    n = onnx.NodeProto(op_type=op, input=inputs, output=outputs, name=name or outputs[0])
    for key, val in attrs.items():
        a = n.attribute.add()
        a.name = key
        if isinstance(val, onnx.GraphProto):
            a.type = A.GRAPH
            a.g.CopyFrom(val)
        elif isinstance(val, int):
            a.type = A.INT
            a.i = val
        elif isinstance(val, list) and all(isinstance(x, int) for x in val):
            a.type = A.INTS
            a.ints.extend(val)
        else:
            raise TypeError(key)
    return n


def graph(name, nodes, inputs, outputs, initializers=()):
    return onnx.GraphProto(name=name, node=nodes, input=inputs, output=outputs,
                           initializer=list(initializers))


def model(g):
    m = onnx.ModelProto(ir_version=8, producer_name="tagflow/bench/ort/make_models.py", graph=g)
    op = m.opset_import.add()
    op.domain = ""
    op.version = 17
    return m


def scalar(name, dtype, value):
    return tensor(name, dtype, [], [value])


N_IN = vinfo("n", INT32, [])


def trip_count_nodes():
    """M (int64) from the fed n, and a constant true condition."""
    return [node("Cast", ["n"], ["M"], to=INT64)], [tensor("true", BOOL, [], [True])]


def count_cond():
    body = graph("count_body",
                 [node("Add", ["i", "one"], ["i_next"]),
                  node("Less", ["i_next", "n"], ["cond_out"])],
                 [vinfo("iter", INT64, []), vinfo("cond_in", BOOL, []), vinfo("i", INT32, [])],
                 [vinfo("cond_out", BOOL, []), vinfo("i_next", INT32, [])],
                 [scalar("one", INT32, 1)])
    return graph("count_cond",
                 [node("Less", ["zero", "n"], ["cond0"]),
                  node("Loop", ["", "cond0", "zero"], ["i_final"], name="loop", body=body)],
                 [N_IN], [vinfo("i_final", INT32, [])], [scalar("zero", INT32, 0)])


def count_trip():
    pre, inits = trip_count_nodes()
    body = graph("count_body",
                 [node("Identity", ["cond_in"], ["cond_out"]),
                  node("Add", ["i", "one"], ["i_next"])],
                 [vinfo("iter", INT64, []), vinfo("cond_in", BOOL, []), vinfo("i", INT32, [])],
                 [vinfo("cond_out", BOOL, []), vinfo("i_next", INT32, [])],
                 [scalar("one", INT32, 1)])
    return graph("count_trip",
                 pre + [node("Loop", ["M", "true", "zero"], ["i_final"], name="loop", body=body)],
                 [N_IN], [vinfo("i_final", INT32, [])], inits + [scalar("zero", INT32, 0)])


def matmul_loop(w):
    pre, inits = trip_count_nodes()
    H = wts.H
    body = graph("matmul_body",
                 [node("Identity", ["cond_in"], ["cond_out"]),
                  node("MatMul", ["m", "K"], ["m_next"])],
                 [vinfo("iter", INT64, []), vinfo("cond_in", BOOL, []), vinfo("m", FLOAT, [H, H])],
                 [vinfo("cond_out", BOOL, []), vinfo("m_next", FLOAT, [H, H])])
    return graph("matmul_loop",
                 pre + [node("Loop", ["M", "true", "m0"], ["m_final"], name="loop", body=body)],
                 [N_IN], [vinfo("m_final", FLOAT, [H, H])],
                 inits + [tensor("m0", FLOAT, [H, H], w["m0"]), tensor("K", FLOAT, [H, H], w["K"])])


def mm_chain(w, length):
    H = wts.H
    nodes = []
    prev = "m0"
    for k in range(length):
        out = "m_final" if k == length - 1 else "m%d" % (k + 1)
        nodes.append(node("MatMul", [prev, "K"], [out]))
        prev = out
    return graph("mm_chain_%d" % length, nodes, [vinfo("m0", FLOAT, [H, H])],
                 [vinfo("m_final", FLOAT, [H, H])], [tensor("K", FLOAT, [H, H], w["K"])])


def rnn_consts(r, B, prefix=""):
    """W [IN, H], U [H, H], b [1, H], h0 = 0 [B, H]: the initializers of an RNN."""
    H = r["H"]
    return [tensor("W", FLOAT, [wts.IN, H], r["W"]), tensor("U", FLOAT, [H, H], r["U"]),
            tensor("b", FLOAT, [1, H], r["b"]), tensor("h0", FLOAT, [B, H], [0.0] * (B * H))]


def batch_rows(B):
    """Body nodes and initializers giving x_t, the [B, IN] rows of X for step
    `iter`: row (iter + k) mod 64 for batch element k. Batch 1 keeps the
    anchor's Mod, Reshape, Gather; a larger batch adds the offsets 0..B-1
    (Add, Mod, Gather)."""
    if B == 1:
        return ([node("Mod", ["iter", "table_rows"], ["row"]),
                 node("Reshape", ["row", "shape1"], ["row1"]),
                 node("Gather", ["X", "row1"], ["x_t"], axis=0)],                # [1, IN]
                [scalar("table_rows", INT64, wts.TABLE), tensor("shape1", INT64, [1], [1])])
    return ([node("Add", ["iter", "offsets"], ["rows"]),
             node("Mod", ["rows", "table_rows"], ["row1"]),
             node("Gather", ["X", "row1"], ["x_t"], axis=0)],                    # [B, IN]
            [scalar("table_rows", INT64, wts.TABLE), tensor("offsets", INT64, [B], list(range(B)))])


def rnn_loop(w, r, B):
    """h = 0; for t < n: h = tanh(x_t W + h U + b), hidden r["H"], batch B."""
    pre, inits = trip_count_nodes()
    H = r["H"]
    rows, row_inits = batch_rows(B)
    body = graph("rnn_body",
                 [node("Identity", ["cond_in"], ["cond_out"])] + rows +
                 [node("MatMul", ["x_t", "W"], ["xw"]),
                  node("MatMul", ["h", "U"], ["hu"]),
                  node("Add", ["xw", "hu"], ["s"]),
                  node("Add", ["s", "b"], ["pre"]),
                  node("Tanh", ["pre"], ["h_next"])],
                 [vinfo("iter", INT64, []), vinfo("cond_in", BOOL, []), vinfo("h", FLOAT, [B, H])],
                 [vinfo("cond_out", BOOL, []), vinfo("h_next", FLOAT, [B, H])],
                 row_inits)
    return graph("rnn_loop",
                 pre + [node("Loop", ["M", "true", "h0"], ["h_final"], name="loop", body=body)],
                 [N_IN], [vinfo("h_final", FLOAT, [B, H])],
                 inits + [tensor("X", FLOAT, [wts.TABLE, wts.IN], w["X"])] + rnn_consts(r, B))


def rnn_scan(r, B):
    """The same over Scan: xs[t] = the step's rows of X, fed by the runner
    (the trip count is its length): [n, IN] at batch 1 (the anchor's), else
    [n, B, IN]."""
    H = r["H"]
    x_dims = [wts.IN] if B == 1 else [B, wts.IN]
    body = graph("rnn_scan_body",
                 [node("MatMul", ["x_t", "W"], ["xw"]),                  # [B, H] ([H] at batch 1)
                  node("MatMul", ["h", "U"], ["hu"]),                    # [B, H]
                  node("Add", ["xw", "hu"], ["s"]),
                  node("Add", ["s", "b"], ["pre"]),
                  node("Tanh", ["pre"], ["h_next"])],
                 [vinfo("h", FLOAT, [B, H]), vinfo("x_t", FLOAT, x_dims)],
                 [vinfo("h_next", FLOAT, [B, H])])
    return graph("rnn_scan",
                 [node("Scan", ["h0", "xs"], ["h_final"], name="scan", body=body, num_scan_inputs=1)],
                 [vinfo("xs", FLOAT, ["T"] + x_dims)], [vinfo("h_final", FLOAT, [B, H])],
                 rnn_consts(r, B))


def lstm_consts(l, B):
    H = l["H"]
    return [tensor("W", FLOAT, [wts.IN, 4 * H], l["W"]), tensor("U", FLOAT, [H, 4 * H], l["U"]),
            tensor("b", FLOAT, [4 * H], l["b"]),
            tensor("h0", FLOAT, [B, H], [0.0] * (B * H)), tensor("c0", FLOAT, [B, H], [0.0] * (B * H))]


def lstm_loop(w, l, B):
    """h = c = 0; for t < n: [i f g o] = x_t W + h U + b; i, f, o = sigmoid,
    g = tanh; c = f c + i g; h = o tanh(c). The ops spelled out (not ONNX's
    LSTM), as the TensorFlow graph has them."""
    pre, inits = trip_count_nodes()
    H = l["H"]
    rows, row_inits = batch_rows(B)
    body = graph("lstm_body",
                 [node("Identity", ["cond_in"], ["cond_out"])] + rows +
                 [node("MatMul", ["x_t", "W"], ["xw"]),                  # [B, 4H]
                  node("MatMul", ["h", "U"], ["hu"]),
                  node("Add", ["xw", "hu"], ["s"]),
                  node("Add", ["s", "b"], ["gates"]),
                  node("Split", ["gates"], ["i_pre", "f_pre", "g_pre", "o_pre"], axis=1),   # 4 x [B, H]
                  node("Sigmoid", ["i_pre"], ["i"]),
                  node("Sigmoid", ["f_pre"], ["f"]),
                  node("Tanh", ["g_pre"], ["g"]),
                  node("Sigmoid", ["o_pre"], ["o"]),
                  node("Mul", ["f", "c"], ["fc"]),
                  node("Mul", ["i", "g"], ["ig"]),
                  node("Add", ["fc", "ig"], ["c_next"]),
                  node("Tanh", ["c_next"], ["tc"]),
                  node("Mul", ["o", "tc"], ["h_next"])],
                 [vinfo("iter", INT64, []), vinfo("cond_in", BOOL, []), vinfo("h", FLOAT, [B, H]),
                  vinfo("c", FLOAT, [B, H])],
                 [vinfo("cond_out", BOOL, []), vinfo("h_next", FLOAT, [B, H]), vinfo("c_next", FLOAT, [B, H])],
                 row_inits)
    return graph("lstm_loop",
                 pre + [node("Loop", ["M", "true", "h0", "c0"], ["h_final", "c_final"], name="loop", body=body)],
                 [N_IN], [vinfo("h_final", FLOAT, [B, H])],
                 inits + [tensor("X", FLOAT, [wts.TABLE, wts.IN], w["X"])] + lstm_consts(l, B))


def lstm_op(l, B):
    """The same recurrence as ONNX's LSTM op over xs [n, B, IN] (fed; row t
    of batch element k is X[(t + k) mod 64]). Its gates are ordered i, o, f, c
    and its weights transposed: W [1, 4H, IN], R [1, 4H, H], B [1, 8H] (the
    bias, then zeros for the recurrent bias)."""
    H = l["H"]
    order = (0, 3, 1, 2)           # ONNX gate k takes our gate order[k] ([i f g o] -> [i o f c])

    def onnx_layout(m, rows):      # [rows, 4H] -> [4H, rows], gate blocks reordered
        return [m[r * 4 * H + order[k] * H + j] for k in range(4) for j in range(H) for r in range(rows)]

    bias = [l["b"][order[k] * H + j] for k in range(4) for j in range(H)] + [0.0] * (4 * H)
    return graph("lstm_op",
                 [node("LSTM", ["xs", "W", "R", "B"], ["", "h_last"], name="lstm", hidden_size=H),
                  node("Reshape", ["h_last", "shape_bh"], ["h_final"])],
                 [vinfo("xs", FLOAT, ["T", B, wts.IN])], [vinfo("h_final", FLOAT, [B, H])],
                 [tensor("W", FLOAT, [1, 4 * H, wts.IN], onnx_layout(l["W"], wts.IN)),
                  tensor("R", FLOAT, [1, 4 * H, H], onnx_layout(l["U"], H)),
                  tensor("B", FLOAT, [1, 8 * H], bias),
                  tensor("shape_bh", INT64, [2], [B, H])])


def cnn(c, B):
    """logits = dense(mean_hw(pool(relu(conv(pool(relu(conv(x))))))))), NCHW:
    x [B, 3, 32, 32] fed (the NHWC images transposed by the runner), filters
    transposed from TensorFlow's HWIO to OIHW, 3x3 pads 1 (SAME), 2x2 max
    pools stride 2, ReduceMean over H and W, MatMul + Add."""
    h, wd, ch = wts.CNN_IMAGE
    f1, f2 = wts.CNN_FILTERS
    k = wts.CNN_CLASSES
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    pool = dict(kernel_shape=[2, 2], strides=[2, 2])
    return graph("cnn",
                 [node("Conv", ["x", "w1", "b1"], ["conv1"], **conv),
                  node("Relu", ["conv1"], ["relu1"]),
                  node("MaxPool", ["relu1"], ["pool1"], **pool),           # [B, 16, 16, 16]
                  node("Conv", ["pool1", "w2", "b2"], ["conv2"], **conv),
                  node("Relu", ["conv2"], ["relu2"]),
                  node("MaxPool", ["relu2"], ["pool2"], **pool),           # [B, 32, 8, 8]
                  node("ReduceMean", ["pool2"], ["mean"], axes=[2, 3], keepdims=0),   # [B, 32]
                  node("MatMul", ["mean", "wd"], ["dense"]),
                  node("Add", ["dense", "bd"], ["logits"])],
                 [vinfo("x", FLOAT, [B, ch, h, wd])], [vinfo("logits", FLOAT, [B, k])],
                 [tensor("w1", FLOAT, [f1, ch, 3, 3], wts.hwio_to_oihw(c["w1"], 3, 3, ch, f1)),
                  tensor("b1", FLOAT, [f1], c["b1"]),
                  tensor("w2", FLOAT, [f2, f1, 3, 3], wts.hwio_to_oihw(c["w2"], 3, 3, f1, f2)),
                  tensor("b2", FLOAT, [f2], c["b2"]),
                  tensor("wd", FLOAT, [f2, k], c["wd"]), tensor("bd", FLOAT, [k], c["bd"])])


def if_loop():
    pre, inits = trip_count_nodes()
    then_g = graph("then_add5", [node("Add", ["acc", "five"], ["then_out"])], [],
                   [vinfo("then_out", INT32, [])])
    else_g = graph("else_sub2", [node("Sub", ["acc", "two32"], ["else_out"])], [],
                   [vinfo("else_out", INT32, [])])
    body = graph("if_body",
                 [node("Identity", ["cond_in"], ["cond_out"]),
                  node("Mod", ["iter", "two"], ["parity"]),
                  node("Equal", ["parity", "one64"], ["odd"]),
                  node("If", ["odd"], ["acc_next"], name="branch", then_branch=then_g, else_branch=else_g)],
                 [vinfo("iter", INT64, []), vinfo("cond_in", BOOL, []), vinfo("acc", INT32, [])],
                 [vinfo("cond_out", BOOL, []), vinfo("acc_next", INT32, [])],
                 [scalar("two", INT64, 2), scalar("one64", INT64, 1),
                  scalar("five", INT32, 5), scalar("two32", INT32, 2)])
    return graph("if_loop",
                 pre + [node("Loop", ["M", "true", "zero"], ["acc_final"], name="loop", body=body)],
                 [N_IN], [vinfo("acc_final", INT32, [])], inits + [scalar("zero", INT32, 0)])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "build", "models")
    os.makedirs(out, exist_ok=True)
    w = wts.all_weights()
    graphs = {
        "count_cond": count_cond(),
        "count_trip": count_trip(),
        "matmul_loop": matmul_loop(w),
        "if_loop": if_loop(),
    }
    e = wts.extra_weights()
    for H, B in wts.RNN_SHAPES:
        name = wts.rnn_name(H, B)
        graphs[name + "_loop"] = rnn_loop(w, e["rnn_h%d" % H], B)
        graphs[name + "_scan"] = rnn_scan(e["rnn_h%d" % H], B)
    lstm = e["lstm_h%d" % wts.LSTM_HIDDEN]
    for B in wts.LSTM_BATCHES:
        graphs["lstm_b%d_loop" % B] = lstm_loop(w, lstm, B)
        graphs["lstm_b%d_op" % B] = lstm_op(lstm, B)
    for B in wts.CNN_BATCHES:
        graphs["cnn_b%d" % B] = cnn(e["cnn"], B)
    for length in CHAIN_LENGTHS:
        graphs["mm_chain_%d" % length] = mm_chain(w, length)
    for name, g in graphs.items():
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(model(g).SerializeToString())
    # The constants, for the runners' references and the Scan input.
    with open(os.path.join(out, "weights.json"), "w") as f:
        json.dump({"H": wts.H, "TABLE": wts.TABLE, **w, **e}, f)
    print("wrote %d models and weights.json to %s" % (len(graphs), out))


if __name__ == "__main__":
    main()
