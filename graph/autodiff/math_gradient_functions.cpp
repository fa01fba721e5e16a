// The gradient functions of the math ops, in the form of TensorFlow's
// math_grad.py: binary elementwise ops reduce a broadcast gradient with
// BroadcastGradientArgs + Sum + Reshape; unary ops, matrix products,
// reductions, Cast and Select. Added to GradientRegistry::global() by
// gradient_functions.cpp.
#include <cmath>

#include "graph/autodiff/gradient_util.hpp"

namespace tagflow::graph {
inline namespace autodiff {

namespace {

using namespace gradient_util;

Status sum_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint axes, c.input(1));
  TRY(Endpoint kept, kept_shape(c, x, axes));
  TRY(Endpoint shaped, c.op1("Reshape", {g, kept}));
  TRY(Endpoint sx, c.op1("Shape", {x}));
  TRY(Endpoint dx, c.op1("BroadcastTo", {shaped, sx}));
  c.set(0, dx);
  return ok_status();
}

Status mean_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint y, c.output(0));
  TRY(Endpoint axes, c.input(1));
  TRY(Endpoint kept, kept_shape(c, x, axes));
  TRY(Endpoint shaped, c.op1("Reshape", {g, kept}));
  TRY(Endpoint sx, c.op1("Shape", {x}));
  TRY(Endpoint spread, c.op1("BroadcastTo", {shaped, sx}));
  TRY(Endpoint nx, c.op1("Size", {x}));
  TRY(Endpoint ny, c.op1("Size", {y}));
  TRY(Endpoint one, c.scalar(DType::int32, 1));
  TRY(Endpoint ny1, c.op1("Maximum", {ny, one}));
  TRY(Endpoint count, c.op1("FloorDiv", {nx, ny1}));
  TRY(Endpoint countf, c.op1("Cast", {count}, {{"DstT", c.output_type(0)}}));
  TRY(Endpoint dx, c.op1("RealDiv", {spread, countf}));
  c.set(0, dx);
  return ok_status();
}

// Max and Min: the gradient is shared by the elements equal to the result.
Status extremum_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint y, c.output(0));
  TRY(Endpoint axes, c.input(1));
  TRY(Endpoint kept, kept_shape(c, x, axes));
  TRY(Endpoint yk, c.op1("Reshape", {y, kept}));
  TRY(Endpoint gk, c.op1("Reshape", {g, kept}));
  TRY(Endpoint eq, c.op1("Equal", {yk, x}));
  TRY(Endpoint ind, c.op1("Cast", {eq}, {{"DstT", c.input_type(0)}}));
  TRY(Endpoint n, c.op1("Sum", {ind, axes}, {{"keep_dims", true}}));
  TRY(Endpoint share, c.op1("RealDiv", {ind, n}));
  TRY(Endpoint dx, c.op1("Mul", {share, gk}));
  c.set(0, dx);
  return ok_status();
}

Status matmul_grad(C& c, const char* op, const char* ta_attr, const char* tb_attr) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint a, c.input(0));
  TRY(Endpoint b, c.input(1));
  const bool* pta = c.node().attr<bool>(ta_attr);
  const bool* ptb = c.node().attr<bool>(tb_attr);
  const bool ta = pta && *pta, tb = ptb && *ptb;
  auto mm = [&](Endpoint x, Endpoint y, bool tx, bool ty) {
    return c.op1(op, {x, y}, {{ta_attr, tx}, {tb_attr, ty}});
  };
  Expected<Endpoint> ga = Status(Error::internal, "unset"), gb = ga;
  if (!ta && !tb) {
    ga = mm(g, b, false, true);
    gb = mm(a, g, true, false);
  } else if (!ta && tb) {
    ga = mm(g, b, false, false);
    gb = mm(g, a, true, false);
  } else if (ta && !tb) {
    ga = mm(b, g, false, true);
    gb = mm(a, g, false, false);
  } else {
    ga = mm(b, g, true, true);
    gb = mm(g, a, true, true);
  }
  if (!ga.ok()) return ga.status();
  if (!gb.ok()) return gb.status();
  if (std::string(op) == "BatchMatMulV2") {
    // Batch dimensions broadcast: sum the gradients over the broadcast ones.
    TRY(Endpoint sa, c.op1("Shape", {a}));
    TRY(Endpoint sb, c.op1("Shape", {b}));
    TRY(Endpoint zero, c.int_vector({0}));
    TRY(Endpoint minus2, c.int_vector({-2}));
    TRY(Endpoint one, c.int_vector({1}));
    TRY(Endpoint ba, c.op1("StridedSlice", {sa, zero, minus2, one}));
    TRY(Endpoint bb, c.op1("StridedSlice", {sb, zero, minus2, one}));
    TRY(std::vector<Endpoint> r, c.op("BroadcastGradientArgs", {ba, bb}));
    TRY(Endpoint ra, c.op1("Sum", {*ga, r[0]}));
    TRY(Endpoint rb, c.op1("Sum", {*gb, r[1]}));
    TRY(Endpoint da, c.op1("Reshape", {ra, sa}));
    TRY(Endpoint db, c.op1("Reshape", {rb, sb}));
    c.set(0, da);
    c.set(1, db);
    return ok_status();
  }
  c.set(0, *ga);
  c.set(1, *gb);
  return ok_status();
}

Status cast_grad(C& c) {
  if (!is_differentiable(c.input_type(0))) return ok_status();
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint dx, c.op1("Cast", {g}, {{"DstT", c.input_type(0)}}));
  c.set(0, dx);
  return ok_status();
}

Status select_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint cond, c.input(0));
  TRY(Endpoint zeros, c.op1("ZerosLike", {g}));
  const bool v2 = c.node().op == "SelectV2";
  TRY(Endpoint gt, c.op1(v2 ? "SelectV2" : "Select", {cond, g, zeros}));
  TRY(Endpoint ge, c.op1(v2 ? "SelectV2" : "Select", {cond, zeros, g}));
  if (!v2) {
    c.set(1, gt);
    c.set(2, ge);
    return ok_status();
  }
  TRY(Endpoint rt, unbroadcast(c, gt, 1, 2));
  TRY(Endpoint re, unbroadcast(c, ge, 2, 1));
  c.set(1, rt);
  c.set(2, re);
  return ok_status();
}

}  // namespace

void add_math_gradients(GradientRegistry& r) {
  // Binary elementwise math.
  for (const char* op : {"Add", "AddV2"})
    add(r, op, [](C& c) -> Status {
      TRY(Endpoint g, need_dy(c, 0));
      return set_binary(c, g, g);
    });
  add(r, "Sub", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint ng, c.op1("Neg", {g}));
    return set_binary(c, g, ng);
  });
  add(r, "Mul", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint y, c.input(1));
    TRY(Endpoint gx, c.op1("Mul", {g, y}));
    TRY(Endpoint gy, c.op1("Mul", {x, g}));
    return set_binary(c, gx, gy);
  });
  for (const char* op : {"RealDiv", "Div"})
    add(r, op, [](C& c) -> Status {
      TRY(Endpoint g, need_dy(c, 0));
      TRY(Endpoint x, c.input(0));
      TRY(Endpoint y, c.input(1));
      TRY(Endpoint gx, c.op1("RealDiv", {g, y}));
      TRY(Endpoint nx, c.op1("Neg", {x}));
      TRY(Endpoint q1, c.op1("RealDiv", {nx, y}));
      TRY(Endpoint q2, c.op1("RealDiv", {q1, y}));
      TRY(Endpoint gy, c.op1("Mul", {g, q2}));
      return set_binary(c, gx, gy);
    });
  for (const char* op : {"Maximum", "Minimum"})
    add(r, op, [op](C& c) -> Status {
      TRY(Endpoint g, need_dy(c, 0));
      TRY(Endpoint x, c.input(0));
      TRY(Endpoint y, c.input(1));
      TRY(Endpoint mask, c.op1(std::string(op) == "Maximum" ? "GreaterEqual" : "LessEqual", {x, y}));
      TRY(Endpoint sx, c.op1("Shape", {x}));
      TRY(Endpoint sy, c.op1("Shape", {y}));
      TRY(std::vector<Endpoint> bs, c.op("BroadcastGradientArgs", {sx, sy}));
      (void)bs;
      TRY(Endpoint zeros, c.op1("ZerosLike", {g}));
      TRY(Endpoint gx, c.op1("SelectV2", {mask, g, zeros}));
      TRY(Endpoint gy, c.op1("SelectV2", {mask, zeros, g}));
      return set_binary(c, gx, gy);
    });
  add(r, "SquaredDifference", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint y, c.input(1));
    TRY(Endpoint two, c.scalar(c.input_type(0), 2));
    TRY(Endpoint d, c.op1("Sub", {x, y}));
    TRY(Endpoint d2, c.op1("Mul", {two, d}));
    TRY(Endpoint gx, c.op1("Mul", {g, d2}));
    TRY(Endpoint gy, c.op1("Neg", {gx}));
    return set_binary(c, gx, gy);
  });
  add(r, "Pow", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint y, c.input(1));
    TRY(Endpoint z, c.output(0));
    TRY(Endpoint one, c.scalar(c.input_type(0), 1));
    TRY(Endpoint ym1, c.op1("Sub", {y, one}));
    TRY(Endpoint p, c.op1("Pow", {x, ym1}));
    TRY(Endpoint yp, c.op1("Mul", {y, p}));
    TRY(Endpoint gx, c.op1("Mul", {g, yp}));
    // d/dy = z * log(x) where x > 0, else 0.
    TRY(Endpoint zero, c.scalar(c.input_type(0), 0));
    TRY(Endpoint pos, c.op1("Greater", {x, zero}));
    TRY(Endpoint ones, c.op1("OnesLike", {x}));
    TRY(Endpoint safe, c.op1("SelectV2", {pos, x, ones}));
    TRY(Endpoint logx, c.op1("Log", {safe}));
    TRY(Endpoint zeros, c.op1("ZerosLike", {x}));
    TRY(Endpoint logm, c.op1("SelectV2", {pos, logx, zeros}));
    TRY(Endpoint zl, c.op1("Mul", {z, logm}));
    TRY(Endpoint gy, c.op1("Mul", {g, zl}));
    return set_binary(c, gx, gy);
  });
  add(r, "FloorMod", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint y, c.input(1));
    TRY(Endpoint q, c.op1("FloorDiv", {x, y}));
    TRY(Endpoint nq, c.op1("Neg", {q}));
    TRY(Endpoint gy, c.op1("Mul", {g, nq}));
    return set_binary(c, g, gy);
  });
  add(r, "AddN", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    for (int i = 0; i < c.num_inputs(); ++i) c.set(i, g);
    return ok_status();
  });
  // Unary.
  add(r, "Neg", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint dx, c.op1("Neg", {g}));
    c.set(0, dx);
    return ok_status();
  });
  add(r, "Abs", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint s, c.op1("Sign", {x}));
    TRY(Endpoint dx, c.op1("Mul", {g, s}));
    c.set(0, dx);
    return ok_status();
  });
  add(r, "Square", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint two, c.scalar(c.input_type(0), 2));
    TRY(Endpoint x2, c.op1("Mul", {two, x}));
    TRY(Endpoint dx, c.op1("Mul", {g, x2}));
    c.set(0, dx);
    return ok_status();
  });
  add(r, "Exp", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint y, c.output(0));
    TRY(Endpoint dx, c.op1("Mul", {g, y}));
    c.set(0, dx);
    return ok_status();
  });
  add(r, "Log", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint dx, c.op1("RealDiv", {g, x}));
    c.set(0, dx);
    return ok_status();
  });
  add(r, "Sin", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint cos, c.op1("Cos", {x}));
    TRY(Endpoint dx, c.op1("Mul", {g, cos}));
    c.set(0, dx);
    return ok_status();
  });
  add(r, "Cos", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint sin, c.op1("Sin", {x}));
    TRY(Endpoint gs, c.op1("Mul", {g, sin}));
    TRY(Endpoint dx, c.op1("Neg", {gs}));
    c.set(0, dx);
    return ok_status();
  });
  add(r, "Sqrt", by_output("SqrtGrad"));
  add(r, "Rsqrt", by_output("RsqrtGrad"));
  add(r, "Tanh", by_output("TanhGrad"));
  add(r, "Sigmoid", by_output("SigmoidGrad"));
  add(r, "Reciprocal", by_output("ReciprocalGrad"));
  // The gradients of those gradients (math_grad.py _TanhGradGrad,
  // _SigmoidGradGrad), for second derivatives: TanhGrad(y, g) = g (1 - y²),
  // SigmoidGrad(y, g) = g y (1 - y).
  add(r, "TanhGrad", [](C& c) -> Status {
    TRY(Endpoint a, need_dy(c, 0));
    TRY(Endpoint y, c.input(0));
    TRY(Endpoint g, c.input(1));
    TRY(Endpoint minus_two, c.scalar(c.input_type(0), -2.0));
    TRY(Endpoint ag, c.op1("Mul", {a, g}));
    TRY(Endpoint agy, c.op1("Mul", {ag, y}));
    TRY(Endpoint dy, c.op1("Mul", {agy, minus_two}));
    TRY(Endpoint dg, c.op1("TanhGrad", {y, a}));
    c.set(0, dy);
    c.set(1, dg);
    return ok_status();
  });
  add(r, "SigmoidGrad", [](C& c) -> Status {
    TRY(Endpoint a, need_dy(c, 0));
    TRY(Endpoint y, c.input(0));
    TRY(Endpoint g, c.input(1));
    TRY(Endpoint one, c.scalar(c.input_type(0), 1.0));
    TRY(Endpoint two, c.scalar(c.input_type(0), 2.0));
    TRY(Endpoint two_y, c.op1("Mul", {two, y}));
    TRY(Endpoint slope, c.op1("Sub", {one, two_y}));
    TRY(Endpoint ag, c.op1("Mul", {a, g}));
    TRY(Endpoint dy, c.op1("Mul", {ag, slope}));
    TRY(Endpoint dg, c.op1("SigmoidGrad", {y, a}));
    c.set(0, dy);
    c.set(1, dg);
    return ok_status();
  });
  add(r, "Cast", cast_grad);
  // Matrix products.
  add(r, "MatMul", [](C& c) { return matmul_grad(c, "MatMul", "transpose_a", "transpose_b"); });
  add(r, "BatchMatMul", [](C& c) { return matmul_grad(c, "BatchMatMul", "adj_x", "adj_y"); });
  add(r, "BatchMatMulV2", [](C& c) { return matmul_grad(c, "BatchMatMulV2", "adj_x", "adj_y"); });
  // Reductions.
  add(r, "Sum", sum_grad);
  add(r, "Mean", mean_grad);
  add(r, "Max", extremum_grad);
  add(r, "Min", extremum_grad);
  add(r, "Select", select_grad);
  add(r, "SelectV2", select_grad);
}

#undef TRY

}  // namespace autodiff
}  // namespace tagflow::graph
