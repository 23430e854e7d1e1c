// What other processes are doing now, for a timeout's error: asks the coordination service's
// live view (status_board.h) and describes the processes named.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace spmd {

class CoordClient;

// How long an error waits for the service's answer before leaving the description out.
inline constexpr std::chrono::milliseconds kPeersNowTimeout{2000};

// " Now: process 3 (host b, pid 77) is in barrier 'epoch-end' #12 since 41 s; …." for the first
// few `processes`, or "" when `coord` is null, the list is empty, or the service does not answer
// in time. Never throws.
std::string describe_peers_now(const CoordClient* coord, const std::vector<int>& processes);

}  // namespace spmd
