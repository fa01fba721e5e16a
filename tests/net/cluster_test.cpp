// The cluster specification (net/cluster.hpp): TensorFlow's ClusterSpec in
// one flag, devices mapped to their task's address, and every malformed
// spec an error naming the job, the task and the position.
#include <boost/test/unit_test.hpp>

#include "net/cluster.hpp"

using namespace tagflow;
using net::ClusterSpec;
using net::TaskAddress;

namespace {

std::string error_of(const std::string& text) {
  auto c = ClusterSpec::parse(text);
  return c.ok() ? "<ok: " + c->to_string() + ">" : c.status().to_string();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

graph::DeviceName device(const std::string& text) {
  auto d = graph::parse_device_name(text);
  if (!d.ok()) throw std::runtime_error(d.status().to_string());
  return *d;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cluster)

BOOST_AUTO_TEST_CASE(jobs_and_tasks_in_one_flag) {
  auto c = ClusterSpec::parse("worker=127.0.0.1:7001,localhost:7002;ps=[::1]:7000");
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  BOOST_TEST(c->jobs() == (std::vector<std::string>{"ps", "worker"}));
  BOOST_TEST(c->num_tasks("worker") == 2);
  BOOST_TEST(c->num_tasks("ps") == 1);
  BOOST_TEST(c->num_tasks("chief") == 0);
  BOOST_REQUIRE(c->find("worker", 1) != nullptr);
  BOOST_TEST(c->find("worker", 1)->host == "localhost");
  BOOST_TEST(c->find("worker", 1)->port == 7002);
  BOOST_TEST(c->find("ps", 0)->host == "::1");
  BOOST_TEST(c->find("worker", 2) == nullptr);
  BOOST_TEST(c->find("worker", -1) == nullptr);
  BOOST_TEST(c->to_string() == "ps=[::1]:7000;worker=127.0.0.1:7001,localhost:7002");
  auto again = ClusterSpec::parse(c->to_string());
  BOOST_REQUIRE(again.ok());
  BOOST_TEST((*again == *c));
  BOOST_TEST(error_of("worker=h:1;") == "<ok: worker=h:1>");
}

BOOST_AUTO_TEST_CASE(a_device_lives_on_the_task_its_name_gives) {
  auto c = ClusterSpec::parse("worker=127.0.0.1:7001,127.0.0.1:7002");
  BOOST_REQUIRE(c.ok());
  auto a = c->task_of(device("/job:worker/replica:0/task:1/device:CPU:0"));
  BOOST_REQUIRE_MESSAGE(a.ok(), a.status().to_string());
  BOOST_TEST(a->to_string() == "127.0.0.1:7002");
  BOOST_TEST(c->task_of(device("/job:worker/replica:0/task:2/device:CPU:0")).status().to_string() ==
             "invalid_argument: device '/job:worker/replica:0/task:2/device:CPU:0': job 'worker' has tasks 0 to "
             "1, not task 2");
  BOOST_TEST(c->task_of(device("/job:ps/task:0")).status().to_string() ==
             "invalid_argument: device '/job:ps/task:0': the cluster has no job 'ps' (its jobs: worker)");
  BOOST_TEST(contains(c->task_of(device("/device:CPU:0")).status().to_string(), "names no job and task"));
}

BOOST_AUTO_TEST_CASE(a_flag_replaces_one_job) {
  auto c = ClusterSpec::parse("worker=h:1,h:2;ps=h:3");
  BOOST_REQUIRE(c.ok());
  c->set_job("worker", {TaskAddress{"127.0.0.1", 9000}});
  BOOST_TEST(c->to_string() == "ps=h:3;worker=127.0.0.1:9000");
}

BOOST_AUTO_TEST_CASE(malformed_specs_name_job_task_and_position) {
  BOOST_TEST(error_of("") == "invalid_argument: cluster '': a job is empty; write JOB=HOST:PORT[,HOST:PORT...] "
                             "(at character 1)");
  BOOST_TEST(error_of("worker") == "invalid_argument: cluster 'worker': job 'worker' has no '=' before its tasks "
                                   "(at character 1)");
  BOOST_TEST(contains(error_of("worker=h:1;;ps=h:2"), "a job is empty"));
  BOOST_TEST(contains(error_of("9lives=h:1"), "'9lives' is not a job name"));
  BOOST_TEST(contains(error_of("my-job=h:1"), "'my-job' is not a job name"));
  BOOST_TEST(contains(error_of("worker=h:1;worker=h:2"), "job 'worker' is given twice (at character 12)"));
  BOOST_TEST(contains(error_of("worker="), "job 'worker' task 0 has no address (at character 8)"));
  BOOST_TEST(contains(error_of("worker=h:1,"), "job 'worker' task 1 has no address (at character 12)"));
  BOOST_TEST(contains(error_of("worker=h:1,h"), "job 'worker' task 1: task address 'h' has no ':PORT' after its host"));
  BOOST_TEST(contains(error_of("worker=h:0"), "port '0', not a number from 1 to 65535"));
  BOOST_TEST(contains(error_of("worker=h:65536"), "port '65536', not a number from 1 to 65535"));
  BOOST_TEST(contains(error_of("worker=h:7x"), "port '7x', not a number"));
  BOOST_TEST(contains(error_of("worker=h:-1"), "port '-1', not a number"));
  BOOST_TEST(contains(error_of("worker=:7001"), "has no host before its ':PORT'"));
  BOOST_TEST(contains(error_of("worker=h_x:7001"), "has '_' in its host"));
  BOOST_TEST(contains(error_of("worker=::1:7001"), "looks like an IPv6 address: write it in brackets"));
  BOOST_TEST(contains(error_of("worker=[::1:7001"), "never closes it"));
  BOOST_TEST(contains(error_of("worker=[]:7001"), "no valid IPv6 address"));
  BOOST_TEST(contains(error_of("worker=[::1]7001"), "has no ':PORT' after its host"));
  BOOST_TEST(contains(error_of("worker=h:1;ps=h:1"), "job 'ps' task 0: address h:1 is given to another task too"));
  const std::string huge(5000, 'w');
  BOOST_TEST(error_of(huge).size() < 300u);
}

BOOST_AUTO_TEST_SUITE_END()
