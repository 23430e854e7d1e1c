// broadcast_one_to_all: agree on the one source, then a broadcast from it.
#include <fmt/format.h>

#include "spmd/communicator.h"
#include "spmd/error.h"
#include "spmd/multihost.h"
#include "spmd/runtime.h"

namespace spmd::multihost {

HostArray broadcast_one_to_all(const HostArray& in, bool is_source) {
  Communicator world = spmd::world();
  std::vector<int32_t> flags(world.size());
  const int32_t mine = is_source ? 1 : 0;
  world.all_gather(std::span<const int32_t>(&mine, 1), flags);
  int source = -1;
  int sources = 0;
  for (int p = 0; p < world.size(); ++p) {
    if (flags[p] != 0) {
      ++sources;
      if (source < 0) source = p;
    }
  }
  if (sources != 1) {
    throw InvalidArgument(fmt::format(
        "broadcast_one_to_all: {} processes passed is_source = true; exactly one must", sources));
  }
  HostArray out = HostArray::zeros(in.dtype(), in.shape());
  world.broadcast(in.dtype(), in.bytes().data(), out.mutable_bytes().data(),
                  static_cast<size_t>(in.size()), source);
  return out;
}

HostArray broadcast_one_to_all(const HostArray& in) {
  return broadcast_one_to_all(in, process_index() == 0);
}

}  // namespace spmd::multihost
