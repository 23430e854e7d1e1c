// A save, planned: which chunk files this process writes from which shard bytes, and the record
// of every array. Planning checks the tree (names, a grid of chunks) before anything is written;
// executing runs the commit protocol with the other processes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/metadata.h"
#include "spmd/checkpoint.h"

namespace spmd::checkpoint {

struct ChunkJob {
  std::string array;  // its name in the tree
  std::string key;    // its chunk key
  const HostArray* data = nullptr;
  Index index;  // where the shard sits in the array
};

struct SavePlan {
  CheckpointRecord record;  // checksums still empty
  std::vector<ChunkJob> jobs;
  std::vector<HostArray> snapshot;  // the bytes jobs point at, when the plan owns a copy
};

// Plans this process's part of saving `tree`. With `copy`, the plan holds its own copy of the
// shards it writes (for saving in the background). Throws InvalidArgument for a bad or
// conflicting name ("a" and "a/b") or a sharding whose shards do not form a grid.
SavePlan plan_save(const Tree& tree, const SaveOptions& options, bool copy);

// The number of this save among the session's saves: equal on every process, since saves are
// collective and made in the same order. Names the save's keys in the coordination service.
uint64_t next_save_sequence();

// Writes the plan's chunks and runs the commit protocol (see checkpoint.h). Collective.
void execute_save(const SavePlan& plan, const std::string& dir, const SaveOptions& options,
                  uint64_t sequence);

}  // namespace spmd::checkpoint
