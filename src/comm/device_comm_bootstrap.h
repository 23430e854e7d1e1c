// What every rank of a device communicator (device_collectives.h) agrees on before its first
// collective, through the coordination service's key-value store, as XLA passes NCCL's ids:
// - the communicator's unique id: rank 0 makes it and stores it; the others wait for it. One id
//   per group and generation (a communicator rebuilt after its watchdog tripped is a new
//   generation, with a fresh id);
// - the first call's fingerprint: each rank stores its own and compares it with every other
//   rank's, so that processes running different programs get CollectiveMismatch naming both
//   calls, as on CPU, instead of an NCCL collective that never matches up.
// Keys live under spmd/device_comm/<group>/<generation>/. Every wait has a deadline, after which
// DeadlineExceeded names the ranks that never wrote. Thread-safe (the client is).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/fingerprint.h"
#include "spmd/coordination_client.h"

namespace spmd {

struct DeviceCommGroup {
  std::string name;         // the group's stable name ("dp:0,1,2,3")
  uint64_t generation = 0;  // 0, then one more per rebuild
  int rank = 0;
  std::vector<int> processes;  // the process id of each rank
};

// Rank 0: make_id() stored and returned; other ranks: rank 0's id, waited for up to `timeout`.
std::string exchange_device_comm_id(distributed::Client& client, const DeviceCommGroup& group,
                                    const std::function<std::string()>& make_id,
                                    std::chrono::milliseconds timeout);

// Publishes `mine` and compares it with every rank's: CollectiveMismatch (fingerprint.h's
// mismatch_message) for the first rank whose call differs; DeadlineExceeded naming the ranks
// that had not published within `timeout`.
void check_first_call(distributed::Client& client, const DeviceCommGroup& group,
                      const Fingerprint& mine, std::chrono::milliseconds timeout);

}  // namespace spmd
