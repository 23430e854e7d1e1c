// The coordination service when many processes vanish at once — a job-wide kill, a rack losing
// its switch, or the end of a large job — at a size CI can afford: 2048 processes, real
// CoordClients over loopback TCP in two helper processes (spmd-bench's simulated cluster), and
// the service in this process, so that a crash of the service is a crash of the test.
//
// Before deaths were queued and connections posted their close handlers, every failed write
// while announcing a death re-entered the death handling: a recursion one level per dead peer
// that overflowed the service's stack at 8192 processes. The service's event loop now has a
// fixed 512 KiB stack, so that recursion would overflow here, at 1024 deaths.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/commanded_child.h"
#include "coord/coord_client.h"
#include "coord/service.h"
#include "runtime/io_thread.h"
#include "spmd/error.h"

namespace spmd {
namespace {

using namespace std::chrono_literals;
using tools::CommandedChild;

constexpr int kProcesses = 2048;
constexpr int kHelpers = 2;
constexpr int kPerHelper = kProcesses / kHelpers;
constexpr auto kHeartbeatTimeout = 2s;

class MassFailure : public ::testing::Test {
 protected:
  void SetUp() override {
    ServiceOptions so;
    so.num_processes = kProcesses;
    so.bind_address = "127.0.0.1:0";
    so.heartbeat_timeout = kHeartbeatTimeout;
    service_ = std::make_unique<CoordService>(so);
    service_->start();
    const std::string address = "127.0.0.1:" + std::to_string(service_->port());
    for (int h = 0; h < kHelpers; ++h) {
      helpers_.push_back(std::make_unique<CommandedChild>(
          "client helper " + std::to_string(h),
          std::vector<std::string>{
              SPMD_TEST_BENCH, "coordinator-clients", "--address", address, "--processes",
              std::to_string(kProcesses), "--first", std::to_string(h * kPerHelper), "--count",
              std::to_string(kPerHelper), "--heartbeat-timeout-ms",
              std::to_string(std::chrono::milliseconds(kHeartbeatTimeout).count())}));
    }
    std::vector<std::string> ids;
    for (auto& h : helpers_) ids.push_back(h->send("start"));
    for (int h = 0; h < kHelpers; ++h) {
      const auto done = helpers_[h]->await(ids[h], 120s);
      ASSERT_EQ(done.at(2), "0") << "processes of helper " << h << " failed to register";
    }
  }

  // Waits until the service has counted `n` deaths; the count it reached.
  uint64_t wait_for_deaths(uint64_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (service_->stats().deaths < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    return service_->stats().deaths;
  }

  // A new process claiming `id` gets an answer: the event loop still serves, and still knows
  // who holds the id.
  std::string answer_to_a_new_registration(int id) {
    IoThread io;
    ClientConfig cc;
    cc.address = "127.0.0.1:" + std::to_string(service_->port());
    cc.process_id = id;
    cc.num_processes = kProcesses;
    cc.initialization_timeout = 20s;
    auto client = CoordClient::create(io.context(), cc);
    try {
      client->start();
    } catch (const Error& e) {
      client->close();
      return e.what();
    }
    client->close();
    return "registered";
  }

  std::unique_ptr<CoordService> service_;
  std::vector<std::unique_ptr<CommandedChild>> helpers_;
};

TEST_F(MassFailure, HalfVanishingAtOnceIsCountedOnceEachAndTheRestAreStillServed) {
  helpers_[0]->kill_now();  // 1024 connections drop together
  const auto heard = helpers_[1]->call("wait-heard " + std::to_string(kPerHelper) + " 60000", 90s);
  EXPECT_EQ(heard.at(1), std::to_string(kPerHelper)) << "every survivor hears of the failure";
  EXPECT_EQ(heard.at(3), "0") << "no survivor lost the service";
  EXPECT_EQ(wait_for_deaths(kPerHelper), static_cast<uint64_t>(kPerHelper));
  // Two heartbeat timeouts later the survivors are still there: the service read their
  // heartbeats and declared none of them dead, nor anyone twice.
  std::this_thread::sleep_for(2 * kHeartbeatTimeout);
  EXPECT_EQ(service_->stats().deaths, static_cast<uint64_t>(kPerHelper));
  EXPECT_FALSE(service_->wait_until_disconnected(0ms, kPerHelper - 1));
  const std::string answer = answer_to_a_new_registration(kPerHelper + 5);
  EXPECT_NE(answer.find("already taken by the process on host bench-host-"), std::string::npos)
      << answer;
  // The survivors leave; the service finishes.
  helpers_[1]->call("close", 30s);
  EXPECT_TRUE(service_->wait_until_finished(60s));
}

TEST_F(MassFailure, EveryProcessVanishingAtOnceLeavesTheServiceRunningToTheEnd) {
  for (auto& h : helpers_) h->kill_now();
  EXPECT_EQ(wait_for_deaths(kProcesses), static_cast<uint64_t>(kProcesses));
  EXPECT_TRUE(service_->wait_until_finished(60s));
  EXPECT_TRUE(service_->wait_until_disconnected(10s, 0));
  const std::string answer = answer_to_a_new_registration(7);
  EXPECT_NE(answer.find("already taken"), std::string::npos) << answer;
}

}  // namespace
}  // namespace spmd
