// Which bytes move where when an array changes sharding: for every device of the target
// sharding, the parts of its new shard and the source device each part comes from. Pure and
// deterministic: every process computes the same plan, so senders and receivers agree on the
// order of the bytes without exchanging it.
#pragma once

#include <optional>
#include <vector>

#include "spmd/sharding.h"

namespace spmd {

struct Transfer {
  Device source;       // holds the part now
  Device destination;  // holds it after
  Index box;           // the part, in global coordinates
};

// The transfers that build every shard of `to` from the shards of `from` (both maps of the same
// global shape). Each element of each destination shard comes from exactly one source device:
// the destination itself when it already holds it, else a holder in the destination's process,
// else one of the holders chosen by the destination's id (spreading the load over replicas).
// Ordered by destination (in `to`'s order), then by source tile (in `from`'s order).
std::vector<Transfer> plan_reshard(const std::vector<DeviceIndex>& from,
                                   const std::vector<DeviceIndex>& to);

// The intersection of two boxes, or nullopt when it is empty.
std::optional<Index> intersect(const Index& a, const Index& b);

}  // namespace spmd
