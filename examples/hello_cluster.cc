// Seed 002, "Verify device setup", and seed 001's device counts: every process joins the
// cluster, reports its local and global devices, and the processes agree through the
// coordination service before process 0 prints the whole cluster.
//
//   spmdrun -n 4 --cpu-devices 2 -- ./hello_cluster
#include <spmd/spmd.h>

#include <chrono>
#include <cstdio>
#include <string>

int main() {
  spmd::distributed::initialize();  // under spmdrun, srun or by hand with SPMD_*: no arguments

  std::printf("Process %d: %d local devices, %d total devices\n", spmd::process_index(),
              spmd::local_device_count(), spmd::device_count());

  if (spmd::process_count() > 1) {
    // Each process publishes what it sees; process 0 gathers it once all have arrived.
    auto& kv = spmd::distributed::client();
    std::string local;
    for (const auto& d : spmd::local_devices()) local += " " + d.to_string();
    kv.key_value_set("hello/" + std::to_string(spmd::process_index()), local);
    kv.wait_at_barrier("hello", std::chrono::seconds(60));
    if (spmd::process_index() == 0) {
      for (const auto& [key, value] : kv.key_value_dir_get("hello")) {
        std::printf("%s:%s\n", key.c_str(), value.c_str());
      }
    }
  }
  if (spmd::process_index() == 0) {
    std::printf("Global devices:");
    for (const auto& d : spmd::devices()) std::printf(" %d@p%d", d.id(), d.process_index());
    std::printf("\n");
  }
  return 0;
}
