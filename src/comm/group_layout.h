// Who takes part in a communicator and where they live: the pure bookkeeping every collective
// and every error message uses. Participants are global devices, numbered by rank in the order
// given; the processes owning them are the group's "positions", in ascending process order.
// Pure; thread-safe once built.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/runtime_state.h"

namespace spmd {

struct GroupLayout {
  uint64_t id = 0;
  std::vector<int> devices;                // rank -> global device id
  std::vector<int> rank_position;          // rank -> position of its process
  std::vector<int> processes;              // position -> process index, ascending
  std::vector<std::string> hosts;          // position -> host id
  std::vector<std::vector<int>> ranks_of;  // position -> its ranks, ascending
  int self = 0;                            // this process's position
  std::vector<int> local_ranks;            // ranks_of[self]
  std::vector<int> all_positions;          // 0 … positions()-1

  int size() const { return static_cast<int>(devices.size()); }
  int positions() const { return static_cast<int>(processes.size()); }
  bool same_host(int position) const { return hosts[position] == hosts[self]; }
};

// The layout of a group of `devices` (global ids, rank order) seen from process
// `view.process_index`. Throws InvalidArgument when the list is empty, names a device that does
// not exist or names one twice, and FailedPrecondition when this process owns none of them (it
// has no part in the group).
GroupLayout make_group_layout(std::span<const int> devices, uint64_t id, const DeviceView& view);

// A group id every member computes alike: a hash of the device list and `generation` (how many
// groups with this list the process made before).
uint64_t group_id_for(std::span<const int> devices, uint64_t generation);

}  // namespace spmd
