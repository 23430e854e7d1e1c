// The coordination service and its client, in one process over real loopback TCP.
#include "coord/service.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <future>
#include <thread>

#include "coord/coord_client.h"
#include "coord/frame.h"
#include "coord/status_query.h"
#include "runtime/io_thread.h"
#include "spmd/coordination_client.h"
#include "spmd/error.h"

namespace spmd {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Records peer-failure notices delivered to one client.
struct FailureLog {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<FailureReport> seen;
  void add(const FailureReport& info) {
    std::lock_guard lock(mu);
    seen.push_back(info);
    cv.notify_all();
  }
  bool wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return !seen.empty(); });
  }
};

class ServiceTest : public ::testing::Test {
 protected:
  void start_service(int n, std::chrono::milliseconds heartbeat = 10s, std::string token = "") {
    ServiceOptions so;
    so.num_processes = n;
    so.bind_address = "127.0.0.1:0";
    so.heartbeat_timeout = heartbeat;
    so.auth_token = std::move(token);
    so.handshake_timeout = handshake_timeout_;
    service_ = std::make_unique<CoordService>(so);
    service_->start();
    n_ = n;
  }

  ClientConfig config(int id, std::chrono::milliseconds init_timeout = 10s) {
    ClientConfig cc;
    cc.address = "127.0.0.1:" + std::to_string(service_->port());
    cc.process_id = id;
    cc.num_processes = n_;
    cc.host_id = "host-" + std::to_string(id);
    cc.hostname = "node" + std::to_string(id);
    cc.pid = 1000 + id;
    wire::DeviceInfo d;
    d.set_platform("cpu");
    d.set_local_hardware_id(0);
    cc.devices = {d, d};
    cc.devices[1].set_local_hardware_id(1);
    cc.initialization_timeout = init_timeout;
    cc.heartbeat_timeout = 10s;
    // The log is made here, on the test's thread: the io thread only writes through the pointer,
    // so the map is never changed by two threads at once (which lost reports under load).
    FailureLog* log = &failures_[id];
    cc.on_failure = [log](const FailureReport& info) { log->add(info); };
    return cc;
  }

  // Starts clients 0..n-1 concurrently; returns them once all are registered.
  std::vector<std::shared_ptr<CoordClient>> start_all() {
    std::vector<std::shared_ptr<CoordClient>> clients;
    std::vector<std::future<wire::Topology>> topologies;
    clients.reserve(n_);
    topologies.reserve(n_);
    for (int i = 0; i < n_; ++i) {
      clients.push_back(CoordClient::create(io_.context(), config(i)));
      topologies.push_back(
          std::async(std::launch::async, [c = clients.back()] { return c->start(); }));
    }
    for (auto& t : topologies) last_topology_ = t.get();
    return clients;
  }

  // Processes [first, last) call shutdown() at once, each on a thread of its own: the threads
  // start first and are released together, so their arrivals fall well inside the service's
  // quiet spell for leavers, however slowly threads start on a loaded machine.
  static void leave(const std::vector<std::shared_ptr<CoordClient>>& clients, int first, int last,
                    std::vector<std::future<void>>& leaving) {
    std::promise<void> go;
    std::shared_future<void> gate = go.get_future().share();
    std::vector<std::promise<void>> ready(static_cast<size_t>(last - first));
    for (int p = first; p < last; ++p) {
      leaving.push_back(
          std::async(std::launch::async, [c = clients[p], gate, &started = ready[p - first]] {
            started.set_value();
            gate.wait();
            c->shutdown(std::chrono::seconds(10));
          }));
    }
    for (auto& r : ready) r.get_future().wait();
    go.set_value();
  }

  // Process `id`'s registration as a frame, for a connection the test speaks through by hand.
  std::string raw_registration(int id, const std::string& hostname, int pid) {
    wire::ClientMessage reg;
    reg.set_request_id(kRegistrationRequestId);
    reg.mutable_registration()->set_process_id(id);
    reg.mutable_registration()->set_num_processes(n_);
    reg.mutable_registration()->set_hostname(hostname);
    reg.mutable_registration()->set_pid(pid);
    reg.mutable_registration()->set_timeout_ms(5000);
    for (const wire::DeviceInfo& d : config(id).devices)
      *reg.mutable_registration()->add_devices() = d;
    return encode_frame(reg.SerializeAsString());
  }

  std::unique_ptr<CoordService> service_;
  std::chrono::milliseconds handshake_timeout_ = 300ms;
  IoThread io_;
  int n_ = 0;
  std::map<int, FailureLog> failures_;
  wire::Topology last_topology_;
};

TEST_F(ServiceTest, RegistrationGivesEveryProcessTheSameTopology) {
  start_service(3);
  auto clients = start_all();
  EXPECT_EQ(last_topology_.host_index_size(), 3);
  EXPECT_EQ(last_topology_.hosts_size(), 3);
  EXPECT_EQ(last_topology_.local_hardware_id_size(), 6);
  EXPECT_EQ(last_topology_.pid(2), 1002);
  EXPECT_EQ(last_topology_.hosts(last_topology_.host_index(1)).hostname(), "node1");
  EXPECT_EQ(last_topology_.device_kind_index_size(), 0);  // CPUs: each kind its platform's name
}

// A GPU's kind (its CUDA name, JAX's device_kind) reaches every process, once per kind.
TEST_F(ServiceTest, EachDevicesKindReachesEveryProcess) {
  start_service(2);
  std::vector<std::shared_ptr<CoordClient>> clients;
  std::vector<std::future<wire::Topology>> topologies;
  for (int i = 0; i < 2; ++i) {
    ClientConfig cc = config(i);
    for (wire::DeviceInfo& d : cc.devices) {
      d.set_platform("gpu");
      d.set_device_kind(i == 0 ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-40GB");
    }
    clients.push_back(CoordClient::create(io_.context(), cc));
    topologies.push_back(
        std::async(std::launch::async, [c = clients.back()] { return c->start(); }));
  }
  for (auto& t : topologies) {
    const wire::Topology topo = t.get();
    ASSERT_EQ(topo.device_kind_index_size(), 4);
    EXPECT_EQ(topo.device_kinds_size(), 2);
    EXPECT_EQ(topo.device_kinds(topo.device_kind_index(1)), "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(topo.device_kinds(topo.device_kind_index(2)), "NVIDIA A100-SXM4-40GB");
  }
}

TEST_F(ServiceTest, KeyValueStoreServesEveryOperation) {
  start_service(2);
  auto clients = start_all();
  distributed::Client a(clients[0]);
  distributed::Client b(clients[1]);
  a.key_value_set("k", std::string("v\0w", 3));
  EXPECT_EQ(b.key_value_try_get("k"), std::string("v\0w", 3));
  EXPECT_EQ(b.key_value_try_get("absent"), std::nullopt);
  EXPECT_THROW(b.key_value_set("k", "x"), AlreadyExists);
  b.key_value_set("k", "x", true);
  EXPECT_EQ(a.blocking_key_value_get("k", 1s), "x");
  a.key_value_set("dir/1", "one");
  a.key_value_set("dir/2", "two");
  auto entries = b.key_value_dir_get("dir");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1], (std::pair<std::string, std::string>{"dir/2", "two"}));
  b.key_value_delete("dir");
  EXPECT_TRUE(a.key_value_dir_get("dir").empty());
  EXPECT_EQ(a.key_value_increment("n", 2), 2);
  EXPECT_EQ(b.key_value_increment("n", 3), 5);
  EXPECT_THROW(a.key_value_increment("k", 1), InvalidArgument);
  EXPECT_THROW(a.key_value_set("", "v"), InvalidArgument);
}

TEST_F(ServiceTest, BlockingGetWaitsForAnotherProcessesSet) {
  start_service(2);
  auto clients = start_all();
  distributed::Client a(clients[0]);
  distributed::Client b(clients[1]);
  auto got = std::async(std::launch::async, [&] { return a.blocking_key_value_get("late", 10s); });
  std::this_thread::sleep_for(100ms);
  b.key_value_set("late", "here");
  EXPECT_EQ(got.get(), "here");
}

TEST_F(ServiceTest, BlockingGetTimesOutNamingTheKey) {
  start_service(1);
  auto clients = start_all();
  distributed::Client a(clients[0]);
  try {
    a.blocking_key_value_get("never", 200ms);
    FAIL();
  } catch (const DeadlineExceeded& e) {
    EXPECT_NE(std::string(e.what()).find("'never'"), std::string::npos);
  }
}

TEST_F(ServiceTest, BarrierReleasesEveryProcess) {
  start_service(3);
  auto clients = start_all();
  std::vector<std::future<void>> waits;
  waits.reserve(clients.size());
  for (auto& c : clients) {
    waits.push_back(std::async(std::launch::async, [c] {
      distributed::Client(c).wait_at_barrier("b", 10s);
      distributed::Client(c).wait_at_barrier("b", 10s);  // reused in a loop
    }));
  }
  for (auto& w : waits) EXPECT_NO_THROW(w.get());
}

TEST_F(ServiceTest, Barrier_TimesOutNamingMissingProcesses) {
  start_service(4);
  auto clients = start_all();
  auto w0 = std::async(std::launch::async,
                       [&] { distributed::Client(clients[0]).wait_at_barrier("sync", 300ms); });
  auto w2 = std::async(std::launch::async,
                       [&] { distributed::Client(clients[2]).wait_at_barrier("sync", 5s); });
  for (auto* w : {&w0, &w2}) {
    try {
      w->get();
      ADD_FAILURE() << "barrier returned";
    } catch (const DeadlineExceeded& e) {
      EXPECT_NE(std::string(e.what()).find("2 of 4 processes arrived"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("missing processes: 1, 3"), std::string::npos)
          << e.what();
    }
  }
}

// Process 1 is in a blocking key-value get, process 3 reported a collective it finished: the
// timeout says so for each, from the live view.
TEST_F(ServiceTest, ABarrierTimeoutSaysWhatEachMissingProcessIsDoing) {
  start_service(4);
  auto clients = start_all();
  auto getter = std::async(std::launch::async, [&] {
    return distributed::Client(clients[1]).blocking_key_value_get("never", 1s);
  });
  clients[3]->activity().note_finished("all_reduce", 41);
  clients[3]->activity().end_wait(clients[3]->activity().begin_wait("x", {}, Clock::now()));
  std::this_thread::sleep_for(200ms);  // the get and the report reach the service
  auto w2 = std::async(std::launch::async,
                       [&] { distributed::Client(clients[2]).wait_at_barrier("b", 5s); });
  try {
    distributed::Client(clients[0]).wait_at_barrier("b", 300ms);
    ADD_FAILURE() << "barrier returned";
  } catch (const DeadlineExceeded& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("missing processes: 1, 3. "), std::string::npos) << what;
    EXPECT_NE(what.find("Now: process 1 (host node1, pid 1001) is in key_value_get 'never' since"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("process 3 (host node3, pid 1003) has been running its own code since it "
                        "finished all_reduce #41, "),
              std::string::npos)
        << what;
  }
  EXPECT_THROW(w2.get(), DeadlineExceeded);
  EXPECT_THROW(getter.get(), DeadlineExceeded);
}

// A process's own query and spmd-status's (a stranger with the token) see the same table: who
// is blocked where, waiting for whom, and who is waited for.
TEST_F(ServiceTest, TheStatusTableShowsWhoWaitsForWhom) {
  start_service(3, 10s, "secret");
  std::vector<std::shared_ptr<CoordClient>> clients;
  for (int i = 0; i < 3; ++i) {
    auto cc = config(i);
    cc.auth_token = "secret";
    clients.push_back(CoordClient::create(io_.context(), cc));
  }
  std::vector<std::future<wire::Topology>> started;
  for (auto& c : clients)
    started.push_back(std::async(std::launch::async, [c] { return c->start(); }));
  for (auto& f : started) f.get();
  auto w0 = std::async(std::launch::async,
                       [&] { distributed::Client(clients[0]).wait_at_barrier("epoch-end", 5s); });
  const uint64_t shown =
      clients[1]->activity().begin_wait("all_reduce #7 (sum, float32 x 8)", {2}, Clock::now() - 3s);
  std::this_thread::sleep_for(200ms);
  const std::string address = "127.0.0.1:" + std::to_string(service_->port());
  for (const wire::StatusTable& table :
       {clients[2]->status_table(5s), query_status(address, "secret", 5s)}) {
    ASSERT_EQ(table.processes_size(), 3);
    const auto& p0 = table.processes(0);
    EXPECT_EQ(p0.state(), spmd::wire::PROCESS_BLOCKED);
    EXPECT_EQ(p0.call(), "barrier 'epoch-end' #0");
    EXPECT_EQ(std::vector<int>(p0.waiting_for().begin(), p0.waiting_for().end()),
              (std::vector<int>{1, 2}));
    const auto& p1 = table.processes(1);
    EXPECT_EQ(p1.state(), spmd::wire::PROCESS_BLOCKED);
    EXPECT_EQ(p1.call(), "all_reduce #7 (sum, float32 x 8)");
    EXPECT_GE(p1.since_ms(), 3000);
    EXPECT_EQ(p1.waited_for_by(), 1);
    const auto& p2 = table.processes(2);
    EXPECT_EQ(p2.state(), spmd::wire::PROCESS_RUNNING);
    EXPECT_EQ(p2.waited_for_by(), 2);
    EXPECT_EQ(p2.hostname(), "node2");
    EXPECT_EQ(p2.pid(), 1002);
  }
  EXPECT_THROW(query_status(address, "wrong", 5s), PermissionDenied);
  clients[1]->activity().end_wait(shown);
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(clients[2]->status_table(5s).processes(1).state(), spmd::wire::PROCESS_RUNNING);
  auto w1 = std::async(std::launch::async,
                       [&] { distributed::Client(clients[1]).wait_at_barrier("epoch-end", 5s); });
  distributed::Client(clients[2]).wait_at_barrier("epoch-end", 5s);
  w0.get();
  w1.get();
  EXPECT_EQ(clients[2]->status_table(5s).processes(0).state(), spmd::wire::PROCESS_RUNNING);
}

TEST_F(ServiceTest, WaitingTwiceOnOneBarrierIdIsAnError) {
  start_service(2);
  auto clients = start_all();
  distributed::Client a(clients[0]);
  auto first = std::async(std::launch::async, [&] { a.wait_at_barrier("b", 2s); });
  std::this_thread::sleep_for(100ms);
  EXPECT_THROW(a.wait_at_barrier("b", 2s), FailedPrecondition);
  distributed::Client(clients[1]).wait_at_barrier("b", 2s);
  EXPECT_NO_THROW(first.get());
}

TEST_F(ServiceTest, LiveProcessesListsEveryRegisteredProcess) {
  start_service(3);
  auto clients = start_all();
  EXPECT_EQ(distributed::Client(clients[1]).get_live_processes(), (std::vector<int>{0, 1, 2}));
}

TEST_F(ServiceTest, ASecondClaimOfOneIdIsRefusedNamingTheFirstAndTheOthersGoOn) {
  start_service(2);
  auto first = CoordClient::create(io_.context(), config(0));
  auto first_done = std::async(std::launch::async, [&] { return first->start(); });
  std::this_thread::sleep_for(200ms);
  auto impostor_config = config(0);
  impostor_config.hostname = "impostor";
  auto impostor = CoordClient::create(io_.context(), impostor_config);
  try {
    impostor->start();
    FAIL();
  } catch (const AlreadyExists& e) {
    EXPECT_NE(std::string(e.what()).find("host node0 with pid 1000"), std::string::npos)
        << e.what();
  }
  auto second = CoordClient::create(io_.context(), config(1));
  EXPECT_NO_THROW(second->start());
  EXPECT_EQ(first_done.get().host_index_size(), 2);
}

TEST_F(ServiceTest, DisagreeingProcessCountsAreRefused) {
  start_service(2);
  auto cc = config(0);
  cc.num_processes = 3;
  try {
    CoordClient::create(io_.context(), cc)->start();
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("num_processes=3"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("cluster of 2"), std::string::npos);
  }
}

TEST_F(ServiceTest, ProcessesWithDifferentDeviceCountsAreAllRefusedNamingWhoHasHowMany) {
  start_service(3);
  std::vector<std::future<std::string>> refusals;
  for (int i = 0; i < 3; ++i) {
    auto cc = config(i);
    if (i == 1) cc.devices.push_back(cc.devices[1]);
    refusals.push_back(std::async(std::launch::async, [this, cc] {
      try {
        CoordClient::create(io_.context(), cc)->start();
      } catch (const InvalidArgument& e) {
        return std::string(e.what());
      }
      return std::string("formed");
    }));
  }
  for (auto& r : refusals) {
    const std::string why = r.get();
    EXPECT_NE(why.find("same number of local devices"), std::string::npos) << why;
    EXPECT_NE(why.find("processes 0, 2 (on node0, node2) have 2 cpu devices"), std::string::npos)
        << why;
    EXPECT_NE(why.find("process 1 (on node1) has 3 cpu devices"), std::string::npos) << why;
  }
}

TEST_F(ServiceTest, AWrongAuthTokenIsRefusedRevealingNothing) {
  start_service(2, 10s, "secret");
  auto cc = config(0);
  cc.auth_token = "guess";
  try {
    CoordClient::create(io_.context(), cc)->start();
    FAIL();
  } catch (const PermissionDenied& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("authentication failed"), std::string::npos);
    EXPECT_EQ(msg.find('2'), std::string::npos) << "leaks the cluster size: " << msg;
    EXPECT_EQ(msg.find("node"), std::string::npos) << msg;
  }
  auto good = config(0);
  good.auth_token = "secret";
  auto good1 = config(1);
  good1.auth_token = "secret";
  auto a = CoordClient::create(io_.context(), good);
  auto b = CoordClient::create(io_.context(), good1);
  auto fa = std::async(std::launch::async, [&] { return a->start(); });
  EXPECT_NO_THROW(b->start());
  EXPECT_NO_THROW(fa.get());
}

TEST_F(ServiceTest, RegistrationTimesOutNamingWhoDidNotRegister) {
  start_service(3);
  auto c = CoordClient::create(io_.context(), config(1, 300ms));
  try {
    c->start();
    FAIL();
  } catch (const DeadlineExceeded& e) {
    EXPECT_NE(std::string(e.what()).find("only 1 of 3 processes registered"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("missing process ids: 0, 2"), std::string::npos);
  }
}

TEST_F(ServiceTest, AnUnreachableCoordinatorIsNamedAfterTheTimeout) {
  start_service(1);
  auto cc = config(0, 400ms);
  cc.address = "127.0.0.1:1";  // nothing listens on port 1
  const auto start = Clock::now();
  try {
    CoordClient::create(io_.context(), cc)->start();
    FAIL();
  } catch (const DeadlineExceeded& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:1"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("could not reach"), std::string::npos);
  }
  EXPECT_LT(Clock::now() - start, 5s);
}

TEST_F(ServiceTest, AServiceClosingDuringRegistrationNamesProcessZeroWhereItHostsIt) {
  start_service(2);
  // A listener that accepts one connection and closes it at once: the service's process going
  // away while a client registers (the fault campaign's "kill in init of process 0").
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  // It stops listening after that one, so the client's new attempt is refused.
  std::thread closer([listener] {
    pollfd p{listener, POLLIN, 0};
    if (poll(&p, 1, 5000) == 1) close(accept(listener, nullptr, nullptr));
    close(listener);
  });
  auto cc = config(1, 10s);
  cc.address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  cc.service_in_process_0 = true;
  std::string error;
  const auto start = Clock::now();
  try {
    CoordClient::create(io_.context(), cc)->start();
  } catch (const Error& e) {
    error = e.what();
  }
  closer.join();
  EXPECT_LT(Clock::now() - start, 3s) << "a stopped service must not cost the whole deadline";
  EXPECT_NE(error.find("closed process 1's connection during registration"), std::string::npos)
      << error;
  EXPECT_NE(error.find("now refuses connections: process 0, which hosts it, has stopped"),
            std::string::npos)
      << error;
}

// A raw TCP connection to the service, for sending what no real client would.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{2, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));  // bounds connect() too
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawConnection() { close(fd_); }
  bool connected() const { return connected_; }
  void send_bytes(const std::string& bytes) {
    [[maybe_unused]] auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
  // True when the service closed the connection (EOF, or a reset when it closed with bytes of
  // ours unread) within the receive timeout.
  bool closed_by_peer() {
    char buf[256];
    while (true) {
      const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }
  // The next frame's payload, or nullopt when none comes within the receive timeout.
  std::optional<std::string> receive_frame() {
    FrameHeader header{};
    if (!receive_exactly(reinterpret_cast<char*>(header.data()), header.size())) return {};
    const auto length = decode_frame_header(header);
    if (!std::holds_alternative<uint32_t>(length)) return {};
    std::string payload(std::get<uint32_t>(length), '\0');
    if (!receive_exactly(payload.data(), payload.size())) return {};
    return payload;
  }
  // True when the service has already closed the connection; does not wait.
  bool closed_already() {
    char buf[256];
    const ssize_t n = recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

 private:
  bool receive_exactly(char* out, size_t n) {
    for (size_t got = 0; got < n;) {
      const ssize_t r = recv(fd_, out + got, n - got, 0);
      if (r <= 0) return false;
      got += static_cast<size_t>(r);
    }
    return true;
  }

  int fd_;
  bool connected_ = false;
};

std::string frame_with_header(uint16_t version, uint32_t length, const std::string& payload) {
  std::string h = "SPMD";
  h += static_cast<char>(version >> 8);
  h += static_cast<char>(version & 0xff);
  h += std::string(2, '\0');
  for (int i = 3; i >= 0; --i) h += static_cast<char>((length >> (8 * i)) & 0xff);
  return h + payload;
}

TEST_F(ServiceTest, HostileConnectionsAreDroppedAndTheClusterGoesOn) {
  start_service(2);
  auto clients = start_all();
  distributed::Client a(clients[0]);
  distributed::Client b(clients[1]);

  wire::ClientMessage not_registration;
  not_registration.set_request_id(1);
  not_registration.mutable_kv_set()->set_key("x");
  const std::vector<std::string> attacks = {
      std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),      // garbage
      frame_with_header(kProtocolVersion, 0xFFFFFFF0u, ""),  // oversized length
      frame_with_header(kProtocolVersion + 7, 4, "abcd"),    // wrong version
      frame_with_header(kProtocolVersion, 4, std::string("\xff\xff\xff\xff", 4)),  // bad protobuf
      encode_frame(not_registration.SerializeAsString()),  // not a registration
  };
  for (const auto& attack : attacks) {
    RawConnection raw(service_->port());
    ASSERT_TRUE(raw.connected());
    raw.send_bytes(attack);
    EXPECT_TRUE(raw.closed_by_peer());
  }
  {
    RawConnection truncated(service_->port());
    truncated.send_bytes(frame_with_header(kProtocolVersion, 100, "only a few bytes"));
  }  // closed mid-frame
  {
    RawConnection silent(service_->port());
    EXPECT_TRUE(silent.closed_by_peer());  // dropped after the 300 ms handshake timeout
  }
  EXPECT_GE(service_->stats().dropped_connections, attacks.size() + 1);

  // The real processes never noticed.
  a.key_value_set("still", "works");
  EXPECT_EQ(b.blocking_key_value_get("still", 1s), "works");
  auto w = std::async(std::launch::async, [&] { a.wait_at_barrier("after", 5s); });
  b.wait_at_barrier("after", 5s);
  w.get();
  EXPECT_TRUE(failures_[0].seen.empty());
  EXPECT_TRUE(failures_[1].seen.empty());
}

// This process's resident set, in bytes (the service runs inside it).
int64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  long pages = 0;
  long resident = 0;
  if (f == nullptr || std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  if (f != nullptr) std::fclose(f);
  return int64_t{resident} * sysconf(_SC_PAGESIZE);
}

// The outside report: 16 connections each declared a 64 MiB frame and sent 1 MiB of it, and the
// service grew by 800 MB. Before registering, a frame of a registration's size is the most a
// connection may declare.
TEST_F(ServiceTest, StrangersDeclaringHugeFramesCostTheServiceNoMemory) {
  start_service(2);
  auto clients = start_all();
  const int64_t before = resident_bytes();
  const std::string mebibyte(size_t{1} << 20, 'x');
  std::vector<std::unique_ptr<RawConnection>> attackers;
  for (int i = 0; i < 16; ++i) {
    attackers.push_back(std::make_unique<RawConnection>(service_->port()));
    ASSERT_TRUE(attackers.back()->connected());
    attackers.back()->send_bytes(frame_with_header(kProtocolVersion, kMaxFrameBytes, mebibyte));
  }
  for (auto& a : attackers) EXPECT_TRUE(a->closed_by_peer());
  const int64_t grown = resident_bytes() - before;
  EXPECT_LT(grown, int64_t{16} << 20) << "the service grew by " << grown << " bytes";
  // Each drop is counted by the connection's close handler, which runs just after the close.
  const auto counted = Clock::now() + 5s;
  while (service_->stats().dropped_connections < 16u && Clock::now() < counted) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_GE(service_->stats().dropped_connections, 16u);

  distributed::Client a(clients[0]);
  distributed::Client b(clients[1]);
  a.key_value_set("after-attack", "fine");
  EXPECT_EQ(b.blocking_key_value_get("after-attack", 1s), "fine");
  EXPECT_TRUE(failures_[0].seen.empty());
}

// A registration-sized frame sent half-way and then silence: dropped at the handshake deadline.
// Strangers beyond their room are dropped oldest first, at once.
TEST_F(ServiceTest, HalfSentRegistrationsAndConnectionFloodsAreDropped) {
  start_service(2);
  auto clients = start_all();
  RawConnection half(service_->port());
  half.send_bytes(frame_with_header(kProtocolVersion, 1000, std::string(500, 'r')));
  const auto start = Clock::now();
  EXPECT_TRUE(half.closed_by_peer());
  EXPECT_LT(Clock::now() - start, 2s);  // the test's handshake timeout is 300 ms

  std::vector<std::unique_ptr<RawConnection>> flood;
  for (int i = 0; i < 160; ++i) flood.push_back(std::make_unique<RawConnection>(service_->port()));
  std::this_thread::sleep_for(100ms);  // well inside the 300 ms handshake deadline
  // Every process has registered, so strangers have the 128 spare places: the oldest 32 of the
  // 160 are dropped at once, the newest 128 only at the handshake deadline.
  int oldest_dropped = 0;
  int newest_dropped = 0;
  for (int i = 0; i < 160; ++i)
    (i < 32 ? oldest_dropped : newest_dropped) += flood[i]->closed_already();
  EXPECT_EQ(oldest_dropped, 32);
  EXPECT_EQ(newest_dropped, 0);
  for (auto& c : flood) EXPECT_TRUE(c->closed_by_peer());
  distributed::Client a(clients[0]);
  distributed::Client b(clients[1]);
  a.key_value_set("after-flood", "fine");
  EXPECT_EQ(b.blocking_key_value_get("after-flood", 1s), "fine");
}

// Waits until `done` holds or `timeout` passes; returns whether it holds.
template <class F>
bool eventually(F&& done, std::chrono::milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// The outside report: 130 idle connections made before the other processes started kept a job
// of 3 from forming, and processes 1 and 2 blamed process 0. Here 1000 idle strangers, which the
// handshake deadline does not reach in time, connect first: the newest 131 fill the strangers'
// room and the processes push them out.
TEST_F(ServiceTest, IdleStrangersCannotKeepTheProcessesOut) {
  handshake_timeout_ = 60s;
  start_service(3);
  std::vector<std::unique_ptr<RawConnection>> strangers;
  for (int i = 0; i < 1000; ++i) {
    strangers.push_back(std::make_unique<RawConnection>(service_->port()));
    ASSERT_TRUE(strangers.back()->connected()) << "stranger " << i;
  }
  const auto dropped = [&] {
    int n = 0;
    for (auto& c : strangers) n += c->closed_already() ? 1 : 0;
    return n;
  };
  EXPECT_TRUE(eventually([&] { return dropped() == 1000 - 131; }, 10s)) << dropped();
  auto clients = start_all();
  std::vector<std::future<void>> waits;
  for (auto& c : clients) {
    waits.push_back(std::async(std::launch::async, [c] {
      distributed::Client(c).wait_at_barrier("formed despite strangers", 10s);
    }));
  }
  for (auto& w : waits) EXPECT_NO_THROW(w.get());
  // The processes took three of the strangers' places; their room is now the 128 spare ones.
  EXPECT_GE(dropped(), 1000 - 128);
  for (int p = 0; p < 3; ++p) EXPECT_TRUE(failures_[p].seen.empty());
}

// A connect flood while the job starts (the outside report: all 3 processes died within 0.25 s).
// The flood keeps the strangers' room overfull, so a process's connection may be dropped before
// its registration is read; the process connects again and the job forms.
TEST_F(ServiceTest, AConnectFloodCannotKeepTheProcessesOut) {
  handshake_timeout_ = 60s;
  start_service(3);
  std::atomic<bool> stop{false};
  std::atomic<int> made{0};
  std::thread flood([&] {
    std::deque<std::unique_ptr<RawConnection>> held;  // more than the room, always
    while (!stop) {
      held.push_back(std::make_unique<RawConnection>(service_->port()));
      if (held.size() > 400) held.pop_front();
      ++made;
    }
  });
  eventually([&] { return made > 2000; }, 10s);
  std::vector<std::shared_ptr<CoordClient>> clients;
  EXPECT_NO_THROW(clients = start_all());
  std::vector<std::future<void>> waits;
  for (auto& c : clients) {
    waits.push_back(std::async(std::launch::async, [c] {
      distributed::Client(c).wait_at_barrier("formed despite a flood", 10s);
    }));
  }
  for (auto& w : waits) EXPECT_NO_THROW(w.get());
  stop = true;
  flood.join();
  EXPECT_GT(made.load(), 2000);
}

// A job that does not form names the strangers it refused, by host, and does not blame process 0.
TEST_F(ServiceTest, ARegistrationTimeoutNamesTheStrangers) {
  start_service(2);
  for (int i = 0; i < 50; ++i) {
    RawConnection garbage(service_->port());
    garbage.send_bytes("GET / HTTP/1.1\r\n\r\n");
    EXPECT_TRUE(garbage.closed_by_peer());
  }
  try {
    CoordClient::create(io_.context(), config(0, 500ms))->start();
    FAIL();
  } catch (const DeadlineExceeded& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("missing process ids: 1"), std::string::npos) << what;
    EXPECT_NE(what.find("refused or dropped 50 connections that did not authenticate, from "
                        "127.0.0.1 (50)"),
              std::string::npos)
        << what;
    EXPECT_EQ(what.find("process 0, which hosts"), std::string::npos) << what;
  }
}

// A loopback proxy to the service that closes its first connection unanswered, as the service
// does to a stranger pushed out of its room, and carries every later one through.
class DroppingProxy {
 public:
  explicit DroppingProxy(uint16_t target) : target_(target) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = loopback(0);
    socklen_t len = sizeof(addr);
    bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    listen(listener_, 8);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~DroppingProxy() {
    stop_ = true;
    thread_.join();
    close(listener_);
  }
  uint16_t port() const { return port_; }
  int accepted() const { return accepted_; }

 private:
  static sockaddr_in loopback(uint16_t port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
  }
  void run() {
    std::vector<pollfd> fds = {{listener_, POLLIN, 0}};  // then pairs: client, service
    while (!stop_) {
      if (poll(fds.data(), fds.size(), 50) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        const int client = accept(listener_, nullptr, nullptr);
        if (accepted_++ == 0) {
          close(client);
        } else {
          const int service = socket(AF_INET, SOCK_STREAM, 0);
          sockaddr_in addr = loopback(target_);
          connect(service, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
          fds.push_back({client, POLLIN, 0});
          fds.push_back({service, POLLIN, 0});
        }
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
        char buf[65536];
        const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
        const int other = fds[i % 2 == 1 ? i + 1 : i - 1].fd;
        if (n <= 0) {
          fds[i].events = 0;  // that side is done
        } else {
          [[maybe_unused]] auto w = write(other, buf, static_cast<size_t>(n));
        }
      }
    }
    for (size_t i = 1; i < fds.size(); ++i) close(fds[i].fd);
  }

  uint16_t target_;
  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

TEST_F(ServiceTest, ARegistrationClosedUnansweredIsMadeAgain) {
  start_service(1);
  DroppingProxy proxy(service_->port());
  auto cc = config(0);
  cc.address = "127.0.0.1:" + std::to_string(proxy.port());
  auto client = CoordClient::create(io_.context(), cc);
  EXPECT_NO_THROW(client->start());
  EXPECT_EQ(proxy.accepted(), 2);
  client->close();
}

TEST_F(ServiceTest, ARegistrationTooLargeForAStrangerIsRefusedNamingTheToken) {
  start_service(1, 10s, std::string(100000, 't'));
  auto cc = config(0);
  cc.auth_token = std::string(100000, 't');
  try {
    CoordClient::create(io_.context(), cc)->start();
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("auth token (100000 bytes)"), std::string::npos)
        << e.what();
  }
}

TEST_F(ServiceTest, ADroppedConnectionIsBroadcastAndFailsBlockedCalls) {
  start_service(3);
  auto clients = start_all();
  auto blocked = std::async(std::launch::async,
                            [&] { distributed::Client(clients[0]).wait_at_barrier("b", 30s); });
  std::this_thread::sleep_for(100ms);
  clients[2]->close();  // gone without shutdown, like a crash
  ASSERT_TRUE(failures_[0].wait(5s));
  ASSERT_TRUE(failures_[1].wait(5s));
  EXPECT_EQ(failures_[1].seen[0].process_id, 2);
  EXPECT_EQ(failures_[1].seen[0].host, "node2");
  EXPECT_EQ(failures_[1].seen[0].pid, 1002);
  EXPECT_NE(failures_[1].seen[0].to_string().find("process 2 (host node2, pid 1002) failed"),
            std::string::npos);
  EXPECT_THROW(blocked.get(), PeerFailure);
  EXPECT_THROW(distributed::Client(clients[1]).key_value_set("k", "v"), PeerFailure);
}

TEST_F(ServiceTest, ASilentProcessIsDeclaredDeadAfterTheHeartbeatTimeout) {
  start_service(2, 400ms);
  auto live = CoordClient::create(io_.context(), config(0));
  auto live_done = std::async(std::launch::async, [&] { return live->start(); });
  // Process 1 registers by hand and then never speaks again, like a stopped process.
  RawConnection silent(service_->port());
  silent.send_bytes(raw_registration(1, "frozen", 4242));
  live_done.get();
  const auto start = Clock::now();
  ASSERT_TRUE(failures_[0].wait(5s));
  EXPECT_GE(Clock::now() - start, 300ms);
  EXPECT_EQ(failures_[0].seen[0].process_id, 1);
  EXPECT_EQ(failures_[0].seen[0].host, "frozen");
  EXPECT_NE(failures_[0].seen[0].reason.find("no heartbeat"), std::string::npos);
}

// A registered process whose request does not parse (a key that is not UTF-8, from a client that
// does not check it) gets an error for that request and stays a member: the service used to
// declare it dead, and every process exited.
TEST_F(ServiceTest, AnUndecodableRequestIsAnsweredWithAnErrorAndTheProcessStaysAMember) {
  start_service(2);
  auto member = CoordClient::create(io_.context(), config(0));
  auto member_done = std::async(std::launch::async, [&] { return member->start(); });
  RawConnection raw(service_->port());
  raw.send_bytes(raw_registration(1, "raw", 4243));
  member_done.get();
  // A kv_set of key "\xff\xfe" (not UTF-8) as request 77, written field by field: protobuf's
  // serializer would refuse the string. Field 1 (request_id) varint; field 3 (kv_set) holding
  // field 1 (key) as bytes.
  const std::string key = "\xff\xfe";
  std::string kv_set = std::string{"\x0a"} + static_cast<char>(key.size()) + key;
  std::string request = std::string{"\x08"} + static_cast<char>(77) + "\x1a" +
                        static_cast<char>(kv_set.size()) + kv_set;
  wire::ClientMessage check;
  ASSERT_FALSE(check.ParseFromString(request)) << "the request must be undecodable";
  raw.send_bytes(encode_frame(request));
  std::optional<wire::ServerMessage> answer;
  while (const auto payload = raw.receive_frame()) {
    wire::ServerMessage m;
    if (m.ParseFromString(*payload) && m.request_id() == 77) {
      answer = m;
      break;
    }
  }
  ASSERT_TRUE(answer.has_value()) << "no answer to the undecodable request";
  EXPECT_EQ(answer->code(), wire::INVALID_ARGUMENT);
  EXPECT_NE(answer->message().find("could not decode this request"), std::string::npos);
  // Nobody was declared dead, and the member's calls still work.
  distributed::Client client(member);
  client.key_value_set("after", "yes");
  EXPECT_EQ(client.blocking_key_value_get("after", 2s), "yes");
  EXPECT_FALSE(failures_[0].wait(300ms)) << "a process was declared dead";
  EXPECT_FALSE(raw.closed_already());
}

TEST_F(ServiceTest, ShutdownWaitsForEveryProcessThenFinishes) {
  start_service(2);
  auto clients = start_all();
  auto s0 = std::async(std::launch::async, [&] { clients[0]->shutdown(5s); });
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(s0.wait_for(0ms), std::future_status::timeout);  // waits for process 1
  clients[1]->shutdown(5s);
  EXPECT_NO_THROW(s0.get());
  EXPECT_TRUE(service_->wait_until_finished(2s));
  EXPECT_TRUE(failures_[0].seen.empty());  // leaving after shutdown is not a failure
  EXPECT_TRUE(failures_[1].seen.empty());
}

TEST_F(ServiceTest, ShutdownBarrierTimesOutNamingWhoIsStillRunning) {
  start_service(2);
  auto clients = start_all();
  try {
    clients[0]->shutdown(300ms);
    FAIL();
  } catch (const DeadlineExceeded& e) {
    EXPECT_NE(std::string(e.what()).find("processes 1 never called shutdown()"), std::string::npos)
        << e.what();
  }
}

// Processes that call shutdown() while others still run are announced to those others, all of
// them, each once, in one notice or a few rather than one per leaver.
TEST_F(ServiceTest, EarlyLeaversAreAnnouncedToThoseStillRunning) {
  start_service(16);
  auto clients = start_all();
  std::vector<std::future<void>> leaving;
  leave(clients, 0, 8, leaving);
  const auto deadline = Clock::now() + 10s;
  auto all_heard = [&] {
    for (int q = 8; q < 16; ++q) {
      for (int p = 0; p < 8; ++p) {
        if (!clients[q]->has_left(p)) return false;
      }
    }
    return true;
  };
  while (!all_heard() && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(all_heard());
  for (int q = 8; q < 16; ++q) {
    EXPECT_EQ(clients[q]->leaving_count(), 8u) << "each leaver is announced once";
    EXPECT_FALSE(clients[q]->has_left(q));
    EXPECT_FALSE(clients[q]->has_left(15 - (q - 8)));  // the still running are not named
  }
  leave(clients, 8, 16, leaving);
  for (auto& f : leaving) EXPECT_NO_THROW(f.get());
  EXPECT_TRUE(service_->wait_until_finished(5s));
}

// At the end of a job everyone leaves within moments: nobody is told about anybody.
TEST_F(ServiceTest, ProcessesLeavingTogetherAreNotAnnounced) {
  start_service(16);
  auto clients = start_all();
  std::vector<std::future<void>> leaving;
  leave(clients, 0, 16, leaving);
  for (auto& f : leaving) EXPECT_NO_THROW(f.get());
  for (int p = 0; p < 16; ++p) EXPECT_EQ(clients[p]->leaving_count(), 0u);
}

TEST(ServiceLimits, AClusterLargerThanTheOpenFileLimitIsRefusedNamingTheLimit) {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_max > (1u << 20)) GTEST_SKIP() << "the hard open-file limit is too high to exceed";
  ServiceOptions so;
  so.num_processes = static_cast<int>(rl.rlim_max) + 1;
  so.bind_address = "127.0.0.1:0";
  try {
    CoordService service(so);
    FAIL() << "a service for more processes than descriptors was created";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("open files"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(rl.rlim_max)), std::string::npos);
  }
}

TEST_F(ServiceTest, ClientsDetectTheServicesDeath) {
  start_service(2);
  auto clients = start_all();
  service_->stop();
  ASSERT_TRUE(failures_[0].wait(5s));
  EXPECT_EQ(failures_[0].seen[0].process_id, -1);
  EXPECT_NE(failures_[0].seen[0].to_string().find("coordination service"), std::string::npos);
}

}  // namespace
}  // namespace spmd
