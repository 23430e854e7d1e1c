// Seeds 001 and 002, multi-process pmap: every process passes one value per local device,
//   xs = jnp.ones(jax.local_device_count())
//   jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')(xs)
// and the psum runs over every device of every process, so each entry becomes
// jax.device_count().
//
//   spmdrun -n 4 --cpu-devices 2 -- ./pmap_psum      # every process prints [8.0, 8.0]
#include <spmd/spmd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

int main() {
  spmd::distributed::initialize();
  const int local = spmd::local_device_count();
  std::printf("device_count() = %d, local_device_count() = %d\n", spmd::device_count(), local);

  const auto xs = spmd::HostArray::from_vector(std::vector<float>(local, 1.0f), {local});
  const auto psum_i = spmd::pmap([](spmd::Block x) { return spmd::psum(std::move(x), "i"); }, "i");
  const spmd::HostArray result = psum_i(xs);

  std::string values;
  for (float v : result.data<float>()) {
    char text[32];
    std::snprintf(text, sizeof text, "%s%.1f", values.empty() ? "" : ", ", v);
    values += text;
  }
  std::printf("Process %d result: [%s]\n", spmd::process_index(), values.c_str());
  return 0;
}
