// assert_equal: a 64-bit hash of each process's value (its dtype, shape and bytes), gathered over
// the world communicator and compared.
#include <fmt/format.h>
#include <xxhash.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "spmd/communicator.h"
#include "spmd/error.h"
#include "spmd/multihost.h"
#include "spmd/runtime.h"

namespace spmd::multihost {
namespace {

uint64_t fingerprint(const HostArray& value) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  const auto dtype = static_cast<int32_t>(value.dtype());
  XXH3_64bits_update(state, &dtype, sizeof dtype);
  XXH3_64bits_update(state, value.shape().data(), value.shape().size() * sizeof(int64_t));
  XXH3_64bits_update(state, value.bytes().data(), value.nbytes());
  const uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return hash;
}

}  // namespace

void assert_equal(const HostArray& value, const std::string& what) {
  const int n = process_count();
  if (n == 1) return;
  const std::vector<int64_t> mine{std::bit_cast<int64_t>(fingerprint(value))};
  std::vector<int64_t> all(static_cast<size_t>(n));
  spmd::world().all_gather(mine, all);
  for (int p = 1; p < n; ++p) {
    if (all[static_cast<size_t>(p)] != all[0]) {
      throw InvalidArgument(fmt::format(
          "{}: process 0 and process {} hold different values ({} here, on process {}); pass the "
          "same value on every process, or build the array from each process's own part with "
          "make_array_from_process_local_data",
          what, p, value.to_string().substr(0, 200), process_index()));
    }
  }
}

}  // namespace spmd::multihost
