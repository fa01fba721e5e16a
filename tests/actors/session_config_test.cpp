// The configuration a Session reads (actors::read_session_config): the
// embedded default, a file's text on top, every key and type checked.
#include <boost/test/unit_test.hpp>

#include "actors/session.hpp"

using namespace tagflow;

namespace {

std::string error_of(const std::string& text) {
  auto r = actors::read_session_config(text, "test.ini");
  return r.ok() ? "<no error>" : r.status().to_string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(session_config)

BOOST_AUTO_TEST_CASE(without_a_file_the_embedded_devices_are_configured) {
  auto devices = actors::read_session_config("", "");
  BOOST_REQUIRE_MESSAGE(devices.ok(), devices.status().to_string());
  BOOST_TEST(devices->size() == 4u);
  BOOST_TEST(devices->front() == "/job:localhost/replica:0/task:0/device:CPU:0");
}

BOOST_AUTO_TEST_CASE(a_file_replaces_the_devices) {
  auto devices = actors::read_session_config(
      "[tagflow]\ndevices=[\"/job:localhost/replica:0/task:0/device:CPU:5\"]\n", "test.ini");
  BOOST_REQUIRE_MESSAGE(devices.ok(), devices.status().to_string());
  BOOST_TEST(*devices == std::vector<std::string>{"/job:localhost/replica:0/task:0/device:CPU:5"});
}

// The option's type check once called a null pointer in clang builds: the
// check came from an inline template's static that Debian's g++-built
// libcaf instantiates too (actors/session.cpp, option_meta). Found by
// fuzz/config with an empty input.
BOOST_AUTO_TEST_CASE(devices_option_type_check_works_in_every_build) {
  BOOST_TEST(error_of("[tagflow]\ndevices=3\n").find("[tagflow] devices = 3 is not a list of string") !=
             std::string::npos);
  BOOST_TEST(error_of("[tagflow]\ndevices=[1]\n").find("is not a list of string") != std::string::npos);
  BOOST_TEST(error_of("[tagflow]\nstrict-merge=3\n").find("[tagflow] strict-merge = 3 is not a") !=
             std::string::npos);
  BOOST_TEST(error_of("[tagflow]\nstrict-merge=true\n") == "<no error>");
}

BOOST_AUTO_TEST_CASE(unknown_keys_and_bad_device_names_are_errors) {
  BOOST_TEST(error_of("[tagflow]\ndevice-count=3\n").find("unknown key 'device-count' in section [tagflow]") !=
             std::string::npos);
  BOOST_TEST(error_of("stray=1\n").find("unknown key 'stray'") != std::string::npos);
  BOOST_TEST(error_of("[tagflow]\ndevices=[\"/device:CPU:0\"]\n").find("is not a full device name") !=
             std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
