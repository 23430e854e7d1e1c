// Run under spmdrun: builds global arrays the three ways of seed 002 on several layouts and
// checks every addressable shard's bytes against the global array (element = its flat index).
// Each process's local data is computed here independently of the library's packing rules.
// Prints "ok LAYOUT" per layout, or "error …" and exits 1.
#include <spmd/spmd.h>

#include <cstdio>
#include <numeric>
#include <string>

#include "global_array.h"

namespace {

using spmd::HostArray;
using spmd::Index;
using spmd::Shape;

using spmd::testing::global_array;

// Rows [lo, hi) of every block `blocks` (each `rows` tall) stacked, all columns.
HostArray stack_rows(const HostArray& g, const std::vector<int64_t>& blocks, int64_t rows) {
  HostArray out =
      HostArray::zeros(g.dtype(), {static_cast<int64_t>(blocks.size()) * rows, g.shape()[1]});
  for (size_t i = 0; i < blocks.size(); ++i) {
    const int64_t r = static_cast<int64_t>(i);
    out.assign({{r * rows, (r + 1) * rows}, {0, g.shape()[1]}},
               g.slice({{blocks[i] * rows, (blocks[i] + 1) * rows}, {0, g.shape()[1]}}));
  }
  return out;
}

void check(const spmd::Array& a, const HostArray& g, const std::string& what) {
  for (const auto& s : a.addressable_shards()) {
    if (!(s.data == g.slice(s.index))) {
      throw spmd::Error(what + ": the shard of " + s.device.to_string() + " at " +
                        spmd::index_to_string(s.index) + " holds " + s.data.to_string());
    }
    if (s.device.process_index() != spmd::process_index())
      throw spmd::Error(what + ": foreign shard");
  }
  if (a.shape() != g.shape()) throw spmd::Error(what + ": wrong global shape");
}

// Builds the array all three ways and checks each.
void three_ways(const spmd::Sharding& sharding, const HostArray& g, const HostArray& local,
                const std::string& layout) {
  check(spmd::make_array_from_process_local_data(sharding, local), g, layout + " local");
  check(spmd::make_array_from_process_local_data(sharding, local, g.shape()), g,
        layout + " local+shape");
  std::vector<HostArray> per_device;
  for (const auto& e : sharding.devices_indices_map(g.shape())) {
    if (e.device.process_index() == spmd::process_index()) per_device.push_back(g.slice(e.index));
  }
  check(spmd::make_array_from_single_device_arrays(g.shape(), sharding, per_device), g,
        layout + " single-device");
  check(spmd::make_array_from_callback(g.shape(), sharding,
                                       [&](const Index& i) { return g.slice(i); }),
        g, layout + " callback");
  std::printf("ok %s\n", layout.c_str());
}

}  // namespace

int main() {
  try {
    spmd::distributed::initialize();
    const int64_t p = spmd::process_index();
    const int64_t np = spmd::process_count();
    const int64_t k = spmd::local_device_count();
    const int64_t n = spmd::device_count();
    const auto devices = spmd::devices();

    // Rows over every device: process p holds row blocks p*k … p*k+k-1.
    {
      const HostArray g = global_array({2 * n, 3});
      std::vector<int64_t> mine;
      mine.reserve(static_cast<size_t>(k));
      for (int64_t i = 0; i < k; ++i) mine.push_back(p * k + i);
      three_ways(spmd::NamedSharding(spmd::Mesh(devices, {"x"}), spmd::P("x")), g,
                 stack_rows(g, mine, 2), "rows");
    }
    // Columns over every device.
    {
      const HostArray g = global_array({3, 2 * n});
      const HostArray local = g.slice({{0, 3}, {2 * p * k, 2 * (p + 1) * k}});
      three_ways(spmd::NamedSharding(spmd::Mesh(devices, {"x"}), spmd::P(spmd::None, "x")), g,
                 local, "columns");
    }
    // A 2-D grid (processes x local devices), split both ways: this process holds one row
    // block and every column.
    {
      const HostArray g = global_array({2 * np, 2 * k});
      spmd::Mesh grid(devices, {np, k}, {"hosts", "local"});
      three_ways(spmd::NamedSharding(grid, spmd::P("hosts", "local")), g,
                 g.slice({{2 * p, 2 * p + 2}, {0, 2 * k}}), "grid");
    }
    // Replicated everywhere: every process passes the whole array.
    {
      const HostArray g = global_array({5, 2});
      three_ways(spmd::NamedSharding(spmd::Mesh(devices, {"x"}), spmd::P()), g, g, "replicated");
    }
    // Interleaved mesh order (device j of every process, then j+1): a process's row blocks are
    // not contiguous, so its local data packs them in global order.
    if (np > 1) {
      std::vector<spmd::Device> interleaved;
      for (int64_t j = 0; j < k; ++j) {
        for (int64_t q = 0; q < np; ++q)
          interleaved.push_back(devices[static_cast<size_t>(q * k + j)]);
      }
      const HostArray g = global_array({2 * n, 2});
      std::vector<int64_t> mine;
      mine.reserve(static_cast<size_t>(k));
      for (int64_t j = 0; j < k; ++j) mine.push_back(j * np + p);
      three_ways(spmd::NamedSharding(spmd::Mesh(interleaved, {"x"}), spmd::P("x")), g,
                 stack_rows(g, mine, 2), "interleaved");
    }
    spmd::distributed::shutdown();
    return 0;
  } catch (const spmd::Error& e) {
    std::printf("error %s\n", e.what());
    return 1;
  }
}
