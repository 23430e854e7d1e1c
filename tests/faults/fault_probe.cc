// The program the fault campaign (tests/faults/campaign.py) runs on every process: rounds of
// the phases a training job goes through, each announced on stdout before it starts so that the
// campaign can land a fault inside it, each result checked against a value computed locally.
//
//   fault_probe run DIR ROUNDS     phases per round: barrier, collective, jit, checkpoint
//   fault_probe verify DIR         (one process) every committed checkpoint restores and holds
//                                  its step's values; prints "verified N checkpoints"
//
// "phase <name> <round>" precedes each phase; "WRONG …" reports a wrong result; "preempted at
// <round>" ends the run at the step every process agreed on after SIGTERM (the checkpoint of
// that round is saved first). Errors print as "error: <message>" and exit 1 — unless
// the runtime's peer-failure exit (code 70) comes first.
#include <spmd/spmd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::HostArray;
using spmd::NamedSharding;
using spmd::P;

constexpr int64_t kRows = 16;
constexpr int64_t kCols = 4;

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// The array of round r: element (i, j) = (r mod 64) * 1000 + i * kCols + j. Small enough that
// every sum of them is exact in float32, whatever the order of the additions.
int64_t base(int64_t round) { return round % 64 * 1000; }

HostArray values(int64_t round) {
  std::vector<float> v(static_cast<size_t>(kRows * kCols));
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(base(round) + k);
  return HostArray::from_vector(v, {kRows, kCols});
}

void check_collective(int64_t round) {
  spmd::Communicator world = spmd::world();
  std::vector<float> mine(64, static_cast<float>(world.rank() + round));
  world.all_reduce(mine);
  const int64_t n = world.size();
  const int64_t sum = n * (n - 1) / 2 + n * round;  // of rank + round over the ranks
  const auto want = static_cast<float>(sum);
  for (float x : mine) {
    if (x != want) {
      say("WRONG all_reduce in round " + std::to_string(round) + ": " + std::to_string(x) +
          " != " + std::to_string(want));
      return;
    }
  }
}

void check_jit(const spmd::Mesh& mesh, int64_t round) {
  static auto doubled_sum = spmd::jit([](const spmd::Tensor& x) { return jnp::sum(x * 2.0f); });
  const Array x = spmd::device_put(values(round), NamedSharding(mesh, P("x")));
  const float got = doubled_sum(x).to_host().data<float>()[0];
  constexpr int64_t kElements = kRows * kCols;
  const int64_t want = 2 * (base(round) * kElements + kElements * (kElements - 1) / 2);
  if (static_cast<double>(got) != static_cast<double>(want)) {
    say("WRONG jit sum in round " + std::to_string(round) + ": " + std::to_string(got));
  }
}

int run(const std::string& dir, int64_t rounds) {
  spmd::distributed::initialize();
  say("phase init-done 0");
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  spmd::checkpoint::CheckpointManager manager(dir + "/checkpoints", {.max_to_keep = 3});
  for (int64_t round = 1; round <= rounds; ++round) {
    say("phase barrier " + std::to_string(round));
    spmd::multihost::sync_global_devices("round " + std::to_string(round));
    say("phase collective " + std::to_string(round));
    check_collective(round);
    say("phase jit " + std::to_string(round));
    check_jit(mesh, round);
    say("phase checkpoint " + std::to_string(round));
    const spmd::checkpoint::Tree state = {
        {"w", spmd::device_put(values(round), NamedSharding(mesh, P("x")))}};
    manager.save(round, state);
    if (spmd::multihost::reached_preemption_sync_point(round)) {
      say("preempted at " + std::to_string(round));
      spmd::distributed::shutdown();
      return 0;
    }
  }
  spmd::distributed::shutdown();
  say("done");
  return 0;
}

int verify(const std::string& dir) {
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  spmd::checkpoint::CheckpointManager manager(dir + "/checkpoints");
  int verified = 0;
  for (int64_t step : manager.all_steps()) {
    const auto tree = manager.restore(step, NamedSharding(mesh, P()));
    if (!(tree.at("w").to_host() == values(step))) {
      say("WRONG checkpoint " + std::to_string(step) + " restores other values");
      return 1;
    }
    ++verified;
  }
  say("verified " + std::to_string(verified) + " checkpoints");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "run" && argc == 4) return run(argv[2], std::atoll(argv[3]));
    if (mode == "verify" && argc == 3) return verify(argv[2]);
  } catch (const spmd::Error& e) {
    say(std::string("error: ") + e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: fault_probe run DIR ROUNDS | fault_probe verify DIR\n");
  return 2;
}
