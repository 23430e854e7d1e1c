// Process 0 writes a .npy of float32 records; then, in every process: the loader's first epoch
// with the source opened inside the timing (a fresh mapping, as a job's first epoch); then per
// iteration, alternating, the baseline — this process's contiguous share of the file (1/N of the
// records) read with pread() into one buffer — and one more epoch of the same loader (a training
// job's later epochs). Records/s are totals over the slowest process (barriers around each
// phase). The file sits in the page cache throughout, as a dataset read every epoch would.
#include "spmd-bench/data_bench.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spmd/spmd.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/subprocess.h"
#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

namespace fs = std::filesystem;

// Reads process `me`'s contiguous share of the records with pread() into one new buffer; false
// when the file ends early.
bool read_share(const std::string& file, const DataBenchOptions& o, int me, int64_t share) {
  const size_t record_bytes = static_cast<size_t>(o.record_floats) * 4;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  const size_t bytes = static_cast<size_t>(share) * record_bytes;
  HostArray buffer = HostArray::uninitialized(DType::kUInt8, {static_cast<int64_t>(bytes)});
  const off_t start = static_cast<off_t>(fs::file_size(file) - o.records * record_bytes +
                                         static_cast<size_t>(me * share) * record_bytes);
  size_t done = 0;
  while (done < bytes) {
    const ssize_t r = ::pread(fd, buffer.mutable_bytes().data() + done, bytes - done,
                              start + static_cast<off_t>(done));
    if (r <= 0) break;
    done += static_cast<size_t>(r);
  }
  ::close(fd);
  return done == bytes;
}

}  // namespace

namespace {

struct Timings {
  double first_epoch = 0;            // the source opened and one epoch, s
  std::vector<double> sequential;    // per iteration, s
  std::vector<double> later_epochs;  // per iteration, s
  bool correct = true;
};

Timings measure(const DataBenchOptions& o, const std::string& file) {
  const int me = process_index();
  const int64_t share = o.records / process_count();
  const NamedSharding rows(Mesh(devices(), {"batch"}), P("batch"));
  Timings t;
  int64_t seen = 0;
  std::unique_ptr<data::DistributedDataLoader> loader;
  auto epoch = [&] {
    for (int64_t k = 0; k < loader->batches_per_epoch(); ++k) {
      const data::Batch b = loader->next();
      seen += b.data.addressable_shards().front().data.shape()[0] *
              static_cast<int64_t>(b.data.addressable_shards().size());
    }
  };
  t.first_epoch = timed_phase("bench/data/first", [&] {
    loader = std::make_unique<data::DistributedDataLoader>(
        data::npy_source(file), o.batch, rows, data::LoaderOptions{.prefetch = o.prefetch});
    epoch();
  });
  for (int i = 0; i < o.iterations; ++i) {
    t.sequential.push_back(timed_phase(fmt::format("bench/data/sequential/{}", i), [&] {
      t.correct = read_share(file, o, me, share) && t.correct;
    }));
    t.later_epochs.push_back(timed_phase(fmt::format("bench/data/loader/{}", i), epoch));
  }
  t.correct = t.correct && seen >= share * (o.iterations + 1);
  return t;
}

void report(const DataBenchOptions& o, const Timings& t) {
  const auto records = static_cast<double>(o.records);
  const double seq = records / median(t.sequential);
  const double load = records / median(t.later_epochs);
  nlohmann::ordered_json row;
  row["records"] = o.records;
  row["record_bytes"] = o.record_floats * 4;
  row["processes"] = process_count();
  row["global_batch"] = o.batch;
  row["prefetch"] = o.prefetch;
  row["loader_records_per_s"] = load;
  row["sequential_records_per_s"] = seq;
  row["loader_vs_sequential"] = load / seq;
  row["first_epoch_records_per_s"] = records / t.first_epoch;
  row["first_epoch_vs_sequential"] = records / t.first_epoch / seq;
  row["correct"] = t.correct;
  print_row(row);
}

}  // namespace

int run_data_worker(const DataBenchOptions& o) {
  distributed::initialize();
  const std::string file = (fs::path(o.dir) / "records.npy").string();
  if (process_index() == 0) {
    HostArray data = HostArray::uninitialized(DType::kFloat32, {o.records, o.record_floats});
    auto v = data.mutable_data<float>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000003);
    data::write_npy(file, data);
  }
  distributed::client().wait_at_barrier("bench/data/written", std::chrono::minutes(10));
  const Timings t = measure(o, file);
  if (process_index() == 0) report(o, t);
  distributed::shutdown();
  return t.correct ? 0 : 1;
}

int run_data_bench(const DataBenchOptions& o) {
  const ScratchDir dir(o.dir, "spmd-bench-data");
  return run_spmd_job(
      o.processes,
      {"data-worker", "--records", std::to_string(o.records), "--record-floats",
       std::to_string(o.record_floats), "--batch", std::to_string(o.batch), "--iterations",
       std::to_string(o.iterations), "--dir", dir.path(), "--prefetch", std::to_string(o.prefetch)},
      fmt::format("the data loader (shuffled epochs of global batches: the first with the file "
                  "opened, then later ones) beside a sequential read of the same .npy, {} "
                  "processes:",
                  o.processes),
      o.json);
}

}  // namespace spmd::bench
