// spmd-coordinator: the coordination service stand-alone, for clusters where process 0 should
// not carry it. Every process then joins with SPMD_EXTERNAL_COORDINATOR=1 (or
// Options::external_coordinator) and coordinator_address pointing here. Exits 0 once every
// process has shut down or died, or on SIGINT/SIGTERM.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "coord/service.h"
#include "coord/status_http.h"
#include "spmd/error.h"

int main(int argc, char** argv) {
  CLI::App app{"spmd-coordinator: the spmd coordination service, stand-alone"};
  int port = 0;
  int n = 0;
  std::string bind = "[::]";
  std::string token;
  double heartbeat_s = 100;
  std::string status_http;
  app.add_option("--port", port, "port to listen on")->required()->check(CLI::Range(0, 65535));
  app.add_option("--num-processes", n, "number of processes in the cluster")
      ->required()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--bind", bind, "address to listen on (default [::], every interface)");
  std::string token_file;
  app.add_option("--auth-token", token,
                 "shared secret; visible to every local user in ps: prefer $SPMD_AUTH_TOKEN or "
                 "--auth-token-file");
  app.add_option("--auth-token-file", token_file,
                 "read the shared secret from this file (its first line)");
  app.add_option("--heartbeat-timeout", heartbeat_s, "seconds of silence before a process is dead")
      ->check(CLI::PositiveNumber);
  app.add_option("--status-http", status_http,
                 "serve the live status page at this ip:port (a port alone: 127.0.0.1)");
  CLI11_PARSE(app, argc, argv);
  if (!token.empty()) {
    std::fprintf(stderr,
                 "spmd-coordinator: warning: --auth-token puts the token on the command line, "
                 "where every local user can read it (ps); pass it in SPMD_AUTH_TOKEN or a file "
                 "(--auth-token-file) instead\n");
  } else if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in || !std::getline(in, token) || token.empty()) {
      std::fprintf(stderr, "spmd-coordinator: --auth-token-file %s: no token in its first line\n",
                   token_file.c_str());
      return 2;
    }
  } else if (const char* t = std::getenv("SPMD_AUTH_TOKEN")) {
    token = t;
  }

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before the service thread starts

  spmd::ServiceOptions options;
  options.num_processes = n;
  const bool v6 = bind.find(':') != std::string::npos && bind.front() != '[';
  options.bind_address = (v6 ? "[" + bind + "]" : bind) + ":" + std::to_string(port);
  options.heartbeat_timeout = std::chrono::milliseconds(static_cast<int64_t>(heartbeat_s * 1000));
  options.auth_token = token;
  try {
    options.status_http_address = spmd::status_page_address(status_http, "--status-http");
    spmd::CoordService service(options);
    service.start();
    std::printf("spmd-coordinator: listening on port %u for %d processes\n", service.port(), n);
    if (!status_http.empty()) {
      std::printf("spmd-coordinator: status page at %s\n", service.status_url().c_str());
    }
    std::fflush(stdout);
    const timespec tick{0, 200L * 1000 * 1000};
    while (!service.wait_until_finished(std::chrono::milliseconds(0))) {
      const int sig = sigtimedwait(&set, nullptr, &tick);
      if (sig == SIGINT || sig == SIGTERM) {
        std::fprintf(stderr, "spmd-coordinator: stopping on %s\n", strsignal(sig));
        service.stop();
        return 128 + sig;
      }
    }
    // Let the last answers reach their processes before closing.
    service.wait_until_disconnected(std::chrono::seconds(5));
    service.stop();
    std::printf("spmd-coordinator: every process has left; exiting\n");
    return 0;
  } catch (const spmd::Error& e) {
    std::fprintf(stderr, "spmd-coordinator: %s\n", e.what());
    return 1;
  }
}
