// What the gradient functions of every family share (math, array, nn,
// TensorArray, TensorList: graph/autodiff/*_gradient_functions.cpp):
// registering one, reading an output's gradient, reducing a broadcast
// one, the common shapes of unary gradients, and TRY (a gradient function
// is a sequence of node additions, each of which may fail). Internal to
// those files; a family file says `using namespace gradient_util;`.
#pragma once

#include <optional>

#include "graph/autodiff/gradients.hpp"

namespace tagflow::graph {
inline namespace autodiff {
namespace gradient_util {

using C = GradContext;
using ops::AttrMap;

#define TRY(lhs, expr) TF_ASSIGN_OR_RETURN(lhs, expr)

// Adds `fn` as `op`'s gradient to `r`. A clash is a bug in tagflow's own
// tables, so it is printed and the process aborts (as ops/'
// register_builtin; every test run would catch it).
void add(GradientRegistry& r, const char* op, GradientFunction fn);


inline Expected<Endpoint> need_dy(C& c, int i) {
  std::optional<Endpoint> d = c.dy(i);
  if (d) return *d;
  return c.dy_or_zeros(i);
}


// grad (shaped like the broadcast result) summed down to input i's shape.
inline Expected<Endpoint> unbroadcast(C& c, Endpoint grad, int i, int other) {
  TF_ASSIGN_OR_RETURN(Endpoint x, c.input(i));
  TF_ASSIGN_OR_RETURN(Endpoint y, c.input(other));
  TF_ASSIGN_OR_RETURN(Endpoint sx, c.op1("Shape", {x}));
  TF_ASSIGN_OR_RETURN(Endpoint sy, c.op1("Shape", {y}));
  TF_ASSIGN_OR_RETURN(std::vector<Endpoint> r, c.op("BroadcastGradientArgs", {sx, sy}));
  TF_ASSIGN_OR_RETURN(Endpoint summed, c.op1("Sum", {grad, r[0]}, {{"keep_dims", false}}));
  return c.op1("Reshape", {summed, sx});
}


// Sets both inputs' gradients of a binary op from the unreduced gx, gy.
inline Status set_binary(C& c, std::optional<Endpoint> gx, std::optional<Endpoint> gy) {
  if (gx) {
    TF_ASSIGN_OR_RETURN(Endpoint r, unbroadcast(c, *gx, 0, 1));
    c.set(0, r);
  }
  if (gy) {
    TF_ASSIGN_OR_RETURN(Endpoint r, unbroadcast(c, *gy, 1, 0));
    c.set(1, r);
  }
  return ok_status();
}


inline Status identity_grad(C& c) {
  TF_ASSIGN_OR_RETURN(Endpoint g, need_dy(c, 0));
  c.set(0, g);
  return ok_status();
}


// y = f(x) with dy/dx = gradient_op(y, g) (SigmoidGrad, TanhGrad, ...).
inline GradientFunction by_output(const char* op) {
  return [op](C& c) -> Status {
    TF_ASSIGN_OR_RETURN(Endpoint g, need_dy(c, 0));
    TF_ASSIGN_OR_RETURN(Endpoint y, c.output(0));
    TF_ASSIGN_OR_RETURN(Endpoint dx, c.op1(op, {y, g}));
    c.set(0, dx);
    return ok_status();
  };
}


// The shape `x` keeps after reducing along `axes` with keep_dims.
inline Expected<Endpoint> kept_shape(C& c, Endpoint x, Endpoint axes) {
  TF_ASSIGN_OR_RETURN(Endpoint kept, c.op1("Sum", {x, axes}, {{"keep_dims", true}}, "kept"));
  return c.op1("Shape", {kept});
}


// y = f(x) with dx = gradient_op(dy, input or output).
inline GradientFunction grad_op_of(const char* op, bool of_output) {
  return [op, of_output](C& c) -> Status {
    TF_ASSIGN_OR_RETURN(Endpoint g, need_dy(c, 0));
    TF_ASSIGN_OR_RETURN(Endpoint v, of_output ? c.output(0) : c.input(0));
    TF_ASSIGN_OR_RETURN(Endpoint dx, c.op1(op, {g, v}));
    c.set(0, dx);
    return ok_status();
  };
}

}  // namespace gradient_util
}  // namespace autodiff
}  // namespace tagflow::graph
