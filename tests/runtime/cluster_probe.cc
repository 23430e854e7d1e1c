// A program the multi-process tests run as real cluster processes. It joins the cluster the
// way users do and then does what its mode says, printing one line per fact for the test to
// check. Errors print as "error <Class>: <message>" and exit 1.
//
//   cluster_probe MODE [--address A --num N --id I] [--token T] [--init-timeout S] [--heartbeat S]
//
// Modes: report, barrier (everyone but the last process waits at a barrier; the last one
// sleeps), uncaught (like barrier, but the error leaves main() uncaught), handler (like barrier,
// with on_peer_failure set), double-init, query-then-init, init, kv-exchange, external, steps
// (all_reduce of 64 floats, step after step, for --seconds S as process 0 counts them; prints
// "steps N in T s").
#include <spmd/spmd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

const char* class_of(const spmd::Error& e) {
  if (dynamic_cast<const spmd::InvalidArgument*>(&e)) return "InvalidArgument";
  if (dynamic_cast<const spmd::DeadlineExceeded*>(&e)) return "DeadlineExceeded";
  if (dynamic_cast<const spmd::PeerFailure*>(&e)) return "PeerFailure";
  if (dynamic_cast<const spmd::FailedPrecondition*>(&e)) return "FailedPrecondition";
  if (dynamic_cast<const spmd::AlreadyExists*>(&e)) return "AlreadyExists";
  if (dynamic_cast<const spmd::PermissionDenied*>(&e)) return "PermissionDenied";
  return "Error";
}

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void report() {
  say("process " + std::to_string(spmd::process_index()) + " of " +
      std::to_string(spmd::process_count()));
  std::string list = "devices:";
  for (const auto& d : spmd::devices()) {
    list += " " + std::to_string(d.id()) + "@" + std::to_string(d.process_index()) + ":" +
            std::to_string(d.local_hardware_id());
  }
  say(list);
  say("local " + std::to_string(spmd::local_device_count()));
}

// Steps of a small all_reduce until process 0 has seen `seconds` pass: it adds the verdict to
// element 0 of each step's sum, so every process stops after the same step.
void steps(double seconds) {
  spmd::Communicator world = spmd::world();
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int64_t n = 0;
  for (bool more = true; more; ++n) {
    std::vector<float> values(64, 1.0F);
    values[0] = world.rank() == 0 && elapsed() < seconds ? 1.0F : 0.0F;
    world.all_reduce(values);
    more = values[0] > 0.5F;
    if (values[1] != static_cast<float>(world.size())) say("WRONG all_reduce");
  }
  char line[64];
  std::snprintf(line, sizeof(line), "steps %lld in %.3f s", static_cast<long long>(n), elapsed());
  say(line);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cluster_probe MODE [options]\n");
    return 2;
  }
  const std::string mode = argv[1];
  spmd::distributed::Options options;
  double seconds = 2;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--address") options.coordinator_address = value;
    if (flag == "--num") options.num_processes = std::stoi(value);
    if (flag == "--id") options.process_id = std::stoi(value);
    if (flag == "--token") options.auth_token = value;
    if (flag == "--init-timeout") {
      options.initialization_timeout = std::chrono::milliseconds(std::stoi(value) * 1000);
    }
    if (flag == "--seconds") seconds = std::stod(value);
    if (flag == "--heartbeat") {
      options.heartbeat_timeout = std::chrono::milliseconds(std::stoi(value) * 1000);
    }
  }
  try {
    if (mode == "query-then-init") {
      say("devices before initialize: " + std::to_string(spmd::device_count()));
    }
    if (mode == "handler") {
      options.on_peer_failure = [](const spmd::distributed::PeerFailureInfo& info) {
        say("handler heard: " + info.to_string());
      };
    }
    if (mode == "external") options.external_coordinator = true;
    spmd::distributed::initialize(options);
    say("initialized pid " + std::to_string(getpid()));
    if (mode == "double-init") spmd::distributed::initialize(options);
    if (mode == "report" || mode == "external") {
      report();
      if (spmd::process_count() > 1) {
        spmd::distributed::client().wait_at_barrier("report-done", 60s);
      }
    }
    if (mode == "kv-exchange") {
      auto& kv = spmd::distributed::client();
      const int me = spmd::process_index();
      const int n = spmd::process_count();
      kv.key_value_set("probe/" + std::to_string(me), "from " + std::to_string(me));
      say("got " + kv.blocking_key_value_get("probe/" + std::to_string((me + 1) % n), 30s));
    }
    if (mode == "barrier" || mode == "uncaught" || mode == "handler") {
      const bool last = spmd::process_index() == spmd::process_count() - 1;
      if (last) {
        say("sleeping pid " + std::to_string(getpid()));
        std::this_thread::sleep_for(120s);
        return 0;
      }
      say("waiting pid " + std::to_string(getpid()));
      spmd::distributed::client().wait_at_barrier("never-complete", 60s);
      say("barrier returned");
    }
    if (mode == "steps") steps(seconds);
    spmd::distributed::shutdown();
    say("shut down");
    return 0;
  } catch (const spmd::Error& e) {
    if (mode == "uncaught") throw;  // as a program that catches nothing
    std::printf("error %s: %s\n", class_of(e), e.what());
    std::fflush(stdout);
    return mode == "handler" ? 3 : 1;
  }
}
