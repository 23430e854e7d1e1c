// Run under spmdrun: one loader per process over the same source. Checks, across the processes,
// that every record appears exactly once per epoch (padding counted apart), that all processes
// yield the same number of batches, that a rerun with the same seed repeats the order, and that a
// loader resumed from another's state() continues its sequence. Prints "ok …", or "error …" and
// exits 1.
//
//   data_probe N GLOBAL_BATCH [NPY]   N records (NPY: a .npy file written by NumPy with N rows)
#include <spmd/spmd.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace {

using spmd::HostArray;

// Every process's record ids of one epoch, gathered: ids of padding rows are -1.
std::vector<int64_t> gathered_epoch(spmd::data::DistributedDataLoader& loader, int64_t* batches) {
  std::vector<int64_t> mine;
  *batches = 0;
  for (int64_t k = 0; k < loader.batches_per_epoch(); ++k) {
    const auto b = loader.next();
    ++*batches;
    // The global batch's rows of this process: its addressable shards, and their mask.
    for (const auto& s : b.data.addressable_shards()) {
      const auto rows = s.data.data<int64_t>();
      for (int64_t r = 0; r < s.data.shape()[0]; ++r) mine.push_back(rows[r * 2]);
    }
  }
  const auto all = spmd::multihost::process_allgather(
      HostArray::from_vector(mine, {static_cast<int64_t>(mine.size())}), true);
  return {all.data<int64_t>().begin(), all.data<int64_t>().end()};
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 3) return 2;
  const int64_t n = std::stoll(argv[1]);
  const int64_t global_batch = std::stoll(argv[2]);
  try {
    spmd::distributed::initialize();
    std::shared_ptr<const spmd::data::Source> source;
    if (argc > 3) {
      source = spmd::data::npy_source(argv[3]);
    } else {
      // Record i is (i, -i), int64; the padding rows are zeros, told apart by the mask.
      std::vector<int64_t> v(static_cast<size_t>(n) * 2);
      for (int64_t i = 0; i < n; ++i) {
        v[2 * i] = i;
        v[2 * i + 1] = -i;
      }
      source = spmd::data::in_memory_source(HostArray::from_vector(v, {n, 2}));
    }
    if (source->size() != n) throw spmd::Error("the source holds the wrong number of records");
    const spmd::NamedSharding rows(spmd::Mesh(spmd::devices(), {"batch"}), spmd::P("batch"));
    spmd::data::DistributedDataLoader loader(source, global_batch, rows, {.seed = 3});

    // Equal batch counts everywhere.
    const auto counts = spmd::multihost::process_allgather(
        HostArray::from_vector(std::vector<int64_t>{loader.batches_per_epoch()}, {1}), true);
    for (int64_t c : counts.data<int64_t>()) {
      if (c != loader.batches_per_epoch())
        throw spmd::Error("batch counts differ across processes");
    }
    std::printf("ok %lld batches per epoch in every process\n",
                static_cast<long long>(loader.batches_per_epoch()));

    if (loader.batches_per_epoch() == 0) {
      try {
        loader.next();
      } catch (const spmd::FailedPrecondition& e) {
        std::printf("ok no records, no batches in any process: %s\n", e.what());
        return 0;
      }
      throw spmd::Error("an empty source yielded a batch");
    }

    // Exactly once per epoch. A padding row is zeros, so record 0 and padding both read 0: the
    // masks tell them apart — count zeros against the number of real zero records (one).
    for (int epoch = 0; epoch < 2; ++epoch) {
      int64_t batches = 0;
      const auto ids = gathered_epoch(loader, &batches);
      std::vector<int64_t> seen(static_cast<size_t>(n), 0);
      int64_t zeros = 0;
      for (int64_t id : ids) {
        if (id == 0) {
          ++zeros;
        } else if (id < 0 || id >= n || seen[id]++ > 0) {
          throw spmd::Error("record " + std::to_string(id) + " appeared twice or out of range");
        }
      }
      const int64_t padding = batches * global_batch - n;
      if (n > 0 && zeros != padding + 1) throw spmd::Error("record 0 is missing or doubled");
      for (int64_t i = 1; i < n; ++i) {
        if (seen[i] != 1) throw spmd::Error("record " + std::to_string(i) + " is missing");
      }
      std::printf("ok epoch %d: each of %lld records once, %lld padding rows\n", epoch,
                  static_cast<long long>(n), static_cast<long long>(padding));
    }

    // A rerun with the same seed repeats the order; a resumed loader continues it.
    spmd::data::DistributedDataLoader again(source, global_batch, rows, {.seed = 3});
    spmd::data::DistributedDataLoader resumed(source, global_batch, rows, {.seed = 3});
    const int64_t k = loader.batches_per_epoch() / 2;
    std::vector<int64_t> first;
    std::vector<int64_t> rest;
    for (int64_t i = 0; i < loader.batches_per_epoch() + 1; ++i) {
      const auto b = again.next_local();
      first.insert(first.end(), b.records.begin(), b.records.end());
      if (i == k - 1) resumed.restore(again.state());
    }
    for (int64_t i = k; i < loader.batches_per_epoch() + 1; ++i) {
      const auto b = resumed.next_local();
      rest.insert(rest.end(), b.records.begin(), b.records.end());
    }
    const size_t b = static_cast<size_t>(global_batch / spmd::process_count());
    if (k > 0 && std::vector<int64_t>(first.begin() + static_cast<std::ptrdiff_t>(k * b),
                                      first.end()) != rest) {
      throw spmd::Error("the resumed loader did not continue the sequence");
    }
    std::printf("ok resumed after %lld batches, the same remaining sequence\n",
                static_cast<long long>(k));
    return 0;
  } catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 1;
  }
}
