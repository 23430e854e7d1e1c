// spmd::data::DistributedDataLoader — global batches from every process's share of a source:
// sharded, deterministically shuffled, resumable, and with the same number of batches in every
// process, so that no process leaves a training loop early (seed 001's "last batch" hang).
//
// Each epoch, the records are put in a global order: a permutation of [0, n) that depends only on
// the seed and the epoch (a Feistel bijection with cycle walking, computed per index — no index
// array, no shuffle buffer) and is therefore identical in every process; or the identity without
// shuffling. Shard s of `count` takes the positions s, s + count, s + 2·count, … of that order —
// the strided assignment, which gives the first n % count shards one record more than the others
// (grain's even split) — or, with ShardOptions::drop_remainder, only the first
// (n / count)·count positions, so every shard holds n / count.
//
// Global batch k of B records is positions [k·B, (k+1)·B) of the global order: each process
// contributes its local rows [k·b, (k+1)·b), b = B / count, as its part of the global array
// (rows in process order). Every process yields ceil(n / B) batches per epoch; positions past n
// in the last batch are padding — zeros, with `mask` false — or, with
// LoaderOptions::drop_remainder, the last partial batch is dropped (floor(n / B) batches).
//
// Thread safety: a loader is used from one thread; its prefetching thread is internal.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "spmd/array.h"
#include "spmd/data_source.h"
#include "spmd/sharding.h"

namespace spmd::data {

struct ShardOptions {
  // This shard and the number of shards; -1: process_index() and process_count().
  int shard_index = -1;
  int shard_count = -1;
  // Give every shard n / count records, dropping the n % count left over.
  bool drop_remainder = false;
};

struct LoaderOptions {
  ShardOptions shard;
  bool shuffle = true;
  uint64_t seed = 0;
  // Drop the last global batch when it is not full, instead of padding it (with a mask).
  bool drop_remainder = false;
  // Batches prepared ahead by a background thread (0: none, each batch read on demand). -1, the
  // default: 2 when this host has at least two cores per spmd process on it, else 0 — where a
  // process has one core, a reading thread only competes with the step that consumes its batches
  // (see bench/RESULTS.md).
  int prefetch = -1;
};

// The position of record `position` of epoch `epoch` in the global order: a bijection of
// [0, n) for each (seed, epoch), computed on the fly in O(1) expected time.
int64_t shuffled_index(int64_t position, int64_t n, uint64_t seed, int64_t epoch);

// One global batch: `data` of shape (B, record shape…) laid out by the loader's sharding, and
// `mask` (bool, shape (B,), laid out the same way along its only dimension): true for real
// records, false for padding.
struct Batch {
  int64_t epoch = 0;
  int64_t index = 0;  // within the epoch
  Array data;
  Array mask;
};

// This process's part of one batch, for code that builds arrays itself.
struct LocalBatch {
  int64_t epoch = 0;
  int64_t index = 0;
  HostArray data;  // (b, record shape…)
  std::vector<bool> mask;
  std::vector<int64_t> records;  // the source index of each row, -1 for padding
};

class DistributedDataLoader {
 public:
  // `sharding` lays out the global batch of `global_batch_size` rows: its first dimension split
  // over devices so that each process holds global_batch_size / shard_count rows (e.g.
  // NamedSharding(Mesh(devices(), {"batch"}), P("batch"))); the mask is laid out by the spec's
  // first entry. Building global batches (next()) needs one shard per process, as the default
  // ShardOptions give; next_local() works with any. Throws InvalidArgument when the batch does
  // not divide evenly among the shards, or the shard options are out of range.
  DistributedDataLoader(std::shared_ptr<const Source> source, int64_t global_batch_size,
                        NamedSharding sharding, LoaderOptions options = {});
  ~DistributedDataLoader();
  DistributedDataLoader(const DistributedDataLoader&) = delete;
  DistributedDataLoader& operator=(const DistributedDataLoader&) = delete;

  // Batches per epoch: the same in every process.
  int64_t batches_per_epoch() const;
  // The records this shard holds per epoch (padding not counted).
  int64_t shard_records() const;

  // The next batch, moving on to the next epoch after the last one. An error in the prefetching
  // thread (a file that went bad) is thrown here.
  Batch next();
  // The same, for this process's part only.
  LocalBatch next_local();

  // Where the loader stands, as a small JSON text: the next batch's epoch and index, the seed,
  // and a fingerprint of the source and the options (the same in every process).
  std::string state() const;
  // Continues from a state() — of this or an earlier run — exactly where it left off. The next
  // global batch holds the same records even when the run resumes on another number of processes
  // (shards): batch k is positions [k·B, (k+1)·B) of the global order whatever the count, unless
  // ShardOptions::drop_remainder makes the records used depend on it. Throws InvalidArgument for
  // a state of another source or other options (a different shard count under
  // ShardOptions::drop_remainder included), or malformed text.
  void restore(const std::string& state);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spmd::data
