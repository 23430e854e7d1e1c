#include "spmd-bench/coordinator_bench.h"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "coord/coord_client.h"
#include "coord/service.h"
#include "spmd-bench/tcp_fanout_floor.h"

namespace spmd::bench {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Counts completions of N asynchronous operations and lets one thread wait for them all.
class Latch {
 public:
  explicit Latch(int n) : left_(n) {}
  void count_down(bool ok) {
    std::lock_guard lock(mu_);
    if (!ok) ++failures_;
    if (--left_ == 0) cv_.notify_all();
  }
  // Returns the number of failures, or -1 on timeout.
  int wait(milliseconds timeout) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return left_ == 0; })) return -1;
    return failures_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int left_;
  int failures_ = 0;
};

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  return v[i];
}

bool raise_fd_limit(int needed) {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur >= static_cast<rlim_t>(needed)) return true;
  rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, static_cast<rlim_t>(needed));
  setrlimit(RLIMIT_NOFILE, &rl);
  getrlimit(RLIMIT_NOFILE, &rl);
  return rl.rlim_cur >= static_cast<rlim_t>(needed);
}

}  // namespace

int run_coordinator_bench(const CoordinatorBenchOptions& options) {
  const int n = options.processes;
  if (!raise_fd_limit(2 * n + 256)) {
    std::fprintf(stderr, "spmd-bench: need %d open files; raise 'ulimit -n'\n", 2 * n + 256);
    return 1;
  }
  // The physical reference first, on connections of its own that are closed again.
  const double floor_ms = tcp_fanout_floor_ms(n, std::max(5, options.barrier_rounds));
  ServiceOptions so;
  so.num_processes = n;
  so.bind_address = "127.0.0.1:0";
  CoordService service(so);
  service.start();

  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::vector<std::thread> threads;
  threads.reserve(options.client_threads);
  for (int t = 0; t < options.client_threads; ++t) {
    threads.emplace_back([&] {
      pthread_setname_np(pthread_self(), "bench-clients");
      io.run();
    });
  }

  std::vector<std::shared_ptr<CoordClient>> clients;
  clients.reserve(n);
  std::atomic<int> peer_failures{0};
  for (int i = 0; i < n; ++i) {
    ClientConfig cc;
    cc.address = "127.0.0.1:" + std::to_string(service.port());
    cc.process_id = i;
    cc.num_processes = n;
    cc.host_id = "bench-host";
    cc.hostname = "bench-host";
    cc.pid = getpid();
    wire::DeviceInfo d;
    d.set_local_hardware_id(0);
    d.set_platform("cpu");
    cc.devices.push_back(d);
    cc.initialization_timeout = std::chrono::seconds(120);
    cc.on_failure = [&](const distributed::PeerFailureInfo&) { ++peer_failures; };
    clients.push_back(CoordClient::create(io, std::move(cc)));
  }

  int status = 0;
  auto fail = [&](const char* what) {
    std::fprintf(stderr, "spmd-bench coordinator: %s\n", what);
    status = 1;
  };

  // Registration and topology exchange, until every client holds the topology.
  const auto t0 = Clock::now();
  Latch registered(n);
  for (auto& c : clients) {
    c->async_start([&](const Status& s, const wire::Topology& t) {
      registered.count_down(s.ok() && t.host_index_size() == n);
    });
  }
  if (registered.wait(std::chrono::seconds(180)) != 0) fail("registration failed or timed out");
  const double init_s = std::chrono::duration<double>(Clock::now() - t0).count();

  // Barriers. Latency is the textbook one: from the last process's arrival until every process
  // has heard the barrier complete. N-1 clients arrive first; once the service has counted them,
  // the last one arrives. The round time (first arrival to all released, including this one
  // thread issuing N requests in turn, which real processes do in parallel) is reported too.
  std::vector<double> barrier_ms;
  std::vector<double> round_ms;
  for (int r = 0; r < options.barrier_rounds && status == 0; ++r) {
    Latch done(n);
    auto arrive = [&](CoordClient& c) {
      wire::ClientMessage msg;
      msg.mutable_barrier()->set_id("bench");
      msg.mutable_barrier()->set_timeout_ms(60000);
      c.async_call(std::move(msg),
                   [&](const wire::ServerMessage& m) { done.count_down(m.code() == wire::OK); });
    };
    const uint64_t before = service.stats().barrier_arrivals;
    const auto round_start = Clock::now();
    for (int i = 0; i + 1 < n; ++i) arrive(*clients[i]);
    const auto wait_until = Clock::now() + std::chrono::seconds(60);
    while (service.stats().barrier_arrivals < before + static_cast<uint64_t>(n - 1) &&
           Clock::now() < wait_until) {
      std::this_thread::yield();
    }
    const auto last_arrival = Clock::now();
    arrive(*clients[n - 1]);
    if (done.wait(std::chrono::seconds(120)) != 0) fail("a barrier failed or timed out");
    const auto end = Clock::now();
    barrier_ms.push_back(std::chrono::duration<double, std::milli>(end - last_arrival).count());
    round_ms.push_back(std::chrono::duration<double, std::milli>(end - round_start).count());
  }

  // One key-value round: every client publishes a key, then waits for its neighbour's.
  double kv_ms = 0;
  if (status == 0) {
    Latch done(n);
    const auto start = Clock::now();
    for (int i = 0; i < n; ++i) {
      wire::ClientMessage set;
      set.mutable_kv_set()->set_key("bench/" + std::to_string(i));
      set.mutable_kv_set()->set_value(std::string(32, 'x'));
      clients[i]->async_call(std::move(set), [](const wire::ServerMessage&) {});
      wire::ClientMessage get;
      get.mutable_kv_get()->set_key("bench/" + std::to_string((i + 1) % n));
      get.mutable_kv_get()->set_blocking(true);
      get.mutable_kv_get()->set_timeout_ms(60000);
      clients[i]->async_call(std::move(get), [&](const wire::ServerMessage& m) {
        done.count_down(m.code() == wire::OK && m.value().size() == 32);
      });
    }
    if (done.wait(std::chrono::seconds(120)) != 0) fail("the key-value round failed");
    kv_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  }

  // Shut down like real processes: the shutdown barrier, then disconnect.
  Latch left(n);
  for (auto& c : clients) {
    wire::ClientMessage msg;
    msg.mutable_shutdown()->set_timeout_ms(60000);
    c->async_call(std::move(msg),
                  [&](const wire::ServerMessage& m) { left.count_down(m.code() == wire::OK); });
  }
  if (left.wait(std::chrono::seconds(120)) != 0) fail("the shutdown barrier failed");
  for (auto& c : clients) c->close();
  if (peer_failures > 0) fail("clients heard of peer failures");
  service.stop();
  work.reset();
  io.stop();
  for (auto& t : threads) t.join();

  if (barrier_ms.empty()) barrier_ms.push_back(0);
  if (round_ms.empty()) round_ms.push_back(0);
  const double p50 = percentile(barrier_ms, 0.5);
  const double p99 = percentile(barrier_ms, 0.99);
  const double round_p50 = percentile(round_ms, 0.5);
  if (options.json) {
    std::printf(
        "{\"processes\": %d, \"init_s\": %.4f, \"barrier_p50_ms\": %.3f, \"barrier_p99_ms\": "
        "%.3f, \"barrier_round_p50_ms\": %.3f, \"kv_round_ms\": %.3f, "
        "\"tcp_fanout_floor_ms\": %.3f, \"ok\": %s}\n",
        n, init_s, p50, p99, round_p50, kv_ms, floor_ms, status == 0 ? "true" : "false");
  } else {
    std::printf("coordinator benchmark: %d simulated processes, %d client thread(s)\n", n,
                options.client_threads);
    std::printf("  time to a fully initialised cluster: %.3f s\n", init_s);
    std::printf(
        "  barrier latency (last arrival to all released) over %zu rounds: p50 %.3f ms, "
        "p99 %.3f ms\n",
        barrier_ms.size(), p50, p99);
    std::printf(
        "  barrier round (first arrival to all released, N arrivals issued by one "
        "thread): p50 %.3f ms\n",
        round_p50);
    std::printf("  key-value round (set + blocking get of a neighbour's key): %.3f ms\n", kv_ms);
    std::printf(
        "  reference, same run: raw loopback TCP fan-out of one 16-byte message to %d "
        "connections, p50 %.3f ms\n",
        n, floor_ms);
  }
  return status;
}

}  // namespace spmd::bench
