// Point-to-point bookkeeping of one process group: the sequence number of every (sender,
// receiver) pair's messages, and the messages between two ranks of the same process, which go
// through memory. A value type with no lock of its own: ProcessGroup guards it with the lock its
// local participants wait on, so a receive can wait for a send.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace spmd {

class LocalMailbox {
 public:
  // The next sequence number of messages from `sender` to `receiver` (group ranks), on the
  // sending side and on the receiving side: matched in program order per pair.
  uint64_t next_sent(int sender, int receiver) { return sent_[{sender, receiver}]++; }
  uint64_t next_received(int sender, int receiver) { return received_[{sender, receiver}]++; }

  // A message between two ranks of this process.
  void post(int sender, int receiver, const std::byte* data, size_t bytes) {
    boxes_[{sender, receiver}].emplace_back(data, data + bytes);
  }
  bool has(int sender, int receiver) const {
    const auto it = boxes_.find({sender, receiver});
    return it != boxes_.end() && !it->second.empty();
  }
  // The oldest message from `sender` to `receiver`; has() must be true.
  std::vector<std::byte> take(int sender, int receiver) {
    auto& box = boxes_.at({sender, receiver});
    std::vector<std::byte> message = std::move(box.front());
    box.pop_front();
    return message;
  }

 private:
  std::map<std::pair<int, int>, uint64_t> sent_;
  std::map<std::pair<int, int>, uint64_t> received_;
  std::map<std::pair<int, int>, std::deque<std::vector<std::byte>>> boxes_;
};

}  // namespace spmd
