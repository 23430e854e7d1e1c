#include "spmd-bench/coordinator_bench.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/commanded_child.h"
#include "coord/open_file_limit.h"
#include "coord/status_query.h"
#include "coord/topology_codec.h"
#include "spmd-bench/sim_clients.h"
#include "spmd-bench/status_viewers.h"
#include "spmd-bench/tcp_fanout.h"
#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

using std::chrono::milliseconds;
using tools::CommandedChild;

constexpr int kClientsPerHelper = 4096;
constexpr milliseconds kPhaseTimeout{180000};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

double ms_between(int64_t from_ns, int64_t to_ns) {
  return static_cast<double>(to_ns - from_ns) / 1e6;
}

// A process's memory from /proc/PID/status (`field`: "VmHWM:", the peak resident set, or
// "VmRSS:", the current one), in MiB; -1 when it cannot be read.
double memory_mib(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    if (key == field) {
      double kib = 0;
      status >> kib;
      return kib / 1024;
    }
  }
  return -1;
}

double peak_rss_mib(pid_t pid) { return memory_mib(pid, "VmHWM:"); }

// The service process and the helpers of one simulated cluster.
class SimCluster {
 public:
  SimCluster(const CoordinatorBenchOptions& o, int helpers) : n_(o.processes) {
    const std::string exe = (self_dir() / "spmd-bench").string();
    std::vector<std::string> argv = {exe, "coordinator-service", "--processes", std::to_string(n_)};
    if (o.status_viewers > 0) argv.emplace_back("--status-page");
    service_ = std::make_unique<CommandedChild>("the service process", argv);
    const auto ready = service_->expect("ready", milliseconds(30000));
    const std::string address = "127.0.0.1:" + ready.at(0);
    page_port_ = std::stoi(ready.at(1));
    for (int h = 0; h < helpers; ++h) {
      const int first = static_cast<int>(static_cast<int64_t>(n_) * h / helpers);
      const int last = static_cast<int>(static_cast<int64_t>(n_) * (h + 1) / helpers);
      firsts_.push_back(first);
      helpers_.push_back(std::make_unique<CommandedChild>(
          "client helper " + std::to_string(h),
          std::vector<std::string>{exe, "coordinator-clients", "--address", address, "--processes",
                                   std::to_string(n_), "--first", std::to_string(first), "--count",
                                   std::to_string(last - first), "--threads",
                                   std::to_string(o.client_threads)}));
    }
  }

  int size() const { return n_; }
  int page_port() const { return page_port_; }
  CommandedChild& service() { return *service_; }
  std::vector<std::unique_ptr<CommandedChild>>& helpers() { return helpers_; }
  CommandedChild& owner_of_last() { return *helpers_.back(); }
  int helper_size(size_t h) const {
    const int end = h + 1 < firsts_.size() ? firsts_[h + 1] : n_;
    return end - firsts_[h];
  }

  // Sends `command` to every helper; the latest "done" time, and the failures in all.
  std::pair<int64_t, int> all_done(const std::string& command) {
    std::vector<std::string> ids;
    for (auto& h : helpers_) ids.push_back(h->send(command));
    return collect(ids, 0);
  }
  std::pair<int64_t, int> collect(const std::vector<std::string>& ids, size_t first_helper) {
    int64_t last = 0;
    int failures = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      const auto f = helpers_[first_helper + i]->await(ids[i], kPhaseTimeout);
      last = std::max<int64_t>(last, std::stoll(f.at(1)));
      failures += std::stoi(f.at(2));
    }
    return {last, failures};
  }

  // The service's counter at `field` of its stats answer (1: barrier arrivals, 2: shutdown
  // arrivals, 3: deaths, 4: dropped connections).
  uint64_t stat(int field) { return std::stoull(service_->call("stats", kPhaseTimeout).at(field)); }

  // The fan-out reference's sending end, connected to every helper.
  FanoutSender& fanout() { return fanout_; }

  double finish() {
    const double peak = peak_rss_mib(service_->pid());
    for (auto& h : helpers_) h->quit(milliseconds(20000));
    service_->quit(milliseconds(20000));
    return peak;
  }

 private:
  int n_;
  std::unique_ptr<CommandedChild> service_;
  std::vector<std::unique_ptr<CommandedChild>> helpers_;
  std::vector<int> firsts_;
  FanoutSender fanout_;
  int page_port_ = 0;
};

// Connects the fan-out reference: one receiver per simulated process, in its helper.
void connect_fanout(SimCluster& c) {
  std::vector<std::string> ids;
  for (auto& h : c.helpers())
    ids.push_back(h->send("floor-connect " + std::to_string(c.fanout().port())));
  if (!c.fanout().accept(c.size(), kPhaseTimeout)) {
    throw std::runtime_error("the fan-out receivers did not all connect");
  }
  for (size_t i = 0; i < ids.size(); ++i) c.helpers()[i]->await(ids[i], kPhaseTimeout);
}

// Fan-out round `round`: the time from the first write until the last receiver has its message.
double fanout_round_ms(SimCluster& c, int round) {
  const int64_t t0 = c.fanout().send_round();
  int64_t last = 0;
  for (auto& h : c.helpers()) {
    const auto f = h->call("floor-wait " + std::to_string(round), kPhaseTimeout);
    last = std::max<int64_t>(last, std::stoll(f.at(1)));
    if (std::stoll(f.at(1)) <= 0) {
      throw std::runtime_error("a fan-out receiver missed round " + std::to_string(round));
    }
  }
  return ms_between(t0, last);
}

struct Round {
  double release_ms = 0;  // from the last arrival until every process is released
  double round_ms = 0;    // from the first arrival
};

// One round of a barrier-like call (`verb`: barrier or shutdown) measured as a textbook barrier:
// N-1 processes arrive; once the service has counted them (its stats `field`), the last one
// arrives, and the release is timed from then.
Round barrier_round(SimCluster& c, const std::string& verb, int field) {
  const int n = c.size();
  const uint64_t before = c.stat(field);
  const int64_t start = monotonic_ns();
  std::vector<std::string> ids;
  for (auto& h : c.helpers()) ids.push_back(h->send(verb + " 0 " + std::to_string(n - 1)));
  const auto deadline = std::chrono::steady_clock::now() + kPhaseTimeout;
  while (c.stat(field) < before + static_cast<uint64_t>(n - 1)) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error(verb + ": the service never counted N-1 arrivals");
    }
  }
  const int64_t last_arrival = monotonic_ns();
  const std::string last_id = c.owner_of_last().send(verb + " " + std::to_string(n - 1) + " 1");
  auto [end, failures] = c.collect(ids, 0);
  const auto f = c.owner_of_last().await(last_id, kPhaseTimeout);
  end = std::max<int64_t>(end, std::stoll(f.at(1)));
  failures += std::stoi(f.at(2));
  if (failures > 0) throw std::runtime_error(verb + ": " + std::to_string(failures) + " failed");
  return {ms_between(last_arrival, end), ms_between(start, end)};
}

double registration_s(SimCluster& c) {
  const int64_t t0 = monotonic_ns();
  const auto [end, failures] = c.all_done("start");
  if (failures > 0) {
    throw std::runtime_error("registration: " + std::to_string(failures) + " processes failed");
  }
  return ms_between(t0, end) / 1000;
}

// What each process pays for the topology, beside the service's side the cluster measures: the
// simulated clients skip decoding it (coord_client.h, decode_topology), so one decode of the same
// topology (same hosts and pids as the simulation) is timed here.
nlohmann::json topology_costs(int n) {
  wire::Topology t;
  for (int p = 0; p < n; ++p) {
    if (p % kSimProcessesPerHost == 0) {
      auto* h = t.add_hosts();
      h->set_host_id(sim_host_id(p));
      h->set_hostname(h->host_id());
    }
    t.add_host_index(p / kSimProcessesPerHost);
    t.add_pid(sim_pid(p));
    t.add_device_count(1);
    t.add_local_hardware_id(0);
    t.add_platform_index(0);
  }
  t.add_platforms("cpu");
  const size_t plain = t.ByteSizeLong();
  wire::ServerMessage msg;
  const int64_t t0 = monotonic_ns();
  pack_topology(t, msg);
  const int64_t t1 = monotonic_ns();
  std::vector<double> decode;
  for (int i = 0; i < 11; ++i) {
    const int64_t d0 = monotonic_ns();
    auto unpacked = unpack_topology(msg);
    decode.push_back(ms_between(d0, monotonic_ns()));
    if (!std::holds_alternative<wire::Topology>(unpacked)) {
      throw std::runtime_error("the topology does not decode");
    }
  }
  nlohmann::json r;
  r["topology_plain_bytes"] = plain;
  r["topology_wire_bytes"] = msg.topology_zstd().size();
  r["topology_pack_ms"] = ms_between(t0, t1);
  r["topology_decode_ms"] = median(decode);
  return r;
}

// Barrier rounds interleaved with fan-out rounds, so that each ratio compares two measurements
// taken a moment apart on this machine, whose speed drifts from minute to minute.
void barrier_rounds(SimCluster& c, int rounds, nlohmann::json& r) {
  std::vector<double> release;
  std::vector<double> whole;
  std::vector<double> floor;
  std::vector<double> ratio;
  for (int i = 0; i < rounds; ++i) {
    const Round b = barrier_round(c, "barrier", 1);
    floor.push_back(fanout_round_ms(c, i));
    release.push_back(b.release_ms);
    whole.push_back(b.round_ms);
    ratio.push_back(b.release_ms / floor.back());
  }
  r["barrier_p50_ms"] = median(release);
  r["barrier_p99_ms"] = percentile(release, 0.99);
  r["barrier_round_p50_ms"] = median(whole);
  r["tcp_fanout_floor_ms"] = median(floor);
  r["barrier_to_fanout_p50"] = median(ratio);
}

// One process's round trips to the service, timed by its helper: {p50, p99, max} in ms.
nlohmann::json round_trips(SimCluster& c) {
  const auto f = c.helpers().front()->call("rtt 1000 5", kPhaseTimeout);
  return {{"p50_ms", std::stod(f.at(1))},
          {"p99_ms", std::stod(f.at(2))},
          {"max_ms", std::stod(f.at(3))}};
}

// The time status_json() takes to write the table the viewers last saw (median of 5): what the
// page's thread spends once a second. -1 when they saw none.
double status_json_build_ms(const std::string& json) {
  const auto doc = nlohmann::json::parse(json, nullptr, false);
  if (!doc.is_object()) return -1;
  wire::StatusTable table;
  table.set_num_processes(doc["num_processes"].get<int>());
  for (const auto& r : doc["processes"]) {
    auto* row = table.add_processes();
    row->set_process_id(r["process"].get<int>());
    row->set_hostname(r["host"].get<std::string>());
    row->set_pid(r["pid"].get<int64_t>());
    row->set_call(r["call"].get<std::string>());
    row->set_since_ms(r["since_ms"].get<int64_t>());
    row->set_heartbeat_age_ms(r["heartbeat_age_ms"].get<int64_t>());
    for (int w : r["waiting_for"]) row->add_waiting_for(w);
    row->set_waited_for_by(r["waited_for_by"].get<int>());
    row->set_detail(r["detail"].get<std::string>());
    row->set_state(r["state"] == "blocked" ? wire::PROCESS_BLOCKED : wire::PROCESS_RUNNING);
  }
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    ms.push_back(seconds_of([&] { status_json(table); }) * 1000);
  }
  return percentile(ms, 0.5);
}

// The status phase (coordinator_bench.h, 3.).
nlohmann::json status_phase(SimCluster& c, int viewers) {
  nlohmann::json r;
  r["viewers"] = viewers;
  r["round_trip_alone"] = round_trips(c);
  const double rss_alone = memory_mib(c.service().pid(), "VmRSS:");
  StatusViewers page(c.page_port(), viewers);
  r["round_trip_with_viewers"] = round_trips(c);
  const double rss_viewed = memory_mib(c.service().pid(), "VmRSS:");
  const StatusViewers::Seen seen = page.stop();
  r["service_rss_alone_mib"] = rss_alone;
  r["service_rss_viewed_mib"] = rss_viewed;
  r["status_json_bytes"] = seen.last_json.size();
  r["status_json_build_ms"] = status_json_build_ms(seen.last_json);
  r["status_json_answers"] = seen.wait_ms.size();
  r["status_json_wait_p50_ms"] = percentile(seen.wait_ms, 0.5);
  r["status_json_wait_max_ms"] = percentile(seen.wait_ms, 1.0);
  r["status_json_failures"] = seen.failures;
  return r;
}

nlohmann::json run_clean(const CoordinatorBenchOptions& o, int helpers) {
  SimCluster c(o, helpers);
  nlohmann::json r;
  connect_fanout(c);
  r["init_s"] = registration_s(c);
  barrier_rounds(c, o.barrier_rounds, r);
  if (o.status_viewers > 0) r["status_page"] = status_phase(c, o.status_viewers);
  const int64_t kv0 = monotonic_ns();
  const auto [kv_end, kv_failures] = c.all_done("kv");
  if (kv_failures > 0) throw std::runtime_error("the key-value round failed");
  r["kv_round_ms"] = ms_between(kv0, kv_end);
  const Round s = barrier_round(c, "shutdown", 2);
  r["shutdown_ms"] = s.release_ms;
  r["shutdown_round_ms"] = s.round_ms;
  if (c.stat(3) != 0) throw std::runtime_error("the service declared processes dead");
  r["service_peak_rss_mib"] = c.finish();
  r.update(topology_costs(o.processes));
  return r;
}

// Half the helpers (so about half the processes) are killed at once after registration.
nlohmann::json run_mass_failure(const CoordinatorBenchOptions& o, int helpers) {
  SimCluster c(o, helpers);
  registration_s(c);
  const size_t killed = c.helpers().size() / 2;
  int killed_processes = 0;
  const int64_t t_kill = monotonic_ns();
  for (size_t h = 0; h < killed; ++h) {
    c.helpers()[h]->kill_now();
    killed_processes += c.helper_size(h);
  }
  int64_t last_heard = 0;
  int heard = 0;
  int service_lost = 0;
  for (size_t h = killed; h < c.helpers().size(); ++h) {
    const int expected = c.helper_size(h);
    const auto f =
        c.helpers()[h]->call("wait-heard " + std::to_string(expected) + " 60000", kPhaseTimeout);
    heard += std::stoi(f.at(1));
    last_heard = std::max<int64_t>(last_heard, std::stoll(f.at(2)));
    service_lost += std::stoi(f.at(3));
  }
  // Every killed process is dead once, and nobody else: poll until the count settles.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  uint64_t deaths = 0;
  while ((deaths = c.stat(3)) < static_cast<uint64_t>(killed_processes) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  nlohmann::json r;
  r["killed"] = killed_processes;
  r["survivors"] = c.size() - killed_processes;
  r["survivors_told"] = heard;
  r["told_service_lost"] = service_lost;
  r["all_told_ms"] = ms_between(t_kill, last_heard);
  r["deaths_counted"] = deaths;
  r["service_peak_rss_mib"] = c.finish();
  r["ok"] = heard == c.size() - killed_processes && service_lost == 0 &&
            deaths == static_cast<uint64_t>(killed_processes);
  return r;
}

void print_text(const CoordinatorBenchOptions& o, int helpers, const nlohmann::json& clean,
                const nlohmann::json& mass) {
  std::printf(
      "coordinator benchmark: %d simulated processes in %d helper processes, the service "
      "in its own\n",
      o.processes, helpers);
  std::printf("  time to a fully initialised cluster: %.3f s\n", clean["init_s"].get<double>());
  std::printf(
      "  barrier release (last arrival to all released), %d rounds: p50 %.3f ms, p99 %.3f ms\n",
      o.barrier_rounds, clean["barrier_p50_ms"].get<double>(),
      clean["barrier_p99_ms"].get<double>());
  std::printf(
      "  reference, interleaved with the barriers: raw TCP fan-out of 16 bytes to %d "
      "connections: p50 %.3f ms; barrier / fan-out, median of the rounds: %.2f\n",
      o.processes, clean["tcp_fanout_floor_ms"].get<double>(),
      clean["barrier_to_fanout_p50"].get<double>());
  std::printf("  barrier round (first arrival to all released): p50 %.3f ms\n",
              clean["barrier_round_p50_ms"].get<double>());
  std::printf("  key-value round (set + blocking get of a neighbour's key): %.3f ms\n",
              clean["kv_round_ms"].get<double>());
  std::printf(
      "  shutdown barrier release: %.3f ms (shutdown / barrier %.2f); whole round %.3f ms\n",
      clean["shutdown_ms"].get<double>(),
      clean["shutdown_ms"].get<double>() / clean["barrier_p50_ms"].get<double>(),
      clean["shutdown_round_ms"].get<double>());
  std::printf("  service peak memory: %.1f MiB\n", clean["service_peak_rss_mib"].get<double>());
  std::printf(
      "  topology: %zu bytes on the wire to each process (%zu plain), packed once in "
      "%.3f ms; each process decodes it in %.3f ms (not in the initialisation time above: "
      "the simulated clients skip it, real processes do it in parallel)\n",
      clean["topology_wire_bytes"].get<size_t>(), clean["topology_plain_bytes"].get<size_t>(),
      clean["topology_pack_ms"].get<double>(), clean["topology_decode_ms"].get<double>());
  if (clean.contains("status_page")) {
    const auto& s = clean["status_page"];
    std::printf(
        "  status page, %d viewers: a process's round trip p50/p99/max %.3f/%.3f/%.3f ms alone, "
        "%.3f/%.3f/%.3f ms with them; status.json %zu bytes, written in %.1f ms, waited for %.1f "
        "ms (p50), %.1f (max), %d failed; service memory %.1f MiB alone, %.1f viewed\n",
        s["viewers"].get<int>(), s["round_trip_alone"]["p50_ms"].get<double>(),
        s["round_trip_alone"]["p99_ms"].get<double>(),
        s["round_trip_alone"]["max_ms"].get<double>(),
        s["round_trip_with_viewers"]["p50_ms"].get<double>(),
        s["round_trip_with_viewers"]["p99_ms"].get<double>(),
        s["round_trip_with_viewers"]["max_ms"].get<double>(), s["status_json_bytes"].get<size_t>(),
        s["status_json_build_ms"].get<double>(), s["status_json_wait_p50_ms"].get<double>(),
        s["status_json_wait_max_ms"].get<double>(), s["status_json_failures"].get<int>(),
        s["service_rss_alone_mib"].get<double>(), s["service_rss_viewed_mib"].get<double>());
  }
  if (mass.is_null()) return;
  std::printf(
      "  mass failure: %d of %d killed at once; %d of %d survivors told within %.3f ms; "
      "%llu deaths counted; service peak memory %.1f MiB; %s\n",
      mass["killed"].get<int>(), o.processes, mass["survivors_told"].get<int>(),
      mass["survivors"].get<int>(), mass["all_told_ms"].get<double>(),
      static_cast<unsigned long long>(mass["deaths_counted"].get<uint64_t>()),
      mass["service_peak_rss_mib"].get<double>(), mass["ok"].get<bool>() ? "ok" : "FAILED");
}

}  // namespace

int run_coordinator_bench(const CoordinatorBenchOptions& options) {
  const int n = options.processes;
  try {
    raise_open_file_limit(
        n + 256,
        "spmd-bench coordinator");  // the fan-out reference's sending end holds one per process
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spmd-bench coordinator: %s\n", e.what());
    return 1;
  }
  int helpers = options.helpers > 0 ? options.helpers
                                    : std::max(2, (n + kClientsPerHelper - 1) / kClientsPerHelper);
  helpers = std::min(helpers, n);
  try {
    const nlohmann::json clean = run_clean(options, helpers);
    nlohmann::json mass;
    if (options.mass_failure && helpers >= 2) mass = run_mass_failure(options, helpers);
    if (options.json) {
      nlohmann::json out = clean;
      out["processes"] = n;
      out["helpers"] = helpers;
      if (!mass.is_null()) out["mass_failure"] = mass;
      std::printf("%s\n", out.dump().c_str());
    } else {
      print_text(options, helpers, clean, mass);
    }
    return mass.is_null() || mass["ok"].get<bool>() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spmd-bench coordinator: %s\n", e.what());
    return 1;
  }
}

}  // namespace spmd::bench
