// Serves the status page (status_http.h) over a simulated hang of N processes, for
// tests/tools/status_page_scale_test.py: process N/2 + 1 running its own code since
// all_reduce #41, waited for by every other live process; the last two dead; every 97th of the
// first 9700 still in all_reduce #40; the rest blocked in barrier "epoch-end" on hosts a and c.
// Prints "url <page's address>" and serves until its standard input closes.
//
//   status_page_fixture N
#include <asio.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include "coord/status_http.h"
#include "coord/wire.h"

namespace {

spmd::wire::StatusTable hang(int n) {
  const int culprit = n / 2 + 1 < n ? n / 2 + 1 : 0;
  spmd::wire::StatusTable t;
  t.set_num_processes(n);
  for (int p = 0; p < n; ++p) {
    spmd::wire::ProcessStatus& r = *t.add_processes();
    r.set_process_id(p);
    r.set_pid(1000 + p);
    if (p == culprit) {
      r.set_state(spmd::wire::PROCESS_RUNNING);
      r.set_call("all_reduce #41");
      r.set_since_ms(90'000);
      r.set_hostname("b");
      r.set_waited_for_by(n - 3 > 0 ? n - 3 : n - 1);
    } else if (n > 3 && p >= n - 2) {
      r.set_state(spmd::wire::PROCESS_DEAD);
      r.set_detail("connection lost");
      r.set_since_ms(-1);
      r.set_hostname("a");
    } else if (p % 97 == 5 && p < 9700) {
      r.set_state(spmd::wire::PROCESS_RUNNING);
      r.set_call("all_reduce #40");
      r.set_since_ms(1000 + p);
      r.set_hostname("a");
    } else {
      r.set_state(spmd::wire::PROCESS_BLOCKED);
      r.set_call("barrier 'epoch-end'");
      r.set_since_ms(60'000 + p);
      r.set_hostname(p % 2 != 0 ? "a" : "c");
      r.add_waiting_for(culprit);
    }
    r.set_heartbeat_age_ms(300);
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: status_page_fixture N\n");
    return 2;
  }
  const spmd::wire::StatusTable table = hang(std::stoi(argv[1]));
  asio::io_context io;
  spmd::StatusHttpServer server(io, "127.0.0.1:0", "fixture-token",
                                [&] { return std::optional<spmd::wire::StatusTable>(table); });
  server.start();
  std::printf("url %s\n", server.url().c_str());
  std::fflush(stdout);
  std::thread loop([&] { io.run(); });
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  asio::post(io, [&] { server.stop(); });
  io.stop();
  loop.join();
  return 0;
}
