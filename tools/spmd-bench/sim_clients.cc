#include "spmd-bench/sim_clients.h"

#include <fmt/format.h>
#include <pthread.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "common/line_channel.h"
#include "coord/coord_client.h"
#include "coord/open_file_limit.h"
#include "spmd-bench/tcp_fanout.h"

namespace spmd::bench {
namespace {

using std::chrono::milliseconds;

// Counts the completions of one command's asynchronous calls and answers it after the last.
class Completion {
 public:
  Completion(tools::LineChannel& out, std::string id, int expected)
      : out_(out), id_(std::move(id)), left_(expected) {
    if (expected == 0) answer();
  }
  void count_down(bool ok) {
    std::lock_guard lock(mu_);
    if (!ok) ++failures_;
    last_ns_ = std::max(last_ns_, monotonic_ns());
    if (--left_ == 0) answer();
  }

 private:
  void answer() {
    out_.write_line(id_ + " done " + std::to_string(last_ns_) + " " + std::to_string(failures_));
  }
  tools::LineChannel& out_;
  std::string id_;
  std::mutex mu_;
  int left_;
  int failures_ = 0;
  int64_t last_ns_ = 0;
};

class SimClients {
 public:
  SimClients(const SimClientsOptions& options, tools::LineChannel& out)
      : opts_(options), out_(out), work_(asio::make_work_guard(io_)) {
    for (int t = 0; t < opts_.threads; ++t) {
      threads_.emplace_back([this] {
        pthread_setname_np(pthread_self(), "sim-clients");
        io_.run();
      });
    }
    for (int i = 0; i < opts_.count; ++i) clients_.push_back(make_client(opts_.first + i));
  }

  ~SimClients() {
    for (auto& c : clients_) c->close();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }

  // Returns false on `quit`.
  // Runs one command line; false on `quit`.
  bool handle(const std::string& line) {
    std::istringstream in(line);
    std::string id;
    std::string verb;
    in >> id >> verb;
    int a = 0;
    int b = 0;
    if (verb == "quit") return false;
    if (verb == "start") {
      start(id);
    } else if (verb == "barrier" && in >> a >> b) {
      barrier(id, a, b);
    } else if (verb == "kv") {
      kv(id);
    } else if (verb == "shutdown" && in >> a >> b) {
      shutdown(id, a, b);
    } else if (verb == "wait-heard" && in >> a >> b) {
      wait_heard(id, a, milliseconds(b));
    } else if (verb == "floor-connect" && in >> a) {
      floor_connect(id, a);
    } else if (verb == "floor-wait" && in >> a) {
      floor_wait(id, a);
    } else if (verb == "floor-close") {
      fanout_.reset();
      out_.write_line(id + " ok");
    } else if (verb == "rtt" && in >> a >> b) {
      round_trips(id, a, milliseconds(b));
    } else if (verb == "close") {
      close_all(id);
    } else {
      out_.write_line(id + " error unknown command: " + line);
    }
    return true;
  }

 private:
  std::shared_ptr<CoordClient> make_client(int process) {
    ClientConfig cc;
    cc.address = opts_.address;
    cc.process_id = process;
    cc.num_processes = opts_.num_processes;
    // A cluster of hosts of kProcessesPerHost processes each, with pids as a launcher hands
    // them out: nearby on one host, unrelated across hosts (the topology's realistic size).
    cc.host_id = sim_host_id(process);
    cc.hostname = cc.host_id;
    cc.pid = sim_pid(process);
    wire::DeviceInfo d;
    d.set_local_hardware_id(0);
    d.set_platform("cpu");
    cc.devices.push_back(d);
    cc.initialization_timeout = std::chrono::seconds(120);
    cc.heartbeat_timeout = milliseconds(opts_.heartbeat_timeout_ms);
    // One client per helper decodes the topology (start checks it names every process); the
    // others skip it, as coord_client.h explains, and the driver times one decode separately.
    cc.decode_topology = process == opts_.first;
    cc.on_failure = [this](const FailureReport& info) { heard(info); };
    return CoordClient::create(io_, std::move(cc));
  }

  void heard(const FailureReport& info) {
    std::lock_guard lock(heard_mu_);
    ++heard_;
    if (info.process_id < 0) ++service_lost_;
    heard_last_ns_ = monotonic_ns();
    heard_cv_.notify_all();
  }

  // This helper's clients whose process ids lie in [first, first + count).
  std::vector<CoordClient*> range(int first, int count) {
    std::vector<CoordClient*> out;
    const int lo = std::max(first, opts_.first);
    const int hi = std::min(first + count, opts_.first + opts_.count);
    for (int p = lo; p < hi; ++p)
      out.push_back(clients_[static_cast<size_t>(p - opts_.first)].get());
    return out;
  }

  void start(const std::string& id) {
    auto done = std::make_shared<Completion>(out_, id, opts_.count);
    const int n = opts_.num_processes;
    for (auto& c : clients_) {
      const bool decodes = c->config().decode_topology;
      c->async_start([done, n, decodes](const Status& s, const wire::Topology& t) {
        done->count_down(s.ok() && (!decodes || t.host_index_size() == n));
      });
    }
  }

  void call_each(const std::string& id, const std::vector<CoordClient*>& clients,
                 const wire::ClientMessage& msg) {
    auto done = std::make_shared<Completion>(out_, id, static_cast<int>(clients.size()));
    for (CoordClient* c : clients) {
      c->async_call(
          msg, [done](const wire::ServerMessage& m) { done->count_down(m.code() == wire::OK); });
    }
  }

  void barrier(const std::string& id, int first, int count) {
    wire::ClientMessage msg;
    msg.mutable_barrier()->set_id("bench");
    msg.mutable_barrier()->set_timeout_ms(120000);
    call_each(id, range(first, count), msg);
  }

  void shutdown(const std::string& id, int first, int count) {
    wire::ClientMessage msg;
    msg.mutable_shutdown()->set_timeout_ms(120000);
    call_each(id, range(first, count), msg);
  }

  void kv(const std::string& id) {
    auto done = std::make_shared<Completion>(out_, id, opts_.count);
    const int n = opts_.num_processes;
    for (int i = 0; i < opts_.count; ++i) {
      const int p = opts_.first + i;
      wire::ClientMessage set;
      set.mutable_kv_set()->set_key("bench/" + std::to_string(p));
      set.mutable_kv_set()->set_value(std::string(32, 'x'));
      clients_[static_cast<size_t>(i)]->async_call(std::move(set),
                                                   [](const wire::ServerMessage&) {});
      wire::ClientMessage get;
      get.mutable_kv_get()->set_key("bench/" + std::to_string((p + 1) % n));
      get.mutable_kv_get()->set_blocking(true);
      get.mutable_kv_get()->set_timeout_ms(120000);
      clients_[static_cast<size_t>(i)]->async_call(
          std::move(get), [done](const wire::ServerMessage& m) {
            done->count_down(m.code() == wire::OK && m.value().size() == 32);
          });
    }
  }

  void wait_heard(const std::string& id, int expected, milliseconds timeout) {
    std::unique_lock lock(heard_mu_);
    heard_cv_.wait_for(lock, timeout, [&] { return heard_ >= expected; });
    out_.write_line(id + " heard " + std::to_string(heard_) + " " + std::to_string(heard_last_ns_) +
                    " " + std::to_string(service_lost_));
  }

  void floor_connect(const std::string& id, int port) {
    try {
      fanout_ = std::make_unique<FanoutReceivers>(port, opts_.count);
      out_.write_line(id + " ok");
    } catch (const std::exception& e) {
      out_.write_line(id + " error " + e.what());
    }
  }

  void floor_wait(const std::string& id, int round) {
    const int64_t t = fanout_ ? fanout_->wait_round(round, std::chrono::seconds(60)) : -1;
    out_.write_line(id + " t " + std::to_string(t));
  }

  void round_trips(const std::string& id, int count, milliseconds gap) {
    std::vector<double> ms;
    ms.reserve(static_cast<size_t>(count));
    wire::ClientMessage get;
    get.mutable_kv_get()->set_key("bench/rtt/never-set");
    for (int i = 0; i < count; ++i) {
      const int64_t t0 = monotonic_ns();
      try {
        clients_.front()->call(get, milliseconds(10000));
      } catch (const std::exception&) {
        // A missing key is an error answer: the round trip is what counts.
      }
      ms.push_back(static_cast<double>(monotonic_ns() - t0) / 1e6);
      std::this_thread::sleep_for(gap);
    }
    std::sort(ms.begin(), ms.end());
    const auto at = [&](double q) {
      return ms[static_cast<size_t>(q * static_cast<double>(ms.size() - 1))];
    };
    out_.write_line(fmt::format("{} rtt {:.3f} {:.3f} {:.3f}", id, at(0.5), at(0.99), ms.back()));
  }

  void close_all(const std::string& id) {
    for (auto& c : clients_) c->close();
    out_.write_line(id + " ok");
  }

  SimClientsOptions opts_;
  tools::LineChannel& out_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  std::vector<std::shared_ptr<CoordClient>> clients_;
  std::unique_ptr<FanoutReceivers> fanout_;
  std::mutex heard_mu_;
  std::condition_variable heard_cv_;
  int heard_ = 0;
  int service_lost_ = 0;
  int64_t heard_last_ns_ = 0;
};

}  // namespace

std::string sim_host_id(int process) {
  return "bench-host-" + std::to_string(process / kSimProcessesPerHost);
}

int64_t sim_pid(int process) {
  const int host = process / kSimProcessesPerHost;
  return 1000 + (static_cast<int64_t>(host) * 7919) % 90000 +
         int64_t{3} * (process % kSimProcessesPerHost);
}

int run_sim_clients(const SimClientsOptions& options) {
  // stdout carries the answers: logs go to stderr, and only warnings and worse.
  spdlog::set_default_logger(spdlog::stderr_color_mt("sim-clients"));
  spdlog::set_level(spdlog::level::warn);
  tools::LineChannel channel(STDIN_FILENO, STDOUT_FILENO, false);
  try {
    raise_open_file_limit(
        2 * options.count + 256,
        "spmd-bench coordinator-clients");  // a client's socket, and a fan-out receiver's
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spmd-bench coordinator-clients: %s\n", e.what());
    return 1;
  }
  SimClients clients(options, channel);
  while (true) {
    // The driver always has a deadline of its own; a day here only bounds an orphaned helper.
    const auto line = channel.read_line(std::chrono::hours(24));
    if (!line || !clients.handle(*line)) return 0;
  }
}

}  // namespace spmd::bench
