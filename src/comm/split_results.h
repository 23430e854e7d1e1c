// Where the local participants of a split meet (Communicator::split): per split and colour, the
// lowest local participant creates the new group and leaves it, or the error, here for its local
// peers of that colour. A value type with no lock of its own: ProcessGroup guards it with the
// lock its local participants wait on.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace spmd {

class ProcessGroup;

class SplitResults {
 public:
  // The number of splits local participant `local` made before this one.
  uint64_t next_split(int local) {
    if (made_.size() <= static_cast<size_t>(local)) made_.resize(static_cast<size_t>(local) + 1, 0);
    return made_[static_cast<size_t>(local)]++;
  }

  void put(uint64_t split, int color, std::shared_ptr<ProcessGroup> group) {
    groups_[{split, color}] = std::move(group);
  }
  void put_error(uint64_t split, int color, std::string error) {
    errors_[{split, color}] = std::move(error);
  }
  bool has(uint64_t split, int color) const {
    return groups_.count({split, color}) != 0 || errors_.count({split, color}) != 0;
  }
  // The group, or the maker's error; has() must be true.
  std::shared_ptr<ProcessGroup> group(uint64_t split, int color) const {
    if (auto it = groups_.find({split, color}); it != groups_.end()) return it->second;
    return nullptr;
  }
  const std::string& error(uint64_t split, int color) const { return errors_.at({split, color}); }

 private:
  std::map<std::pair<uint64_t, int>, std::shared_ptr<ProcessGroup>> groups_;
  std::map<std::pair<uint64_t, int>, std::string> errors_;
  std::vector<uint64_t> made_;  // splits made, per local participant
};

}  // namespace spmd
