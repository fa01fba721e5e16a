// The session's configuration at the boundary: files that are no files,
// scheduler numbers that would crash or hang CAF, values of tagflow's keys
// out of range, and messages that name the file and stay short.
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "actors/session.hpp"

using namespace tagflow;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string write_ini(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/tagflow_session_config_test_" + name + ".ini";
  std::ofstream(path) << text;
  return path;
}

// The error of resolving the options with `ini` as configuration file.
std::string config_error(const std::string& name, const std::string& ini, bool deterministic = false) {
  actors::SessionOptions o;
  o.deterministic = deterministic;
  o.config_file = write_ini(name, ini);
  auto r = actors::Session::resolve_options(o);
  std::remove(o.config_file.c_str());
  return r.ok() ? std::string("<ok>") : r.status().to_string();
}

// The resolved options of a configuration text (SessionOptions::config_text).
ops::Expected<actors::SessionOptions> resolve_text(const std::string& text) {
  actors::SessionOptions o;
  o.config_text = text;
  return actors::Session::resolve_options(o);
}

std::string text_error(const std::string& text) {
  auto r = resolve_text(text);
  return r.ok() ? std::string("<ok>") : r.status().to_string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(session_config)

BOOST_AUTO_TEST_CASE(a_directory_is_not_a_configuration_file) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  actors::SessionOptions o;
  o.config_file = dir;
  auto r = actors::Session::resolve_options(o);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message() == "cannot read the configuration file '" + dir + "': it is a directory",
             r.status().message());
  auto s = actors::Session::create(graph::Graph(), o);
  BOOST_TEST(!s.ok());
}

BOOST_AUTO_TEST_CASE(scheduler_numbers_that_would_crash_or_hang_caf_are_errors_naming_file_and_range) {
  std::string e = config_error("threads0", "[scheduler]\nmax-threads=0\n");
  BOOST_TEST(e == "invalid_argument: configuration file '/tmp/tagflow_session_config_test_threads0.ini': "
                  "[scheduler] max-threads = 0 is outside the allowed range (1 to 256)", e);
  e = config_error("threads_many", "[scheduler]\nmax-threads=100000\n");
  BOOST_TEST(contains(e, "[scheduler] max-threads = 100000 is outside the allowed range (1 to 256)"), e);
  e = config_error("throughput0", "[scheduler]\nmax-throughput=0\n");
  BOOST_TEST(contains(e, "[scheduler] max-throughput = 0 is outside the allowed range (at least 1)"), e);
  for (const char* key : {"aggressive-steal-interval", "moderate-steal-interval", "relaxed-steal-interval"}) {
    e = config_error("steal0", std::string("[work-stealing]\n") + key + "=0\n");
    BOOST_TEST(contains(e, std::string("[work-stealing] ") + key + " = 0 is outside the allowed range (at least 1)"), e);
  }
  // Checked whatever the scheduler: the file is wrong either way.
  e = config_error("threads0_det", "[scheduler]\nmax-threads=0\n", true);
  BOOST_TEST(contains(e, "max-threads = 0 is outside"), e);
  BOOST_TEST(config_error("threads2", "[scheduler]\nmax-threads=2\n") == "<ok>");
}

BOOST_AUTO_TEST_CASE(tagflow_keys_out_of_range_name_file_key_and_range) {
  std::string e = config_error("depth", "[tagflow]\nmax-frame-depth=0\n");
  BOOST_TEST(contains(e, "_depth.ini': [tagflow] max-frame-depth = 0 is outside the allowed range (1 to 1000000)"), e);
  e = config_error("mem", "[tagflow]\nmemory-limit=\"lots\"\n");
  BOOST_TEST(contains(e, "_mem.ini': [tagflow] memory-limit: 'lots' is not a size"), e);
  BOOST_TEST(config_error("mem_bytes", "[tagflow]\nmemory-limit=1048576\n") == "<ok>");
  BOOST_TEST(config_error("mem_size", "[tagflow]\nmemory-limit=\"1G\"\n") == "<ok>");
  e = config_error("mem_list", "[tagflow]\nmemory-limit=[1]\n");
  BOOST_TEST(contains(e, "_mem_list.ini': [tagflow] memory-limit = [1] is not a string"), e);
  e = config_error("mem_small", "[tagflow]\nmemory-limit=1024\n");
  BOOST_TEST(contains(e, "[tagflow] memory-limit = 1024 is outside the allowed range (1.0 MiB to 1.0 PiB)"), e);
  e = config_error("nodes", "[tagflow]\nmax-nodes=\"many\"\n");
  BOOST_TEST(contains(e, "_nodes.ini': [tagflow] max-nodes = \"many\" is not a"), e);
  std::string many = "[tagflow]\ndevices=[";
  for (int i = 0; i < 1025; ++i) many += "\"/job:localhost/replica:0/task:0/device:CPU:" + std::to_string(i) + "\",";
  many += "]\n";
  e = config_error("devices", many);
  BOOST_TEST(contains(e, "_devices.ini': [tagflow] devices lists 1025 devices, outside the allowed range (1 to 1024)"), e);
}

BOOST_AUTO_TEST_CASE(values_echoed_in_errors_are_shortened) {
  const std::string huge(60000, 'x');
  std::string e = config_error("huge", "[tagflow]\ndevices=\"" + huge + "\"\n");
  BOOST_TEST(e.size() < 400u, e.size());
  BOOST_TEST(contains(e, "[tagflow] devices = \"xxxx"), e);
  BOOST_TEST(contains(e, "... (60002 bytes) is not a list"), e);
  e = config_error("huge_key", "[tagflow]\n" + huge + "=1\n");
  BOOST_TEST(e.size() < 400u, e.size());
  BOOST_TEST(contains(e, "(60000 bytes)' in section [tagflow]"), e);
}

BOOST_AUTO_TEST_CASE(without_a_configuration_the_embedded_devices_are_configured) {
  auto o = resolve_text("");
  BOOST_REQUIRE_MESSAGE(o.ok(), o.status().to_string());
  BOOST_TEST(o->devices.size() == 4u);
  BOOST_TEST(o->devices.front() == "/job:localhost/replica:0/task:0/device:CPU:0");
}

BOOST_AUTO_TEST_CASE(a_configuration_text_replaces_the_devices) {
  auto o = resolve_text("[tagflow]\ndevices=[\"/job:localhost/replica:0/task:0/device:CPU:5\"]\n");
  BOOST_REQUIRE_MESSAGE(o.ok(), o.status().to_string());
  BOOST_TEST(o->devices == std::vector<std::string>{"/job:localhost/replica:0/task:0/device:CPU:5"});
}

// An option's type check once called a null pointer in clang builds: the
// check came from an inline template's static that Debian's g++-built
// libcaf instantiates too (actors/session_config.cpp, option_meta). Found
// by fuzz/config with an empty input.
BOOST_AUTO_TEST_CASE(option_type_checks_work_in_every_build) {
  BOOST_TEST(contains(text_error("[tagflow]\ndevices=3\n"), "[tagflow] devices = 3 is not a list of string"));
  BOOST_TEST(contains(text_error("[tagflow]\ndevices=[1]\n"), "is not a list of string"));
  BOOST_TEST(contains(text_error("[tagflow]\nstrict-merge=3\n"), "[tagflow] strict-merge = 3 is not a"));
  BOOST_TEST(contains(text_error("[tagflow]\nmax-nodes=\"x\"\n"), "the configuration text: [tagflow] max-nodes"));
  BOOST_TEST(text_error("[tagflow]\nstrict-merge=true\n") == "<ok>");
  BOOST_TEST(resolve_text("[tagflow]\nstrict-merge=true\n")->strict_merge);
}

BOOST_AUTO_TEST_CASE(unknown_keys_and_bad_device_names_in_a_text_are_errors) {
  BOOST_TEST(contains(text_error("[tagflow]\ndevice-count=3\n"), "unknown key 'device-count' in section [tagflow]"));
  BOOST_TEST(contains(text_error("stray=1\n"), "unknown key 'stray'"));
  BOOST_TEST(contains(text_error("[tagflow]\ndevices=[\"/device:CPU:0\"]\n"), "is not a full device name"));
}

BOOST_AUTO_TEST_SUITE_END()
