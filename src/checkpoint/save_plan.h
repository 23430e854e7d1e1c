// A save, planned: which chunk files this process writes from which shard bytes, the record of
// every array, and this process's proposal to the others (save_agreement.h). Planning never
// throws: a tree that fails this process's checks (a bad name, shards that are not a grid, a copy
// that cannot be allocated) becomes a "no" vote, so the process still takes part in the save and
// every process raises the same error. Executing runs the protocol with the other processes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/metadata.h"
#include "checkpoint/save_agreement.h"
#include "runtime/session_work.h"
#include "spmd/checkpoint.h"

namespace spmd::checkpoint {

struct ChunkJob {
  std::string array;  // its name in the tree
  std::string key;    // its chunk key
  const HostArray* data = nullptr;
  Index index;  // where the shard sits in the array
};

struct SavePlan {
  SaveProposal proposal;    // what this process tells process 0, its vote included
  CheckpointRecord record;  // checksums still empty
  std::vector<ChunkJob> jobs;
  std::vector<HostArray> snapshot;  // the bytes jobs point at, when the plan owns a copy
};

// Plans this process's part of saving `tree` to `dir`. With `copy`, the plan holds its own copy
// of the shards it writes (for saving in the background).
SavePlan plan_save(const std::string& dir, const Tree& tree, const SaveOptions& options, bool copy);

// The key under which the processes' n-th saves of `dir` this session meet in the coordination
// service: the path's hash and n. Taken once per save() call, before anything that can fail, in
// every process alike, so no failure can skew it; saves of different paths never meet.
std::string pairing_key(const std::string& dir);

// `options` with its timeout given: the job's collective timeout when it has none (wait_timeout()).
// Every function below takes options so filled.
SaveOptions with_timeout(const SaveOptions& options);

// Runs the save (checkpoint.h's protocol) within `work`, whose process index and count it uses
// throughout. Collective.
void execute_save(const SavePlan& plan, const std::string& dir, const SaveOptions& options,
                  SessionWork& work, const std::string& key);

// The session work a save of `dir` runs as, begun (session_work.h).
std::unique_ptr<SessionWork> begin_save_work(const std::string& dir, const SaveOptions& options);

}  // namespace spmd::checkpoint
