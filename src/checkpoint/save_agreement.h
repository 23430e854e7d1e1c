// The first phase of a save: before anything is written, every process proposes what it will
// save, and process 0 decides for all. A process whose own checks failed still proposes, with
// its error (a "no" vote), so every process takes part in every save and none runs ahead.
//
// The verdict is "go" only when every process voted yes, all saved the same path and step, the
// same names with the same dtypes, global shapes, chunk shapes and shardings, and their writes
// cover every chunk of every array exactly once. Otherwise it is one error, naming the process
// and the leaf, that every process raises as the same exception type. Pure functions.
#pragma once

#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/metadata.h"
#include "coord/status.h"

namespace spmd::checkpoint {

// What kind of spmd::Error a failed save raises (the same in every process): the coordination
// service's codes, kInternal for a plain spmd::Error.
struct Verdict {
  StatusCode kind = StatusCode::kInternal;
  std::string error;  // empty: go
  bool ok() const { return error.empty(); }
};

// Throws the verdict's error as its kind (coord's throw_status).
[[noreturn]] void raise(const Verdict& verdict);
// The kind of the exception `e`: InvalidArgument, AlreadyExists, FailedPrecondition, or
// kInternal for any other.
StatusCode kind_of(const std::exception_ptr& e);

struct SaveProposal {
  Verdict vote;      // this process's own checks: a failure is a "no" with its reason
  std::string path;  // as the caller gave it
  std::optional<int64_t> step;
  bool overwrite = false;
  Format format = Format::kSpmd;
  // Every array's dtype, shape, chunk shape and sharding (checksums empty).
  std::map<std::string, ArrayRecord> arrays;
  // The chunk keys this process writes, per array.
  std::map<std::string, std::vector<std::string>> writes;
};

// The wire form through the coordination service (JSON; strings that are not UTF-8 are replaced,
// never thrown on).
std::string encode_proposal(const SaveProposal& proposal);
// A proposal that does not decode reads as a "no" vote saying so, naming `process`.
SaveProposal decode_proposal(const std::string& wire, int process);

// Process 0's decision over every process's proposal (index = process index).
Verdict decide(const std::vector<SaveProposal>& proposals);

// The verdict's wire form, with the temporary directory and save id of a "go".
struct GoMessage {
  Verdict verdict;
  std::string tmp;
  std::string save_id;
};
std::string encode_go(const GoMessage& go);
GoMessage decode_go(const std::string& wire);

}  // namespace spmd::checkpoint
