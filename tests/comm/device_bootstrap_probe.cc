// comm/device_comm_bootstrap.h across the processes of a job (run under spmdrun, 3 processes):
// the id every rank gets is the one rank 0 made, a new generation gets a new id, equal first
// calls pass, a rank whose first call differs makes every rank raise CollectiveMismatch naming
// it, and a rank that never arrives is DeadlineExceeded naming it. Prints "[rank] ok …" and
// exits 0 only when every check passed on this process.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "comm/device_comm_bootstrap.h"
#include "spmd/distributed.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

using namespace spmd;
using std::chrono::milliseconds;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what.c_str());
    ++failures;
  }
}

DeviceCommGroup group_of(uint64_t generation) {
  DeviceCommGroup g{"probe:0,1,2", generation, process_index(), {}};
  for (int p = 0; p < process_count(); ++p) g.processes.push_back(p);
  return g;
}

Fingerprint call(uint64_t count) {
  return {0, 42, CollectiveOp::kAllReduce, DType::kFloat32, ReduceOp::kSum, -1, count};
}

}  // namespace

int main() {
  distributed::initialize();
  distributed::Client& client = distributed::client();
  const int rank = process_index();
  const auto made_here = [] { return "id made by pid " + std::to_string(getpid()); };

  // The id: rank 0's, the same for every rank; generation 1's differs from generation 0's.
  const std::string id0 =
      exchange_device_comm_id(client, group_of(0), made_here, milliseconds(30000));
  const std::string id1 = exchange_device_comm_id(
      client, group_of(1), [&] { return made_here() + " again"; }, milliseconds(30000));
  client.key_value_set("probe/id/" + std::to_string(rank), id0);
  client.wait_at_barrier("probe/ids", milliseconds(30000));
  for (int r = 0; r < process_count(); ++r) {
    expect(
        client.blocking_key_value_get("probe/id/" + std::to_string(r), milliseconds(1000)) == id0,
        "rank " + std::to_string(r) + " got another id");
  }
  expect(id0.rfind("id made by pid ", 0) == 0 && id1 != id0, "generation 1 reused the id");
  if (rank == 0) expect(id0 == made_here(), "rank 0's id is not its own");

  // Equal first calls pass.
  check_first_call(client, group_of(0), call(1024), milliseconds(30000));

  // Rank 2's first call differs: every rank is told, naming the other side.
  try {
    check_first_call(client, group_of(2), call(rank == 2 ? 2048 : 1024), milliseconds(30000));
    expect(false, "a mismatch went unnoticed");
  } catch (const CollectiveMismatch& e) {
    const std::string m = e.what();
    expect(m.find(rank == 2 ? "process 0" : "process 2") != std::string::npos, "mismatch: " + m);
  }

  // Rank 1 never reaches generation 3's first call: ranks 0 and 2 are told it is rank 1.
  if (rank != 1) {
    try {
      check_first_call(client, group_of(3), call(1024), milliseconds(1000));
      expect(false, "a missing rank went unnoticed");
    } catch (const DeadlineExceeded& e) {
      const std::string m = e.what();
      expect(m.find("rank(s) 1 had not reached") != std::string::npos, "deadline: " + m);
    }
  }
  client.wait_at_barrier("probe/done", milliseconds(30000));
  if (failures == 0) std::printf("ok device communicator bootstrap\n");
  distributed::shutdown();
  return failures == 0 ? 0 : 1;
}
