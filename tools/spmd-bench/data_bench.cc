// Process 0 writes a .npy of float32 records; then, per iteration and in every process: the
// baseline reads this process's contiguous share of the file (1/N of the records) with read()
// into one buffer; the loader (npy_source opened inside the timing, shuffle on, prefetch 2) runs
// one epoch of global batches. Records/s are totals over the slowest process (barriers around
// each phase). The file sits in the page cache for both, as a dataset read every epoch would.
#include "spmd-bench/data_bench.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spmd/spmd.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/subprocess.h"
#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

namespace fs = std::filesystem;

}  // namespace

int run_data_worker(const DataBenchOptions& o) {
  distributed::initialize();
  const int me = process_index();
  const int n = process_count();
  auto& kv = distributed::client();
  const auto timeout = std::chrono::minutes(10);
  const std::string file = (fs::path(o.dir) / "records.npy").string();
  if (me == 0) {
    HostArray data = HostArray::uninitialized(DType::kFloat32, {o.records, o.record_floats});
    auto v = data.mutable_data<float>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000003);
    data::write_npy(file, data);
  }
  kv.wait_at_barrier("bench/data/written", timeout);
  const size_t record_bytes = static_cast<size_t>(o.record_floats) * 4;
  const int64_t share = o.records / n;
  const NamedSharding rows(Mesh(devices(), {"batch"}), P("batch"));
  std::vector<double> sequential;
  std::vector<double> loader_s;
  bool correct = true;
  for (int i = 0; i < o.iterations; ++i) {
    sequential.push_back(timed_phase(fmt::format("bench/data/sequential/{}", i), [&] {
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
      correct = correct && done == bytes;
    }));
    int64_t seen = 0;
    loader_s.push_back(timed_phase(fmt::format("bench/data/loader/{}", i), [&] {
      data::DistributedDataLoader loader(
          data::npy_source(file), o.batch, rows,
          {.seed = static_cast<uint64_t>(i), .prefetch = o.prefetch});
      for (int64_t k = 0; k < loader.batches_per_epoch(); ++k) {
        const data::Batch b = loader.next();
        seen += b.data.addressable_shards().front().data.shape()[0] *
                static_cast<int64_t>(b.data.addressable_shards().size());
      }
    }));
    correct = correct && seen >= share;
  }
  if (me == 0) {
    const double seq = static_cast<double>(o.records) / median(sequential);
    const double load = static_cast<double>(o.records) / median(loader_s);
    nlohmann::ordered_json row;
    row["records"] = o.records;
    row["record_bytes"] = record_bytes;
    row["processes"] = n;
    row["global_batch"] = o.batch;
    row["prefetch"] = o.prefetch;
    row["loader_records_per_s"] = load;
    row["sequential_records_per_s"] = seq;
    row["loader_vs_sequential"] = load / seq;
    row["correct"] = correct;
    fmt::print("{}\n", row.dump());
    std::fflush(stdout);
  }
  distributed::shutdown();
  return correct ? 0 : 1;
}

int run_data_bench(const DataBenchOptions& o) {
  const ScratchDir dir(o.dir, "spmd-bench-data");
  return run_spmd_job(
      o.processes,
      {"data-worker", "--records", std::to_string(o.records), "--record-floats",
       std::to_string(o.record_floats), "--batch", std::to_string(o.batch), "--iterations",
       std::to_string(o.iterations), "--dir", dir.path(), "--prefetch", std::to_string(o.prefetch)},
      fmt::format("the data loader (shuffled, one epoch of global batches) beside a sequential "
                  "read of the same .npy, {} processes:",
                  o.processes),
      o.json);
}

}  // namespace spmd::bench
