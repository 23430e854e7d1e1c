// Each worker owns one shard (rows) of a float32 array of pseudo-random values (incompressible,
// like trained weights). Per iteration, all in the same processes: the baseline — each process
// writes its shard's bytes to one file with write() and fsync(), then reads them back — and
// checkpoint::save / checkpoint::restore of the array. Throughput is total bytes over the
// slowest process's time (barriers before and after each phase). Reads come from the page cache
// in both cases, as they would right after a save.
#include "spmd-bench/checkpoint_bench.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spmd/spmd.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/subprocess.h"
#include "spmd-bench/jax_baseline.h"
#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

namespace fs = std::filesystem;

void write_all(const std::string& path, const std::byte* data, size_t n) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot create " + path);
  for (size_t done = 0; done < n;) {
    const ssize_t w = ::write(fd, data + done, n - done);
    if (w <= 0) {
      ::close(fd);
      throw Error("cannot write " + path);
    }
    done += static_cast<size_t>(w);
  }
  ::fsync(fd);
  ::close(fd);
}

void read_all(const std::string& path, std::byte* data, size_t n) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open " + path);
  for (size_t done = 0; done < n;) {
    const ssize_t r = ::read(fd, data + done, n - done);
    if (r <= 0) {
      ::close(fd);
      throw Error("cannot read " + path);
    }
    done += static_cast<size_t>(r);
  }
  ::close(fd);
}

}  // namespace

// Seeded pseudo-random rows: the same values in every run, which neither compress to nothing
// nor depend on the process count.
Array random_rows(int64_t rows, int64_t cols, const NamedSharding& sharding) {
  return make_array_from_callback({rows, cols}, sharding, [&](const Index& index) {
    HostArray h = HostArray::uninitialized(DType::kFloat32, index_extents(index));
    uint64_t x = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(index[0].start + 1);
    for (float& v : h.mutable_data<float>()) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      v = static_cast<float>(static_cast<int32_t>(x >> 32)) * 1e-9f;
    }
    return h;
  });
}

struct CheckpointTimings {
  std::vector<double> raw_write, raw_read, save, restore;
  bool correct = true;
};

void print_checkpoint_row(const CheckpointTimings& t, size_t total,
                          const std::string& compression) {
  auto gbps = [&](const std::vector<double>& times) {
    return static_cast<double>(total) / median(times) / 1e9;
  };
  nlohmann::ordered_json row;
  row["bytes"] = total;
  row["processes"] = process_count();
  row["compression"] = compression;
  row["save_GBps"] = gbps(t.save);
  row["restore_GBps"] = gbps(t.restore);
  row["raw_write_GBps"] = gbps(t.raw_write);
  row["raw_read_GBps"] = gbps(t.raw_read);
  row["save_vs_raw"] = median(t.raw_write) / median(t.save);
  row["restore_vs_raw"] = median(t.raw_read) / median(t.restore);
  row["correct"] = t.correct;
  print_row(row);
}

int run_checkpoint_worker(const CheckpointBenchOptions& o) {
  distributed::initialize();
  const int64_t cols = 1024;
  int64_t rows = static_cast<int64_t>(o.bytes / 4 / cols);
  rows -= rows % process_count();
  const Mesh mesh(devices(), {"x"});
  const NamedSharding sharding(mesh, P("x", None));
  const Array a = random_rows(rows, cols, sharding);
  const size_t total = static_cast<size_t>(rows * cols * 4);
  const auto& shard = a.addressable_shards().front().data;
  auto& kv = distributed::client();
  const auto timeout = std::chrono::minutes(10);
  const fs::path root(o.dir);
  const checkpoint::SaveOptions save_options{.compression = o.compression == "zstd"
                                                                ? checkpoint::Compression::kZstd
                                                                : checkpoint::Compression::kNone};
  CheckpointTimings t;
  for (int i = 0; i < o.iterations; ++i) {
    const std::string raw = (root / fmt::format("raw-{}-{}", i, process_index())).string();
    const std::string ckpt = (root / fmt::format("ckpt-{}", i)).string();
    // Each side's file is deleted before the other side writes, so both writes start from the
    // same page cache; both reads fill freshly allocated memory, as a restore must. The order
    // alternates between iterations, so whatever the machine does to the first or the second
    // (memory allocation here is bimodal) falls on both.
    std::error_code ec;
    auto baseline = [&] {
      t.raw_write.push_back(timed_phase(fmt::format("bench/raw-write/{}", i), [&] {
        write_all(raw, shard.bytes().data(), shard.nbytes());
      }));
      HostArray back;
      t.raw_read.push_back(timed_phase(fmt::format("bench/raw-read/{}", i), [&] {
        back = HostArray::uninitialized(DType::kFloat32, shard.shape());
        read_all(raw, back.mutable_bytes().data(), back.nbytes());
      }));
      t.correct = t.correct && back == shard;
      fs::remove(raw, ec);
    };
    auto checkpoint = [&] {
      t.save.push_back(timed_phase(fmt::format("bench/save/{}", i), [&] {
        checkpoint::save(ckpt, {{"w", a}}, save_options);
      }));
      Array restored = a;
      t.restore.push_back(timed_phase(fmt::format("bench/restore/{}", i), [&] {
        restored = checkpoint::restore(ckpt, {{"w", sharding.clone()}}).at("w");
      }));
      t.correct = t.correct && restored.addressable_shards().front().data == shard;
      kv.wait_at_barrier(fmt::format("bench/clean/{}", i), timeout);
      if (process_index() == 0) fs::remove_all(ckpt, ec);
    };
    if (i % 2 == 0) {
      baseline();
      checkpoint();
    } else {
      checkpoint();
      baseline();
    }
  }
  if (process_index() == 0) print_checkpoint_row(t, total, o.compression);
  distributed::shutdown();
  return t.correct ? 0 : 1;
}

int run_checkpoint_bench(const CheckpointBenchOptions& o) {
  const ScratchDir dir(o.dir, "spmd-bench-checkpoint");
  return run_spmd_job(
      o.processes,
      {"checkpoint-worker", "--bytes", std::to_string(o.bytes), "--iterations",
       std::to_string(o.iterations), "--dir", dir.path(), "--compression", o.compression},
      fmt::format("checkpoint save/restore beside a plain write()+fsync() and "
                  "read() of the same bytes, {} processes:",
                  o.processes),
      o.json);
}

int run_orbax_restore_bench(const CheckpointBenchOptions& o) {
  if (!ensure_python_module("orbax.checkpoint", SPMD_BENCH_REQUIREMENTS)) return 1;
  const ScratchDir dir(o.dir, "spmd-bench-orbax");
  const std::string ckpt = (fs::path(dir.path()) / "orbax").string();
  const std::string script = (self_dir() / "orbax_bench_worker.py").string();
  const EnvList env = {{"PYTHONPATH", SPMD_BENCH_PYTHONPATH}, {"JAX_PLATFORMS", "cpu"}};
  const std::string devices = std::to_string(o.devices);
  if (job_rows(1,
               {bench_python(), script, "write", ckpt, std::to_string(o.bytes), devices,
                std::to_string(o.leaves)},
               env)
          .empty()) {
    return 1;
  }
  const auto rows = job_rows(
      1, {bench_python(), script, "restore", ckpt, std::to_string(o.iterations), devices}, env);
  if (rows.empty()) return 1;
  const auto row = nlohmann::ordered_json::parse(rows.front());
  if (!o.json) {
    fmt::print(
        "restoring an Orbax checkpoint (its defaults: OCDBT, Zarr v2, zstd) that Orbax "
        "wrote, with spmd and with Orbax in JAX, interleaved, 1 process of {} devices:\n",
        o.devices);
  }
  print_row(row);
  return row.value("correct", false) ? 0 : 1;
}

}  // namespace spmd::bench
