// Sets of process ids on the wire (wire::ProcessSet): the service's notices name many processes
// at once, and a list of ids would cost N ids per notice per receiver.
//
// The encoder picks the smaller of two forms: ascending, disjoint (first, count) ranges — one
// range for the common case of a block of consecutive ids — or a bitmap of ceil(max+1 / 8)
// bytes, which bounds any set of a cluster of N processes at N/8 bytes however scattered.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "protocol.pb.h"

namespace spmd {

// Encodes `ids`, which must be ascending, distinct and non-negative.
wire::ProcessSet encode_process_set(const std::vector<int>& ids);

// The ids of `set`, ascending, or an error naming what is wrong: a negative or odd-length range
// list, ranges out of order, overlapping or reaching num_processes, both forms at once, or a
// bitmap longer than the cluster needs or naming an id >= num_processes. Never allocates more
// than num_processes ids.
std::variant<std::vector<int>, std::string> decode_process_set(const wire::ProcessSet& set,
                                                               int num_processes);

}  // namespace spmd
