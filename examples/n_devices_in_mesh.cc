// Seed 003: n_devices_in_mesh(dummy) returns the global device count as a float32 scalar; the
// argument is ignored. Alone (SPMD_NUM_PROCESSES=1: initialize() with no cluster at all raises,
// as JAX's does) it prints 1, one process with one CPU device; under `spmdrun -n 4 --cpu-devices 2`
// every process prints 8.
#include <spmd/spmd.h>

#include <cstdio>

float n_devices_in_mesh(float /*dummy*/) { return static_cast<float>(spmd::device_count()); }

int main() {
  spmd::distributed::initialize();
  std::printf("n_devices_in_mesh(0.0) = %.1f\n", n_devices_in_mesh(0.0f));
  return 0;
}
