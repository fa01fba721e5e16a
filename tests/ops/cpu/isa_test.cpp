// The instruction-set levels (ops/cpu/isa.hpp): names, the machine's
// level, and the kernels run at every level this machine has. oneDNN fixes
// its level once per process, so each level runs in a child process of
// this test binary (TAGFLOW_ISA set), which writes what it computed; the
// parent compares the levels. Products are compared to a tolerance (FMA
// rounds a*b+c once where SSE rounds twice, and the levels block the sums
// differently: 1e-5 x k x (1 + |value|) for k-term sums, and the same
// bound for Exp, Log, Tanh and Sigmoid, whose polynomials FMA rounds
// differently); elementwise kernels that round the same at every level
// (Add, Relu, Maximum) must be bitwise equal.
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../op_test_util.hpp"
#include "ops/cpu/dnnl.hpp"
#include "ops/cpu/isa.hpp"
#include "ops/cpu/kernel_info.hpp"

using namespace tagflow::ops;
using cpu::Isa;

namespace {

Tensor random_floats(const Shape& shape, uint32_t seed) {
  Tensor t(DType::float32, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<float>()[i] = dist(gen);
  return t;
}

// The kernels every level runs, by name, with whether they must agree bitwise.
struct Computed {
  std::string name;
  bool bitwise;
  std::vector<float> values;
};

std::vector<Computed> compute_kernels() {
  std::vector<Computed> out;
  const auto keep = [&](const std::string& name, bool bitwise, Expected<Tensor> t) {
    BOOST_REQUIRE_MESSAGE(t.ok(), name << ": " << t.status().message());
    out.push_back({name, bitwise, std::vector<float>(t->data<float>(), t->data<float>() + t->num_elements())});
  };
  const Tensor a = random_floats({96, 80}, 1), b = random_floats({80, 72}, 2);
  keep("MatMul", false, testing::run_op1("MatMul", {a, b}));
  keep("MatMul_tt", false,
       testing::run_op1("MatMul", {random_floats({80, 96}, 3), random_floats({72, 80}, 4)},
                        {{"transpose_a", true}, {"transpose_b", true}}));
  keep("BatchMatMulV2", false,
       testing::run_op1("BatchMatMulV2", {random_floats({5, 17, 40}, 5), random_floats({5, 40, 23}, 6)}));
  const Tensor x = random_floats({96, 80}, 7);
  keep("Add", true, testing::run_op1("Add", {a, x}));
  keep("Maximum", true, testing::run_op1("Maximum", {a, x}));
  keep("Relu", true, testing::run_op1("Relu", {a}));
  // On the instruction-set table (ops/cpu/isa_kernels.hpp): products too
  // small for oneDNN, and the transcendental functions, whose polynomials
  // round differently with FMA.
  keep("MatMul_1x64", false, testing::run_op1("MatMul", {random_floats({1, 64}, 8), random_floats({64, 64}, 9)}));
  keep("MatMul_8x8", false,
       testing::run_op1("MatMul", {random_floats({8, 8}, 10), random_floats({8, 8}, 11)},
                        {{"transpose_a", true}}));
  keep("BatchMatMulV2_small", false,
       testing::run_op1("BatchMatMulV2", {random_floats({3, 4, 5}, 12), random_floats({3, 5, 6}, 13)}));
  for (const char* f : {"Exp", "Tanh", "Sigmoid"}) keep(f, false, testing::run_op1(f, {a}));
  keep("Log", false, testing::run_op1("Log", {testing::run_op1("Exp", {a}).value()}));
  return out;
}

std::string self_path() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  BOOST_REQUIRE(n > 0);
  return std::string(buf, static_cast<size_t>(n));
}

// Runs this binary's write_kernel_outputs case at `isa`; the file it wrote.
std::string run_child(Isa isa) {
  const std::string out = "/tmp/tagflow_isa_test_" + std::to_string(::getpid()) + "_" + cpu::to_string(isa);
  const std::string cmd = "TAGFLOW_ISA=" + std::string(cpu::to_string(isa)) + " TAGFLOW_ISA_TEST_OUT=" + out +
                          " '" + self_path() + "' --run_test=cpu_isa/write_kernel_outputs > " + out + ".log 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream log(out + ".log");
  std::stringstream text;
  text << log.rdbuf();
  std::remove((out + ".log").c_str());
  BOOST_REQUIRE_MESSAGE(rc == 0, "the child at " << cpu::to_string(isa) << " failed: " << text.str());
  return out;
}

struct ChildResult {
  std::string isa, onednn_isa;
  std::vector<Computed> kernels;
};

ChildResult read_child(const std::string& path) {
  ChildResult r;
  std::ifstream in(path);
  BOOST_REQUIRE(in);
  size_t count = 0;
  in >> r.isa >> r.onednn_isa >> count;
  for (size_t i = 0; i < count; ++i) {
    Computed c;
    size_t n = 0;
    in >> c.name >> c.bitwise >> n;
    c.values.resize(n);
    for (float& v : c.values) {
      uint32_t bits = 0;
      in >> bits;
      std::memcpy(&v, &bits, sizeof v);
    }
    r.kernels.push_back(std::move(c));
  }
  BOOST_REQUIRE(in);
  std::remove(path.c_str());
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cpu_isa)

BOOST_AUTO_TEST_CASE(levels_are_named_and_ordered) {
  for (Isa isa : cpu::kAllIsas) BOOST_TEST((*cpu::parse_isa(cpu::to_string(isa)) == isa));
  BOOST_TEST((*cpu::parse_isa("sse2") == Isa::baseline));
  Expected<Isa> bad = cpu::parse_isa("avx9");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.status().message().find("baseline, avx2, avx512") != std::string::npos);
  BOOST_TEST((cpu::active_isa() <= cpu::machine_isa()));
  const auto info = cpu::kernel_info();
  BOOST_TEST(info.at("isa") == cpu::to_string(cpu::active_isa()));
  BOOST_TEST(info.at("machine_isa") == cpu::to_string(cpu::machine_isa()));
  BOOST_TEST(!info.at("onednn").empty());
}

BOOST_AUTO_TEST_CASE(the_level_is_chosen_once) {
  const Isa now = cpu::active_isa();
  BOOST_TEST(cpu::request_isa(now, "the test").ok());
  if (now != Isa::baseline) {
    Status s = cpu::request_isa(Isa::baseline, "[tagflow] isa");
    BOOST_TEST(s.code() == Error::failed_precondition);
    BOOST_TEST(s.message().find("chosen once") != std::string::npos, s.message());
  }
  if (cpu::machine_isa() != Isa::avx512) {
    Status s = cpu::request_isa(Isa::avx512, "[tagflow] isa");
    BOOST_TEST(s.code() == Error::invalid_argument);
    BOOST_TEST(s.message().find("this machine supports up to") != std::string::npos, s.message());
  }
}

// Not a check by itself: the child half of the next case.
BOOST_AUTO_TEST_CASE(write_kernel_outputs) {
  const char* path = std::getenv("TAGFLOW_ISA_TEST_OUT");
  if (path == nullptr) return;
  BOOST_REQUIRE(cpu::isa_status().ok());
  std::ofstream out(path);
  const std::vector<Computed> kernels = compute_kernels();
  out << cpu::to_string(cpu::active_isa()) << " " << cpu::dnnl_isa_name() << " " << kernels.size() << "\n";
  for (const Computed& c : kernels) {
    out << c.name << " " << c.bitwise << " " << c.values.size();
    for (float v : c.values) {  // the bits: the comparison may be bitwise
      uint32_t bits = 0;
      std::memcpy(&bits, &v, sizeof v);
      out << " " << bits;
    }
    out << "\n";
  }
}

BOOST_AUTO_TEST_CASE(kernels_agree_at_every_level_this_machine_has) {
  std::vector<ChildResult> levels;
  for (Isa isa : cpu::kAllIsas) {
    if (isa > cpu::machine_isa()) continue;
    levels.push_back(read_child(run_child(isa)));
    // the child ran at the level asked for, and oneDNN no wider
    BOOST_TEST(levels.back().isa == cpu::to_string(isa));
    if (isa == Isa::baseline) BOOST_TEST(levels.back().onednn_isa == "sse41");
    if (isa == Isa::avx2) BOOST_TEST(levels.back().onednn_isa == "avx2");
  }
  BOOST_TEST_MESSAGE("levels compared: " << levels.size());
  const std::vector<Computed> here = compute_kernels();
  for (const ChildResult& level : levels) {
    BOOST_REQUIRE(level.kernels.size() == here.size());
    for (size_t i = 0; i < here.size(); ++i) {
      const Computed& want = here[i];
      const Computed& got = level.kernels[i];
      BOOST_TEST_CONTEXT(level.isa << " " << got.name) {
        BOOST_REQUIRE(got.values.size() == want.values.size());
        int bad = 0;
        for (size_t j = 0; j < got.values.size(); ++j) {
          const float g = got.values[j], w = want.values[j];
          const bool same = want.bitwise ? (g == w || (std::isnan(g) && std::isnan(w)))
                                         : std::abs(g - w) <= 1e-5f * (1.f + std::abs(w)) * 80.f;
          if (!same && ++bad < 5) BOOST_ERROR("element " << j << ": " << g << " vs " << w);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
