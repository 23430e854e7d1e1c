#include "comm/fingerprint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cstring>
#include <vector>

namespace spmd {
namespace {

constexpr const char* kOpNames[] = {"all_reduce", "all_gather", "reduce_scatter",
                                    "all_to_all", "broadcast",  "permute",
                                    "send_recv",  "barrier",    "all_to_all_v"};

bool reduces(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter;
}

// Every supported host is little-endian (message_header.h), so a field's wire bytes are its
// memory bytes: encoding is a handful of moves, which matters on the small-message path.
static_assert(std::endian::native == std::endian::little, "the wire format is little-endian");

template <typename T>
void put(FingerprintBytes& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof(T));
}

template <typename T>
T get(const FingerprintBytes& b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

}  // namespace

const char* op_name(CollectiveOp op) { return kOpNames[static_cast<int>(op)]; }

std::string Fingerprint::describe() const {
  std::string detail;
  if (reduces(op)) {
    detail = fmt::format("{}{}, ", reduce_op_name(reduce), then ? " then an epilogue" : "");
  } else if (op == CollectiveOp::kBroadcast) {
    detail = fmt::format("root {}, ", root);
  }
  if (op == CollectiveOp::kBarrier) return fmt::format("barrier #{}", sequence);
  return fmt::format("{} #{} ({}{} x {})", kOpNames[static_cast<int>(op)], sequence, detail,
                     dtype_name(dtype), count);
}

// Layout: sequence u64 | group u64 | count u64 | root i32 | op u8 | dtype u8 | reduce u8 |
// flags u8 (bit 0: then; the others 0)
FingerprintBytes encode(const Fingerprint& f) {
  FingerprintBytes b{};
  put(b, 0, f.sequence);
  put(b, 8, f.group);
  put(b, 16, f.count);
  put(b, 24, f.root);
  b[28] = static_cast<uint8_t>(f.op);
  b[29] = static_cast<uint8_t>(f.dtype);
  b[30] = static_cast<uint8_t>(f.reduce);
  b[31] = f.then ? 1 : 0;
  return b;
}

std::optional<Fingerprint> decode(const FingerprintBytes& b) {
  if (b[28] > static_cast<uint8_t>(CollectiveOp::kAllToAllV) ||
      b[29] > static_cast<uint8_t>(DType::kFloat64) ||
      b[30] > static_cast<uint8_t>(ReduceOp::kMax) || b[31] > 1) {
    return std::nullopt;
  }
  Fingerprint f;
  f.sequence = get<uint64_t>(b, 0);
  f.group = get<uint64_t>(b, 8);
  f.count = get<uint64_t>(b, 16);
  f.root = get<int32_t>(b, 24);
  f.op = static_cast<CollectiveOp>(b[28]);
  f.dtype = static_cast<DType>(b[29]);
  f.reduce = static_cast<ReduceOp>(b[30]);
  f.then = b[31] == 1;
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
  if (mine.then != theirs.then) differ.emplace_back("epilogue");
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
