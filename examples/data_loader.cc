// Seed 002, "Multi-Host Data Pipeline Example": data = np.random.randn(10000, 784), a 1-D mesh
// 'batch' of every device, and a loader that turns each process's share into global batches
// sharded by rows (make_array_from_process_local_data). spmd::data::DistributedDataLoader does
// what the seed's class does, plus a shuffle that is the same in every process and the same
// number of batches in every process, so none leaves the loop early (seed 001's "last batch"
// pitfall). The first batch is checked: a psum over all devices of its rows must equal the sum of
// the records the loader says it put there.
//
//   spmdrun -n 4 --cpu-devices 2 -- ./data_loader
#include <spmd/spmd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

int main() {
  spmd::distributed::initialize();

  // mesh = Mesh(np.array(jax.devices()).reshape(-1), ('batch',)); NamedSharding(mesh, P('batch'))
  const spmd::Mesh mesh(spmd::devices(), {"batch"});
  const spmd::NamedSharding data_sharding(mesh, spmd::P("batch"));

  // data = np.random.randn(10000, 784): the same in every process (same seed).
  std::mt19937_64 rng(0);
  std::normal_distribution<float> normal;
  std::vector<float> values(size_t{10000} * 784);
  for (auto& v : values) v = normal(rng);
  const auto source =
      spmd::data::in_memory_source(spmd::HostArray::from_vector(values, {10000, 784}));

  // DistributedDataLoader(data, batch_size=32 per process, mesh, data_sharding)
  const int64_t global_batch = int64_t{32} * spmd::process_count();
  spmd::data::DistributedDataLoader loader(source, global_batch, data_sharding, {.seed = 42});

  const auto column_sums = spmd::shard_map(
      [](const spmd::Block& rows) { return spmd::psum(spmd::sum(rows, 0), "batch"); }, mesh,
      {spmd::P("batch")}, spmd::P());

  for (int64_t i = 0; i < loader.batches_per_epoch(); ++i) {
    if (i == 0) {
      // The records of this process's rows of batch 0, gathered from every process.
      const auto local = loader.next_local();
      const auto ids = spmd::multihost::process_allgather(
          spmd::HostArray::from_vector(local.records, {static_cast<int64_t>(local.records.size())}),
          true);
      const spmd::Array batch = spmd::make_array_from_process_local_data(
          data_sharding, local.data, spmd::Shape{global_batch, 784});
      const auto got = column_sums(batch).addressable_data(0);
      std::vector<float> want(784, 0.0f);
      for (int64_t id : ids.data<int64_t>()) {
        if (id < 0) continue;  // padding
        for (int64_t c = 0; c < 784; ++c) want[c] += values[id * 784 + c];
      }
      float worst = 0;
      for (int64_t c = 0; c < 784; ++c) {
        worst = std::max(worst, std::abs(got.data<float>()[c] - want[c]));
      }
      std::printf("batch 0 column sums match the loaded records: %s (largest difference %.2g)\n",
                  worst < 1e-3f ? "yes" : "no", worst);
      if (worst >= 1e-3f) return 1;
      continue;
    }
    const spmd::data::Batch batch = loader.next();
    // batch.data is a jax.Array-like sharded across all devices; batch.mask marks padding rows.
    if (i < 3 && spmd::process_index() == 0) {
      std::printf("Batch shape: (%lld, %lld), is distributed: %s\n",
                  static_cast<long long>(batch.data.shape()[0]),
                  static_cast<long long>(batch.data.shape()[1]),
                  batch.data.is_fully_addressable() ? "False" : "True");
    }
  }
  std::printf("Process %d: %lld batches of (%lld, 784), %lld of its records per epoch\n",
              spmd::process_index(), static_cast<long long>(loader.batches_per_epoch()),
              static_cast<long long>(global_batch), static_cast<long long>(loader.shard_records()));
  return 0;
}
