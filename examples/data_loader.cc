// Seed 002, "Multi-Host Data Pipeline Example": a DistributedDataLoader that gives each process
// an equal slice of the dataset and turns each process's local batch into one global batch,
// sharded by rows over every device (make_array_from_process_local_data). Every process takes
// the same number of batches, so none leaves the loop early (seed 001's "last batch" pitfall).
// The first batch is checked: a psum over all devices of its rows must equal the rows the
// processes loaded.
//
//   spmdrun -n 4 --cpu-devices 2 -- ./data_loader
#include <spmd/spmd.h>

#include <cstdio>
#include <functional>
#include <random>
#include <vector>

namespace {

class DistributedDataLoader {
 public:
  DistributedDataLoader(const spmd::HostArray& data, int64_t batch_size,
                        spmd::NamedSharding data_sharding)
      : batch_size_(batch_size), sharding_(std::move(data_sharding)) {
    // Shard the data across processes: equal slices, the remainder left out.
    const int64_t total = data.shape()[0];
    const int64_t per_process = total / spmd::process_count();
    start_ = spmd::process_index() * per_process;
    local_ = data.slice({{start_, start_ + per_process}, {0, data.shape()[1]}});
  }

  int64_t num_batches() const { return local_.shape()[0] / batch_size_; }

  // Calls fn(global_batch) for each batch: this process's rows [i*B, (i+1)*B) of its slice, and
  // the other processes' rows at the same position, as one array over all devices.
  void for_each_batch(const std::function<void(int64_t, const spmd::Array&)>& fn) const {
    for (int64_t i = 0; i < num_batches(); ++i) {
      const auto local_batch =
          local_.slice({{i * batch_size_, (i + 1) * batch_size_}, {0, local_.shape()[1]}});
      fn(i, spmd::make_array_from_process_local_data(sharding_, local_batch));
    }
  }

 private:
  int64_t batch_size_;
  spmd::NamedSharding sharding_;
  int64_t start_ = 0;
  spmd::HostArray local_;
};

}  // namespace

int main() {
  spmd::distributed::initialize();

  // mesh = Mesh(np.array(jax.devices()).reshape(-1), ('batch',)); NamedSharding(mesh, P('batch'))
  const spmd::Mesh mesh(spmd::devices(), {"batch"});
  const spmd::NamedSharding data_sharding(mesh, spmd::P("batch"));

  // data = np.random.randn(10000, 784): the same on every process (same seed).
  std::mt19937_64 rng(0);
  std::normal_distribution<float> normal;
  std::vector<float> values(size_t{10000} * 784);
  for (auto& v : values) v = normal(rng);
  const auto data = spmd::HostArray::from_vector(values, {10000, 784});

  const DistributedDataLoader loader(data, 32, data_sharding);
  const auto column_sums = spmd::shard_map(
      [](const spmd::Block& rows) { return spmd::psum(spmd::sum(rows, 0), "batch"); }, mesh,
      {spmd::P("batch")}, spmd::P());

  int64_t batches = 0;
  loader.for_each_batch([&](int64_t i, const spmd::Array& batch) {
    ++batches;
    if (i < 3 && spmd::process_index() == 0) {
      std::printf("Batch shape: (%lld, %lld), is distributed: %s\n",
                  static_cast<long long>(batch.shape()[0]),
                  static_cast<long long>(batch.shape()[1]),
                  batch.is_fully_addressable() ? "False" : "True");
    }
    if (i == 0) {
      // Batch 0 holds rows [p*per_process, p*per_process + 32) of every process p.
      const auto got = column_sums(batch).addressable_data(0);
      const int64_t per_process = 10000 / spmd::process_count();
      std::vector<float> want(784, 0.0f);
      for (int p = 0; p < spmd::process_count(); ++p) {
        for (int64_t r = 0; r < 32; ++r) {
          for (int64_t c = 0; c < 784; ++c) want[c] += values[(p * per_process + r) * 784 + c];
        }
      }
      float worst = 0;
      for (int64_t c = 0; c < 784; ++c) {
        worst = std::max(worst, std::abs(got.data<float>()[c] - want[c]));
      }
      std::printf("batch 0 column sums match the loaded rows: %s (largest difference %.2g)\n",
                  worst < 1e-3f ? "yes" : "no", worst);
      if (worst >= 1e-3f) throw spmd::Error("batch 0 does not hold the rows the processes loaded");
    }
  });
  std::printf("Process %d: %lld batches of (%ld, 784)\n", spmd::process_index(),
              static_cast<long long>(batches), int64_t{32} * spmd::process_count());
  return 0;
}
