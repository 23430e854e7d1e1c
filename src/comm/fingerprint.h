// What every collective call carries so that participants making different calls fail with
// CollectiveMismatch naming both calls, instead of hanging or returning garbage (seed 001's
// pitfalls: different shapes, a process that left a loop early, a different order).
//
// The wire form is 32 bytes, little-endian, every field validated when decoded. Pure;
// thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "spmd/dtype.h"
#include "spmd/reduce_op.h"

namespace spmd {

enum class CollectiveOp : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kPermute,
  kSendRecv,
  kBarrier,
  kAllToAllV,  // counts differ per pair; `count` is 0 and each message's length is checked
};

struct Fingerprint {
  uint64_t sequence = 0;  // the call's number in its group, from 0
  uint64_t group = 0;     // the communicator's stable id
  CollectiveOp op = CollectiveOp::kBarrier;
  DType dtype = DType::kFloat32;
  ReduceOp reduce = ReduceOp::kSum;  // meaningful for reducing ops only
  int32_t root = -1;                 // meaningful for broadcast only
  uint64_t count = 0;                // elements per participant
  bool then = false;                 // all_reduce with an epilogue (all_reduce_then)

  bool operator==(const Fingerprint&) const = default;
  // "all_reduce #7 (sum, float32 x 1024)", "broadcast #3 (root 0, int32 x 16)".
  std::string describe() const;
};

// "all_reduce", "send_recv", …: a string with static storage.
const char* op_name(CollectiveOp op);

inline constexpr size_t kFingerprintBytes = 32;
using FingerprintBytes = std::array<uint8_t, kFingerprintBytes>;

FingerprintBytes encode(const Fingerprint& f);

// nullopt when any field is out of range (an unknown op, dtype or reduce op, reserved bytes not
// zero): bytes from the network are never trusted.
std::optional<Fingerprint> decode(const FingerprintBytes& bytes);

// The error every participant raises when `mine` (this process's call) and `theirs` (process
// `their_process`'s) differ, naming both calls and what differs.
std::string mismatch_message(const Fingerprint& mine, int my_process, const Fingerprint& theirs,
                             int their_process);

}  // namespace spmd
