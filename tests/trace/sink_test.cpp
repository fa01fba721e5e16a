// The file forms of a trace: a real step recorded into a JSONL file, a
// binary file and memory at once reads back as the same events and names
// (tags and node names come back too); malformed files are errors naming
// the line or the byte.
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "trace/sink.hpp"
#include "traced_steps.hpp"

using namespace tagflow;
using namespace tagflow::testing;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tagflow_" + std::to_string(::getpid()) + "_" + name)).string();
}

bool same(const Event& a, const Event& b) {
  return a.kind == b.kind && a.message == b.message && a.dead == b.dead && a.partition == b.partition &&
         a.node == b.node && a.port == b.port && a.src_node == b.src_node && a.src_port == b.src_port &&
         a.thread == b.thread && a.step == b.step && a.instance == b.instance && a.iteration == b.iteration &&
         a.key == b.key && a.parent_instance == b.parent_instance && a.parent_iteration == b.parent_iteration &&
         a.bytes == b.bytes && a.time_ns == b.time_ns && a.duration_ns == b.duration_ns && a.from == b.from &&
         a.to == b.to && a.seq == b.seq && a.text == b.text;
}

Trace read(const std::string& path) {
  Trace t;
  std::string error;
  BOOST_REQUIRE_MESSAGE(trace::read_trace(path, &t, &error), error);
  return t;
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(trace_sinks)

BOOST_AUTO_TEST_CASE(a_step_reads_back_the_same_from_jsonl_binary_and_memory) {
  const std::string jsonl = temp_path("step.jsonl"), binary = temp_path("step.tft");
  trace::MemorySink memory;
  {
    std::string error;
    auto j = trace::open_sink(jsonl, &error);
    auto b = trace::open_sink(binary, &error);
    BOOST_REQUIRE(j != nullptr);
    BOOST_REQUIRE(b != nullptr);
    BOOST_TEST(dynamic_cast<trace::JsonlSink*>(j.get()) != nullptr);
    BOOST_TEST(dynamic_cast<trace::BinarySink*>(b.get()) != nullptr);
    trace::TeeSink tee({&memory, j.get(), b.get()});
    actors::SessionOptions o = on_devices(2);
    o.events = &tee;
    auto s = make_session(split_cond_in_loop(), modes()[2], o);
    must_run(*s, {}, {"w/acc_exit", "w/Exit"});
    must_run(*s, {}, {"w/acc_exit"});  // a second step: the same name table, written once
  }
  const Trace want = memory.trace();
  BOOST_REQUIRE(want.size() > 100u);
  for (const std::string& path : {jsonl, binary}) {
    BOOST_TEST_CONTEXT(path) {
      const Trace got = read(path);
      // the header says what the kernels ran with (actors set it)
      BOOST_TEST((got.header() == trace::process_header()));
      BOOST_TEST(got.header().count("isa") == 1u);
      BOOST_REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i) BOOST_TEST(same(got[i], want[i]), "event " << i);
      BOOST_TEST(got.steps() == want.steps(), boost::test_tools::per_element());
      // names and tags come back
      bool saw_tag = false;
      for (const Event& e : got.events()) {
        if (e.kind != Kind::node_ran || got.node_name(e) != "w/c/plus") continue;
        BOOST_TEST(got.partition_name(e.step, e.partition) == "CPU:1");
        BOOST_TEST(got.op(e.step, e.partition, e.node) == "Add");
        saw_tag = saw_tag || got.tag_of(e) == "w/2";
      }
      BOOST_TEST(saw_tag);
    }
  }
  // the binary form is the smaller
  BOOST_TEST(std::filesystem::file_size(binary) * 2 < std::filesystem::file_size(jsonl));
  std::remove(jsonl.c_str());
  std::remove(binary.c_str());
}

BOOST_AUTO_TEST_CASE(malformed_files_are_errors_naming_the_line_or_byte) {
  const std::string path = temp_path("bad");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not a tagflow trace"},
      {"{\"hello\": 1}\n", "line 1: not a tagflow trace"},
      {"{\"tagflow_trace\": 99}\n", "line 1: schema version 99, this tagflow reads version 2"},
      {"{\"tagflow_trace\": 1}\n", "line 1: schema version 1, this tagflow reads version 2"},
      {"{\"tagflow_trace\": 2}\n{\"event\":\"node_ran\",\"t\":1,\"step\":1,\"partition\":0}\nnot json\n", "line 3:"},
      {"{\"tagflow_trace\": 2}\n{\"event\":\"teleported\",\"t\":1,\"step\":1,\"partition\":0}\n",
       "line 2: unknown event \"teleported\""},
      {std::string("TFTRACE\0", 8) + std::string("\x02\0\0\0", 4) + std::string("\0", 1) + "\x02\x06",
       "byte 13: malformed record"},
      {std::string("TFTRACE\0", 8) + std::string("\x02\0\0\0", 4) + "\x05\x01", "a malformed header"},
      {std::string("TFTRACE\0", 8) + std::string("\x01\0\0\0", 4), "byte 8: schema version 1"},
      {std::string("TFTRACE\0", 8), "a binary trace's header is 12 bytes"},
  };
  for (const auto& [bytes, says] : cases) {
    write(path, bytes);
    Trace t;
    std::string error;
    BOOST_TEST(!trace::read_trace(path, &t, &error));
    BOOST_TEST(error.find(says) != std::string::npos, error);
    BOOST_TEST(error.find(path) != std::string::npos, error);
  }
  std::string error;
  Trace t;
  BOOST_TEST(!trace::read_trace(path + ".missing", &t, &error));
  BOOST_TEST(error.find("cannot read the trace file") != std::string::npos, error);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_SUITE_END()
