// spmd-status: the live view of a running job, from its coordination service.
//
//   spmd-status HOST:PORT [--json]         (the job's token in SPMD_AUTH_TOKEN, or --auth-token)
//
// Prints one line per process: its state (running its own code, blocked in a call, dead, left),
// host, pid, the call it is blocked in or last finished, since when, how long since the service
// last heard from it, and how many processes wait for it; then a sentence about each process
// others wait for. Exit 0 when answered, 1 on any error (printed).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "coord/status_query.h"
#include "spmd/error.h"

int main(int argc, char** argv) {
  CLI::App app{"spmd-status: what every process of a running spmd job is doing"};
  std::string address;
  std::string token;
  bool json = false;
  double timeout_s = 5;
  app.add_option("address", address, "the job's coordinator address, HOST:PORT")->required();
  app.add_option("--auth-token", token, "the job's shared secret (default: $SPMD_AUTH_TOKEN)");
  app.add_flag("--json", json, "print the table as JSON");
  app.add_option("--timeout", timeout_s, "seconds to wait for the answer (5)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  if (token.empty()) {
    if (const char* t = std::getenv("SPMD_AUTH_TOKEN")) token = t;
  }
  try {
    const auto table = spmd::query_status(
        address, token, std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
    const std::string out = json ? spmd::status_json(table) + "\n" : spmd::status_text(table);
    std::fputs(out.c_str(), stdout);
    return 0;
  } catch (const spmd::Error& e) {
    std::fprintf(stderr, "spmd-status: %s\n", e.what());
    return 1;
  }
}
