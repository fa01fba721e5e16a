#include <boost/test/unit_test.hpp>

#include "graph/device.hpp"
#include "graph_test_util.hpp"

using namespace tagflow::graph;
using tagflow::graph::testing::contains;

namespace {

DeviceName parsed(const std::string& text) {
  auto d = parse_device_name(text);
  if (!d.ok()) throw std::runtime_error(d.status().to_string());
  return *d;
}

std::string parse_error(const std::string& text) {
  auto d = parse_device_name(text);
  return d.ok() ? "<no error>" : d.status().to_string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(device)

BOOST_AUTO_TEST_CASE(full_names_parse_and_print_back) {
  const std::string text = "/job:localhost/replica:0/task:0/device:CPU:3";
  DeviceName d = parsed(text);
  BOOST_TEST(*d.job == "localhost");
  BOOST_TEST(*d.replica == 0);
  BOOST_TEST(*d.task == 0);
  BOOST_TEST(*d.type == "CPU");
  BOOST_TEST(*d.id == 3);
  BOOST_TEST(full_name(d) == text);
  BOOST_TEST(short_name(d) == "CPU_3");
}

BOOST_AUTO_TEST_CASE(partial_names_leave_parts_unset) {
  DeviceName task = parsed("/job:localhost/replica:0/task:0");
  BOOST_TEST(!task.type.has_value());
  BOOST_TEST(!task.id.has_value());
  BOOST_TEST(full_name(task) == "/job:localhost/replica:0/task:0");
  DeviceName dev = parsed("/device:CPU:1");
  BOOST_TEST(!dev.job.has_value());
  BOOST_TEST(*dev.id == 1);
  DeviceName any = parsed("/device:CPU:*");
  BOOST_TEST(*any.type == "CPU");
  BOOST_TEST(!any.id.has_value());
  BOOST_TEST(full_name(any) == "/device:CPU:*");
  BOOST_TEST(parsed("").empty());
  BOOST_TEST(full_name(parsed("")) == "");
}

BOOST_AUTO_TEST_CASE(legacy_forms_mean_device_cpu_and_gpu) {
  BOOST_TEST(full_name(parsed("/cpu:0")) == "/device:CPU:0");
  BOOST_TEST(full_name(parsed("/gpu:1")) == "/device:GPU:1");
  BOOST_TEST(full_name(parsed("/job:x/replica:0/task:0/cpu:1")) == "/job:x/replica:0/task:0/device:CPU:1");
  // only lowercase cpu/gpu are legacy; device:cpu is a type of its own
  BOOST_TEST(*parsed("/device:cpu:0").type == "cpu");
  BOOST_TEST((parsed("/device:cpu:0") != parsed("/device:CPU:0")));
  BOOST_TEST(contains(parse_error("/tpu:0"), "unknown part 'tpu:0'"));
}

BOOST_AUTO_TEST_CASE(errors_name_the_text_and_the_part) {
  BOOST_TEST(contains(parse_error("job:x"), "device name 'job:x': a device name starts with '/'"));
  BOOST_TEST(contains(parse_error("/job:x/replica:a"), "'a' is not a replica number"));
  BOOST_TEST(contains(parse_error("/task:-1"), "'-1' is not a task number"));
  BOOST_TEST(contains(parse_error("/device:CPU:x"), "'x' is not a device id"));
  BOOST_TEST(contains(parse_error("/job:a/job:b"), "the job is given twice"));
  BOOST_TEST(contains(parse_error("/job:a//task:0"), "empty part"));
  BOOST_TEST(contains(parse_error("/foo:1"), "unknown part 'foo:1'"));
  BOOST_TEST(contains(parse_error("/device:CPU:0/cpu:1"), "the device is given twice"));
}

BOOST_AUTO_TEST_CASE(matching_compatibility_and_merge) {
  DeviceName cpu1 = parsed("/job:localhost/replica:0/task:0/device:CPU:1");
  BOOST_TEST(matches(parsed(""), cpu1));
  BOOST_TEST(matches(parsed("/device:CPU:1"), cpu1));
  BOOST_TEST(matches(parsed("/device:CPU:*"), cpu1));
  BOOST_TEST(matches(parsed("/job:localhost"), cpu1));
  BOOST_TEST(!matches(parsed("/device:CPU:0"), cpu1));
  BOOST_TEST(!matches(parsed("/job:worker"), cpu1));
  BOOST_TEST(!matches(parsed("/device:GPU:1"), cpu1));
  BOOST_TEST(!matches(cpu1, parsed("/device:CPU:1")));  // the device must have every part

  BOOST_TEST(compatible(parsed("/job:a"), parsed("/device:CPU:0")));
  BOOST_TEST(!compatible(parsed("/cpu:0"), parsed("/device:CPU:1")));
  auto m = merge(parsed("/job:a/task:1"), parsed("/device:CPU:2"));
  BOOST_REQUIRE(m.ok());
  BOOST_TEST(full_name(*m) == "/job:a/task:1/device:CPU:2");
  BOOST_TEST(short_name(*m) == "a_t1_CPU_2");
  auto bad = merge(parsed("/cpu:0"), parsed("/device:CPU:1"));
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(contains(bad.status().message(), "'/device:CPU:0' and '/device:CPU:1'"));
}

BOOST_AUTO_TEST_CASE(local_devices_are_full_names) {
  auto d = local_devices(3);
  BOOST_REQUIRE(d.size() == 3u);
  BOOST_TEST(d[0] == "/job:localhost/replica:0/task:0/device:CPU:0");
  BOOST_TEST(d[2] == "/job:localhost/replica:0/task:0/device:CPU:2");
  BOOST_TEST(local_devices(1, "worker", 0, 2)[0] == "/job:worker/replica:0/task:2/device:CPU:0");
}

BOOST_AUTO_TEST_SUITE_END()
