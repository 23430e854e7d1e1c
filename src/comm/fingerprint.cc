#include "comm/fingerprint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

namespace spmd {
namespace {

constexpr const char* kOpNames[] = {"all_reduce", "all_gather", "reduce_scatter",
                                    "all_to_all", "broadcast",  "permute",
                                    "send_recv",  "barrier",    "all_to_all_v"};

bool reduces(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter;
}

void put(FingerprintBytes& b, size_t at, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t get(const FingerprintBytes& b, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{b[at + i]} << (8 * i);
  return v;
}

}  // namespace

std::string Fingerprint::describe() const {
  std::string detail;
  if (reduces(op)) {
    detail = fmt::format("{}, ", reduce_op_name(reduce));
  } else if (op == CollectiveOp::kBroadcast) {
    detail = fmt::format("root {}, ", root);
  }
  if (op == CollectiveOp::kBarrier) return fmt::format("barrier #{}", sequence);
  return fmt::format("{} #{} ({}{} x {})", kOpNames[static_cast<int>(op)], sequence, detail,
                     dtype_name(dtype), count);
}

// Layout: sequence u64 | group u64 | count u64 | root i32 | op u8 | dtype u8 | reduce u8 | 0 u8
FingerprintBytes encode(const Fingerprint& f) {
  FingerprintBytes b{};
  put(b, 0, f.sequence, 8);
  put(b, 8, f.group, 8);
  put(b, 16, f.count, 8);
  put(b, 24, static_cast<uint32_t>(f.root), 4);
  b[28] = static_cast<uint8_t>(f.op);
  b[29] = static_cast<uint8_t>(f.dtype);
  b[30] = static_cast<uint8_t>(f.reduce);
  b[31] = 0;
  return b;
}

std::optional<Fingerprint> decode(const FingerprintBytes& b) {
  if (b[28] > static_cast<uint8_t>(CollectiveOp::kAllToAllV) ||
      b[29] > static_cast<uint8_t>(DType::kFloat64) ||
      b[30] > static_cast<uint8_t>(ReduceOp::kMax) || b[31] != 0) {
    return std::nullopt;
  }
  Fingerprint f;
  f.sequence = get(b, 0, 8);
  f.group = get(b, 8, 8);
  f.count = get(b, 16, 8);
  f.root = static_cast<int32_t>(static_cast<uint32_t>(get(b, 24, 4)));
  f.op = static_cast<CollectiveOp>(b[28]);
  f.dtype = static_cast<DType>(b[29]);
  f.reduce = static_cast<ReduceOp>(b[30]);
  return f;
}

std::string mismatch_message(const Fingerprint& mine, int my_process, const Fingerprint& theirs,
                             int their_process) {
  std::vector<std::string> differ;
  if (mine.group != theirs.group) differ.emplace_back("communicator");
  if (mine.sequence != theirs.sequence) differ.emplace_back("call number");
  if (mine.op != theirs.op) differ.emplace_back("operation");
  if (mine.dtype != theirs.dtype) differ.emplace_back("dtype");
  if (mine.count != theirs.count) differ.emplace_back("element count");
  if (mine.reduce != theirs.reduce && reduces(mine.op)) differ.emplace_back("reduce op");
  if (mine.root != theirs.root && mine.op == CollectiveOp::kBroadcast) {
    differ.emplace_back("root");
  }
  return fmt::format(
      "collective mismatch: process {} called {} but process {} called {} (different {}). Every "
      "process must make the same collective calls in the same order with the same shapes; "
      "look for a branch on process_index(), a loop some processes leave early, or per-process "
      "shapes",
      my_process, mine.describe(), their_process, theirs.describe(), fmt::join(differ, ", "));
}

}  // namespace spmd
