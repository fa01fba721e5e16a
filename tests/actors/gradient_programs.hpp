// Random differentiable float64 programs for GraphBuilder, to check
// gradients() on graphs nobody tuned it to (gradient_programs_test.cpp,
// against finite differences) and to fuzz it (fuzz/gradients_fuzzer.cpp).
//
// A program takes 1-3 placeholders x0.. (scalars, vectors [N] or matrices
// [N, N], N = 2 or 3) and computes a float64 scalar y through smooth ops
// (AddV2, Sub, Mul, Tanh, Sigmoid, Square, MatMul, Sum, Mean, ConcatV2,
// Pack, Reshape, SelectV2 on a comparison of a float value), conds (on a
// float comparison or on a loop counter), case_, while loops (int32
// counters, 0-6 iterations, some with a trip count decided by a float
// comparison, parallel_iterations 1 or 10), scan and map_fn, nested up to
// kMaxDepth deep. Every op is scaled so that values stay within about
// [-2, 2] for xs in [-1, 1]. The choices come from a Chooser (a seeded PRNG
// or a fuzzer's bytes); the program's text, one line per statement, is kept
// so that a failure can be read and reproduced.
//
// Not thread-safe; one generator builds one program into one GraphBuilder.
// Header-only so that fuzz/ can use it without depending on the test suite.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "graph/builder/builder.hpp"

namespace tagflow::testing {

// Where a program's choices come from.
class Chooser {
 public:
  virtual ~Chooser() = default;
  virtual uint32_t below(uint32_t n) = 0;  // in [0, n), n >= 1
  // In [lo, hi], on a grid of 256 steps (a fuzzer's byte gives one).
  double uniform(double lo, double hi) { return lo + (hi - lo) * below(256) / 255.0; }
  bool chance(uint32_t in) { return below(in) == 0; }
};

class SeededChooser : public Chooser {
 public:
  explicit SeededChooser(uint64_t seed) : rng_(seed) {}
  uint32_t below(uint32_t n) override { return static_cast<uint32_t>(rng_() % n); }

 private:
  std::mt19937_64 rng_;
};

// A fuzzer's input, one byte per choice; 0 once the bytes are used up.
class ByteChooser : public Chooser {
 public:
  ByteChooser(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint32_t below(uint32_t n) override { return pos_ < size_ ? data_[pos_++] % n : 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

struct GradientProgram {
  std::vector<graph::Output> xs;
  std::vector<std::vector<int64_t>> shapes;  // one per x
  std::vector<std::vector<double>> values;   // where to evaluate, one per x
  graph::Output y;                           // float64 scalar
  std::string text;                          // the program, one statement a line
};

class GradientProgramGenerator {
 public:
  static constexpr int kMaxDepth = 3;
  static constexpr int kMaxStatements = 40;  // in all blocks together

  GradientProgramGenerator(graph::GraphBuilder& b, Chooser& r) : b_(b), r_(r) {}

  GradientProgram generate() {
    GradientProgram p;
    n_ = 2 + static_cast<int64_t>(r_.below(2));
    line("N = " + std::to_string(n_));
    const int num_xs = 1 + static_cast<int>(r_.below(3));
    for (int i = 0; i < num_xs; ++i) {
      const Shape s = static_cast<Shape>(r_.below(5) < 2 ? 0 : r_.below(3));
      const std::string name = "x" + std::to_string(i);
      graph::Output x = b_.placeholder(ops::DType::float64, ops::PartialShape{false, dims(s)}, name);
      p.xs.push_back(x);
      p.shapes.push_back(dims(s));
      std::vector<double> v(static_cast<size_t>(elements(s)));
      for (double& e : v) e = r_.uniform(-1, 1);
      p.values.push_back(v);
      env_.push_back({x, s, name});
      line(name + ": " + shape_name(s) + " placeholder");
    }
    block(0, 3 + static_cast<int>(r_.below(6)));
    // y: the last values and every x, each reduced to a scalar.
    graph::Output y = fit(env_.back(), Shape::scalar).out;
    std::string text = "y = mean(" + env_.back().name + ")";
    for (size_t i = 0; i + 1 < env_.size() && i < 3; ++i) {
      const Value& v = env_[env_.size() - 2 - i];
      const double c = r_.uniform(-1, 1);
      y = y + fit(v, Shape::scalar).out * c;
      text += " + " + num(c) + " * mean(" + v.name + ")";
    }
    line(text);
    p.y = y;
    p.text = text_;
    return p;
  }

 private:
  enum class Shape { scalar = 0, vector = 1, matrix = 2 };
  struct Value {
    graph::Output out;
    Shape shape;
    std::string name;
  };
  using Vars = std::vector<graph::Output>;

  std::vector<int64_t> dims(Shape s) const {
    if (s == Shape::scalar) return {};
    if (s == Shape::vector) return {n_};
    return {n_, n_};
  }
  int64_t elements(Shape s) const { return s == Shape::scalar ? 1 : s == Shape::vector ? n_ : n_ * n_; }
  static std::string shape_name(Shape s) {
    return s == Shape::scalar ? "scalar" : s == Shape::vector ? "[N]" : "[N,N]";
  }
  static std::string num(double c) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", c);
    return buf;
  }

  void line(const std::string& s) { text_ += std::string(2 * static_cast<size_t>(indent_), ' ') + s + "\n"; }
  std::string fresh() { return "v" + std::to_string(next_id_++); }
  Value pick() { return env_[r_.below(static_cast<uint32_t>(env_.size()))]; }
  Shape random_shape() { return static_cast<Shape>(r_.below(3)); }
  Value add(graph::Output out, Shape s, const std::string& what) {
    Value v{out, s, fresh()};
    line(v.name + " = " + what);
    env_.push_back(v);
    return v;
  }

  graph::Output ones(Shape s) {
    const std::vector<int64_t> d = dims(s);
    return b_.fill(b_.vector<int32_t>(std::vector<int32_t>(d.begin(), d.end())), b_.scalar(1.0));
  }

  // `v` as a value of shape `s` (broadcast, reduce or stack).
  Value fit(const Value& v, Shape s) {
    if (v.shape == s) return v;
    graph::Output o = v.out;
    std::string how;
    if (v.shape == Shape::scalar) {
      o = o * ones(s);
      how = "broadcast";
    } else if (s == Shape::scalar) {
      o = b_.reduce_mean(o, v.shape == Shape::vector ? b_.vector<int32_t>({0}) : b_.vector<int32_t>({0, 1}));
      how = "mean";
    } else if (v.shape == Shape::matrix) {
      const int32_t axis = static_cast<int32_t>(r_.below(2));
      o = b_.reduce_mean(o, b_.vector<int32_t>({axis}));
      how = "mean_axis" + std::to_string(axis);
    } else {  // vector -> matrix: rows (or columns) v * c_k
      Vars rows;
      for (int64_t k = 0; k < n_; ++k) rows.push_back(o * (1.0 - 0.3 * static_cast<double>(k)));
      const int64_t axis = r_.below(2);
      o = b_.stack(rows, axis);
      how = "stack_scaled_axis" + std::to_string(axis);
    }
    return {o, s, how + "(" + v.name + ")"};
  }

  // A bool scalar from comparing a float value with a threshold.
  graph::Output float_predicate(std::string* text) {
    const Value a = pick();
    const double t = r_.uniform(-0.6, 0.6);
    graph::Output m = fit(a, Shape::scalar).out;
    const bool less = r_.chance(2);
    *text = "mean(" + a.name + (less ? ") < " : ") > ") + num(t);
    return less ? m < t : m > t;
  }

  // A bool scalar on the innermost loop counter, else on a float value.
  graph::Output predicate(std::string* text) {
    if (!counters_.empty() && r_.chance(2)) {
      const int k = static_cast<int>(r_.below(5));
      graph::Output i = counters_.back();
      if (r_.chance(2)) {
        *text = "i < " + std::to_string(k);
        return i < static_cast<double>(k);
      }
      *text = "i % 2 == 0";
      return b_.equal(b_.floor_mod(i, b_.scalar<int32_t>(2)), b_.scalar<int32_t>(0));
    }
    return float_predicate(text);
  }

  // `count` statements at nesting depth `depth`.
  void block(int depth, int count) {
    for (int k = 0; k < count && statements_ < kMaxStatements && b_.ok(); ++k) {
      ++statements_;
      const uint32_t kinds = depth < kMaxDepth ? 17 : 12;
      const uint32_t kind = r_.below(kinds);
      if (kind < 12) simple(kind);
      else if (kind < 14) cond(depth);
      else if (kind == 14) while_loop(depth);
      else if (kind == 15) (r_.chance(2) ? scan(depth) : case_(depth));
      else map_fn(depth);
    }
  }

  void simple(uint32_t kind) {
    const Value a = pick();
    switch (kind) {
      case 0: {
        const double c = r_.uniform(0.5, 1.5);
        add(b_.op1("Tanh", {a.out * c}), a.shape, "tanh(" + a.name + " * " + num(c) + ")");
        return;
      }
      case 1: {
        const double c = r_.uniform(-2, 2);
        add(b_.op1("Sigmoid", {a.out * c}), a.shape, "sigmoid(" + a.name + " * " + num(c) + ")");
        return;
      }
      case 2:
        add(b_.square(a.out) * 0.25, a.shape, "square(" + a.name + ") * 0.25");
        return;
      case 3: case 4: case 5: {
        const Value c = pick();
        const Shape s = std::max(a.shape, c.shape);
        graph::Output l = fit(a, s).out, rr = fit(c, s).out;
        if (kind == 3) add((l + rr) * 0.5, s, "(" + a.name + " + " + c.name + ") * 0.5");
        else if (kind == 4) add((l - rr) * 0.5, s, "(" + a.name + " - " + c.name + ") * 0.5");
        else add(l * rr * 0.5, s, a.name + " * " + c.name + " * 0.5");
        return;
      }
      case 6: {  // matmul: [N,N] x [N,N], or a vector as a [1,N] row
        const Value c = pick();
        const double scale = 1.0 / static_cast<double>(2 * n_);
        if (a.shape == Shape::vector) {
          graph::Output row = b_.reshape(a.out, b_.vector<int32_t>({1, static_cast<int32_t>(n_)}));
          graph::Output m = b_.matmul(row, fit(c, Shape::matrix).out, false, r_.chance(2));
          add(b_.reshape(m, b_.vector<int32_t>({static_cast<int32_t>(n_)})) * scale, Shape::vector,
              "matmul(row(" + a.name + "), matrix(" + c.name + ")) / 2N");
        } else {
          const bool ta = r_.chance(2);
          graph::Output m = b_.matmul(fit(a, Shape::matrix).out, fit(c, Shape::matrix).out, ta, false);
          add(m * scale, Shape::matrix, std::string("matmul(") + (ta ? "T " : "") + "matrix(" + a.name +
                                            "), matrix(" + c.name + ")) / 2N");
        }
        return;
      }
      case 7: {  // reduce_sum / reduce_mean
        if (a.shape == Shape::scalar) {
          add(b_.reduce_sum(a.out * 0.9, b_.vector<int32_t>({})), Shape::scalar, "sum(" + a.name + " * 0.9, axes {})");
          return;
        }
        const bool sum = r_.chance(2);
        const double scale = sum ? 1.0 / static_cast<double>(n_) : 1.0;
        const int32_t axis = static_cast<int32_t>(r_.below(2));
        graph::Output axes = a.shape == Shape::vector ? b_.vector<int32_t>({0}) : b_.vector<int32_t>({axis});
        graph::Output o = sum ? b_.reduce_sum(a.out, axes) : b_.reduce_mean(a.out, axes);
        const Shape s = a.shape == Shape::vector ? Shape::scalar : Shape::vector;
        add(o * scale, s, std::string(sum ? "sum" : "mean") + "(" + a.name + ", axis " +
                              (a.shape == Shape::vector ? "0" : std::to_string(axis)) + ")" + (sum ? " / N" : ""));
        return;
      }
      case 8: {  // concat two vectors, reshape to [2,N], mean of the rows
        const Value c = pick();
        graph::Output cat = b_.concat({fit(a, Shape::vector).out, fit(c, Shape::vector).out}, b_.scalar<int32_t>(0));
        graph::Output m = b_.reshape(cat, b_.vector<int32_t>({2, static_cast<int32_t>(n_)}));
        add(b_.reduce_mean(m, b_.vector<int32_t>({0})), Shape::vector,
            "mean_rows(reshape(concat(" + a.name + ", " + c.name + "), [2,N]))");
        return;
      }
      case 9: {  // stack N scalars
        Vars parts;
        std::string names;
        for (int64_t k = 0; k < n_; ++k) {
          const Value e = pick();
          parts.push_back(fit(e, Shape::scalar).out);
          names += (k ? ", " : "") + e.name;
        }
        add(b_.stack(parts, 0), Shape::vector, "stack(" + names + ")");
        return;
      }
      case 10: {  // a matrix flattened and summed
        graph::Output flat = b_.reshape(fit(a, Shape::matrix).out, b_.vector<int32_t>({-1}));
        add(b_.reduce_sum(flat, b_.vector<int32_t>({0})) / static_cast<double>(n_ * n_), Shape::scalar,
            "sum(reshape(matrix(" + a.name + "), [-1])) / N^2");
        return;
      }
      default: {  // select on a comparison of a float value, elementwise
        const Value c = pick(), d = pick();
        const Shape s = std::max({a.shape, c.shape, d.shape});
        const double t = r_.uniform(-0.6, 0.6);
        graph::Output pred = fit(a, s).out > t;
        add(b_.select(pred, fit(c, s).out, fit(d, s).out), s,
            "select(" + a.name + " > " + num(t) + ", " + c.name + ", " + d.name + ")");
        return;
      }
    }
  }

  // A sub-block whose last value, fit to `s`, is its result; nothing it
  // makes stays visible after it.
  graph::Output sub_block(int depth, Shape s, const std::string& header) {
    const size_t mark = env_.size();
    line(header);
    ++indent_;
    graph::Output out;
    if (r_.chance(6)) {
      const double c = r_.uniform(-1, 1);
      out = fit(Value{b_.scalar(c), Shape::scalar, num(c)}, s).out;
      line("-> constant " + num(c));
    } else {
      block(depth, 1 + static_cast<int>(r_.below(3)));
      const Value last = fit(env_.back(), s);
      out = last.out;
      line("-> " + last.name);
    }
    --indent_;
    env_.resize(mark);
    return out;
  }

  void cond(int depth) {
    std::string p;
    graph::Output pred = predicate(&p);
    const Shape s = random_shape();
    const std::string name = fresh();
    const auto r = b_.cond(pred, [&] { return Vars{sub_block(depth + 1, s, "if " + p + ":")}; },
                           [&] { return Vars{sub_block(depth + 1, s, "else:")}; });
    if (!b_.ok()) return;
    env_.push_back({r[0], s, name});
    line(name + " = " + shape_name(s) + " result of the cond");
  }

  void case_(int depth) {
    // index = [a > t1] + [c > t2] in {0, 1, 2}, or the counter's
    std::string p1, p2;
    graph::Output index;
    if (!counters_.empty() && r_.chance(2)) {
      index = b_.floor_mod(counters_.back(), b_.scalar<int32_t>(3));
      p1 = "i % 3";
    } else {
      graph::Output a = b_.cast(float_predicate(&p1), ops::DType::int32);
      graph::Output c = b_.cast(float_predicate(&p2), ops::DType::int32);
      index = a + c;
      p1 = "[" + p1 + "] + [" + p2 + "]";
    }
    const Shape s = random_shape();
    const std::string name = fresh();
    std::vector<graph::BranchFn> branches;
    for (int k = 0; k < 3; ++k)
      branches.push_back([&, k] {
        return Vars{sub_block(depth + 1, s, "case " + std::to_string(k) + (k == 0 ? " of " + p1 : "") + ":")};
      });
    const auto r = b_.case_(index, branches);
    if (!b_.ok()) return;
    env_.push_back({r[0], s, name});
    line(name + " = " + shape_name(s) + " result of the case");
  }

  void while_loop(int depth) {
    const int n = static_cast<int>(r_.below(7));
    graph::WhileOptions o;
    o.parallel_iterations = r_.chance(2) ? 1 : 10;
    const int num_vars = 1 + static_cast<int>(r_.below(2));
    Vars init{b_.scalar<int32_t>(0)};
    std::vector<Shape> shapes;
    std::string header = "while i < " + std::to_string(n);
    // 0: count only; 1: count or a float comparison of the outer values;
    // 2: and a float comparison of the first loop variable.
    const uint32_t trip = r_.below(3);
    graph::Output limit = b_.scalar<int32_t>(n);
    double t = 0;
    if (trip == 1) {
      std::string p;
      graph::Output pred = float_predicate(&p);
      const int m = static_cast<int>(r_.below(7));
      limit = b_.select(pred, b_.scalar<int32_t>(n), b_.scalar<int32_t>(m));
      header = "while i < (" + p + " ? " + std::to_string(n) + " : " + std::to_string(m) + ")";
    } else if (trip == 2) {
      t = r_.uniform(-0.6, 0.6);
      header += " and mean(u0) < " + num(t);
    }
    std::string inits;
    for (int k = 0; k < num_vars; ++k) {
      const Value a = pick();
      shapes.push_back(a.shape);
      init.push_back(a.out);
      inits += " u" + std::to_string(k) + "=" + a.name;
    }
    line(header + " (parallel_iterations " + std::to_string(o.parallel_iterations) + "," + inits + "):");
    ++indent_;
    const auto r = b_.while_loop(
        [&](const Vars& v) {
          graph::Output c = v[0] < limit;
          if (trip == 2) c = b_.logical_and(c, fit({v[1], shapes[0], "u0"}, Shape::scalar).out < t);
          return c;
        },
        [&](const Vars& v) {
          const size_t mark = env_.size();
          counters_.push_back(v[0]);
          env_.push_back({b_.cast(v[0], ops::DType::float64) * 0.1, Shape::scalar, "i * 0.1"});
          for (int k = 0; k < num_vars; ++k) env_.push_back({v[static_cast<size_t>(k) + 1], shapes[static_cast<size_t>(k)], "u" + std::to_string(k)});
          block(depth + 1, 1 + static_cast<int>(r_.below(3)));
          Vars next{v[0] + 1.0};
          for (int k = 0; k < num_vars; ++k) {
            const Value e = pick();
            const double mix = r_.uniform(0.2, 0.8);
            next.push_back(v[static_cast<size_t>(k) + 1] * (1 - mix) + fit(e, shapes[static_cast<size_t>(k)]).out * mix);
            line("u" + std::to_string(k) + " = u" + std::to_string(k) + " * " + num(1 - mix) + " + " + e.name + " * " + num(mix));
          }
          counters_.pop_back();
          env_.resize(mark);
          return next;
        },
        init, o);
    --indent_;
    if (!b_.ok()) return;
    for (int k = 0; k < num_vars; ++k) {
      const std::string name = fresh();
      env_.push_back({r[static_cast<size_t>(k) + 1], shapes[static_cast<size_t>(k)], name});
      line(name + " = u" + std::to_string(k) + " after the loop");
    }
  }

  void scan(int depth) {
    const Value elems = pick();
    graph::Output e = fit(elems, Shape::vector).out;
    const Value a0 = pick();
    const double mix = r_.uniform(0.2, 0.8);
    line("scan over " + elems.name + " from acc=mean(" + a0.name + "):");
    ++indent_;
    const auto r = b_.scan(
        [&](const Vars& acc, const Vars& slice) {
          const size_t mark = env_.size();
          env_.push_back({acc[0], Shape::scalar, "acc"});
          env_.push_back({slice[0], Shape::scalar, "e"});
          block(depth + 1, 1 + static_cast<int>(r_.below(2)));
          const Value last = fit(env_.back(), Shape::scalar);
          line("acc = acc * " + num(1 - mix) + " + " + last.name + " * " + num(mix));
          graph::Output next = acc[0] * (1 - mix) + last.out * mix;
          env_.resize(mark);
          return Vars{next};
        },
        {e}, {fit(a0, Shape::scalar).out}, "", r_.chance(2) ? 1 : 10);
    --indent_;
    if (!b_.ok()) return;
    const std::string name = fresh();
    env_.push_back({r[0], Shape::vector, name});
    line(name + " = [N] accumulators of the scan");
  }

  void map_fn(int depth) {
    const Value elems = pick();
    line("map_fn over " + elems.name + ":");
    ++indent_;
    const auto r = b_.map_fn(
        [&](const Vars& slice) {
          const size_t mark = env_.size();
          env_.push_back({slice[0], Shape::scalar, "e"});
          block(depth + 1, 1 + static_cast<int>(r_.below(2)));
          const Value last = fit(env_.back(), Shape::scalar);
          line("-> " + last.name);
          env_.resize(mark);
          return Vars{last.out};
        },
        {fit(elems, Shape::vector).out}, {}, "", r_.chance(2) ? 1 : 10);
    --indent_;
    if (!b_.ok()) return;
    const std::string name = fresh();
    env_.push_back({r[0], Shape::vector, name});
    line(name + " = [N] results of the map_fn");
  }

  graph::GraphBuilder& b_;
  Chooser& r_;
  int64_t n_ = 2;
  std::vector<Value> env_;                // the values in scope
  std::vector<graph::Output> counters_;  // the enclosing loops' int32 counters
  std::string text_;
  int indent_ = 0;
  int next_id_ = 0;
  int statements_ = 0;
};

}  // namespace tagflow::testing
