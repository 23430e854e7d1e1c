// One process of the names property test (tests/tools/hostile_names_test.py), run under spmdrun:
//
//   names_probe NAMES_FILE BARRIER_HEX GO_FILE
//
// NAMES_FILE holds one name per line, hex-encoded (any bytes). Every process sets a key of each
// name (a name that is not UTF-8 is InvalidArgument, which is counted, and the job goes on) and
// reads its own keys back. Then every process but the last waits at the barrier named by
// BARRIER_HEX, while the last one waits for GO_FILE to appear (the test looks at the live view
// meanwhile) and then arrives too. Prints "keys <set> refused <refused>", "waiting" or
// "holding", and "ok names" when everything passed.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "spmd/distributed.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

using namespace spmd;
using namespace std::chrono_literals;

namespace {

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: names_probe NAMES_FILE BARRIER_HEX GO_FILE\n");
    return 2;
  }
  std::vector<std::string> names;
  std::ifstream in(argv[1]);
  for (std::string line; std::getline(in, line);) names.push_back(unhex(line));
  distributed::initialize();
  distributed::Client& client = distributed::client();
  const std::string me = std::to_string(process_index());
  int set = 0;
  int refused = 0;
  bool ok = true;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string key = names[i] + "/" + me;
    try {
      client.key_value_set(key, "value " + std::to_string(i));
      ++set;
      ok = ok && client.blocking_key_value_get(key, 10s) == "value " + std::to_string(i);
    } catch (const InvalidArgument&) {
      ++refused;
    }
  }
  say("keys " + std::to_string(set) + " refused " + std::to_string(refused));
  const std::string barrier = unhex(argv[2]);
  if (process_index() + 1 < process_count()) {
    say("waiting");
    client.wait_at_barrier(barrier, 120s);
  } else {
    say("holding");
    const auto until = std::chrono::steady_clock::now() + 120s;
    while (access(argv[3], F_OK) != 0 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(50ms);
    }
    client.wait_at_barrier(barrier, 120s);
  }
  if (ok) say("ok names");
  distributed::shutdown();
  return ok ? 0 : 1;
}
