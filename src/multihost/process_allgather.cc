// process_allgather: a global array made fully replicated over its own devices (device_put moves
// exactly the missing parts), or host arrays gathered over the world communicator.
#include <fmt/format.h>

#include <cstring>

#include "spmd/communicator.h"
#include "spmd/error.h"
#include "spmd/multihost.h"
#include "spmd/runtime.h"
#include "spmd/sharding.h"

namespace spmd::multihost {

HostArray process_allgather(const Array& array) {
  // Collective in every process, even one that holds the whole array already: the others need
  // its part.
  if (process_count() == 1) return array.to_host();
  // Replicated over every device of the cluster, so that each process holds all of it.
  const NamedSharding everywhere(Mesh(devices(), {"all"}), PartitionSpec());
  const Array replicated = device_put(array, everywhere);
  return replicated.addressable_data(0);
}

HostArray process_allgather(const HostArray& local, bool tiled) {
  const int n = process_count();
  Shape shape = local.shape();
  if (tiled) {
    if (shape.empty()) {
      throw InvalidArgument("process_allgather(tiled=true) needs arrays of rank 1 or more");
    }
    shape[0] *= n;
  } else {
    shape.insert(shape.begin(), n);
  }
  HostArray out = HostArray::zeros(local.dtype(), shape);
  // The shapes must agree; the element count is in every call's fingerprint, the rank and dims
  // are checked here.
  Communicator world = spmd::world();
  std::vector<int64_t> mine = local.shape();
  mine.resize(8, -1);
  std::vector<int64_t> dims(mine.size() * n);
  world.all_gather(mine, dims);
  for (int p = 0; p < n; ++p) {
    const auto at = static_cast<std::ptrdiff_t>(static_cast<size_t>(p) * mine.size());
    if (!std::equal(mine.begin(), mine.end(), dims.begin() + at)) {
      throw CollectiveMismatch(fmt::format(
          "process_allgather: process {} has shape [{}] but process {} has another; every "
          "process must pass the same shape",
          process_index(), fmt::join(local.shape(), ", "), p));
    }
  }
  // Row-major, so stacking and tiling along axis 0 are both plain concatenation.
  world.all_gather(local.dtype(), local.bytes().data(), out.mutable_bytes().data(),
                   static_cast<size_t>(local.size()));
  return out;
}

}  // namespace spmd::multihost
