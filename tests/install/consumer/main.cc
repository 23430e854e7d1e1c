// Built against an installed spmd: joins the cluster spmdrun started and checks the device
// count every process sees.
#include <spmd/spmd.h>

#include <cstdio>

int main() {
  spmd::distributed::initialize();
  const int expected = spmd::process_count() * spmd::local_device_count();
  std::printf("consumer %d/%d sees %d devices\n", spmd::process_index(), spmd::process_count(),
              spmd::device_count());
  return spmd::device_count() == expected ? 0 : 1;
}
