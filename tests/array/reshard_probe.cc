// Run under spmdrun: reshards global arrays between row, column, 2-D, replicated, single-device
// and interleaved layouts with device_put, and exercises the multihost utilities, checking every
// shard's bytes against the global array (element = its flat index). Prints "ok …" per check, or
// "error …" and exits 1.
//
//   reshard_probe            every check
//   reshard_probe sync-mismatch   process 0 syncs at "alpha", the others at "beta"
//   reshard_probe errors          every misuse of device_put and multihost raises, everywhere
#include <spmd/spmd.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "global_array.h"

namespace {

using spmd::HostArray;
using spmd::Index;
using spmd::Shape;

using spmd::testing::global_array;

void check(const spmd::Array& a, const HostArray& g, const std::string& what) {
  const auto expected = a.sharding().addressable_devices();
  if (a.addressable_shards().size() != expected.size()) {
    throw spmd::Error(what + ": wrong number of shards");
  }
  for (const auto& s : a.addressable_shards()) {
    if (!(s.data == g.slice(s.index))) {
      throw spmd::Error(what + ": the shard of " + s.device.to_string() + " at " +
                        spmd::index_to_string(s.index) + " holds " + s.data.to_string());
    }
  }
  std::printf("ok %s\n", what.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "all";
  try {
    spmd::distributed::initialize();
    const int64_t np = spmd::process_count();
    const int64_t k = spmd::local_device_count();
    const int64_t n = spmd::device_count();
    const auto devices = spmd::devices();
    if (mode == "sync-mismatch") {
      try {
        spmd::multihost::sync_global_devices(spmd::process_index() == 0 ? "alpha" : "beta",
                                             std::chrono::seconds(20));
      } catch (const spmd::InvalidArgument& e) {
        const std::string m = e.what();
        if (m.find("\"alpha\"") == std::string::npos || m.find("\"beta\"") == std::string::npos) {
          throw spmd::Error("the mismatch does not name both sync points: " + m);
        }
        std::printf("ok mismatch named: %s\n", e.what());
        return 0;
      }
      throw spmd::Error("different sync points were not reported");
    }

    if (mode == "errors") {
      // Each call must throw `E` with `text` in its message, in every process.
      auto expect = [](const char* what, const std::string& text, auto&& call) {
        try {
          call();
        } catch (const spmd::Error& e) {
          if (std::string(e.what()).find(text) == std::string::npos) {
            throw spmd::Error(std::string(what) + ": unexpected message: " + e.what());
          }
          std::printf("ok %s raises: %s\n", what, e.what());
          return;
        }
        throw spmd::Error(std::string(what) + ": no error");
      };
      const spmd::Mesh line(devices, {"x"});
      const HostArray v = global_array({2 * n});
      expect("broadcast_one_to_all from everyone", "processes passed is_source = true",
             [&] { spmd::multihost::broadcast_one_to_all(v, true); });
      expect("broadcast_one_to_all from no one", "0 processes passed is_source",
             [&] { spmd::multihost::broadcast_one_to_all(v, false); });
      const HostArray uneven = global_array({spmd::process_index() + 1});
      expect("process_allgather of different shapes", "must pass the same shape",
             [&] { spmd::multihost::process_allgather(uneven, false); });
      const spmd::Array a = spmd::device_put(v, spmd::NamedSharding(line, spmd::P("x")));
      expect("device_put to a spec longer than the rank", "",
             [&] { spmd::device_put(a, spmd::NamedSharding(line, spmd::P(spmd::None, "x"))); });
      if (np > 1 && k > 1) {
        std::vector<spmd::Device> interleaved;
        for (int64_t j = 0; j < k; ++j) {
          for (int64_t p = 0; p < np; ++p) interleaved.push_back(devices[p * k + j]);
        }
        expect("host-local data of a process whose devices leave gaps", "with gaps", [&] {
          spmd::multihost::global_array_to_host_local_array(a, spmd::Mesh(interleaved, {"x"}),
                                                            spmd::P("x"));
        });
      }
      spmd::distributed::shutdown();
      return 0;
    }

    const HostArray g = global_array({4 * n, 2 * n});
    const spmd::Mesh line(devices, {"x"});
    const spmd::Mesh grid(devices, {np, k}, {"hosts", "local"});
    std::vector<spmd::Device> interleaved;
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t p = 0; p < np; ++p) interleaved.push_back(devices[p * k + j]);
    }
    std::vector<std::pair<std::string, std::shared_ptr<const spmd::Sharding>>> layouts = {
        {"rows", spmd::NamedSharding(line, spmd::P("x")).clone()},
        {"columns", spmd::NamedSharding(line, spmd::P(spmd::None, "x")).clone()},
        {"grid", spmd::NamedSharding(grid, spmd::P("hosts", "local")).clone()},
        {"grid-transposed", spmd::NamedSharding(grid, spmd::P("local", "hosts")).clone()},
        {"half-replicated", spmd::NamedSharding(grid, spmd::P("hosts")).clone()},
        {"replicated", spmd::NamedSharding(line, spmd::P()).clone()},
        {"device0", spmd::SingleDeviceSharding(devices[0]).clone()},
        {"interleaved", spmd::NamedSharding(spmd::Mesh(interleaved, {"x"}), spmd::P("x")).clone()},
    };
    // The dtype is given: under "device0" the other processes hold no shard to take it from.
    auto make = [&](const spmd::Sharding& s) {
      return spmd::make_array_from_callback(
          g.shape(), s, [&](const Index& i) { return g.slice(i); }, g.dtype());
    };
    for (const auto& [from_name, from] : layouts) {
      const spmd::Array a = make(*from);
      for (const auto& [to_name, to] : layouts) {
        check(spmd::device_put(a, *to), g, "reshard " + from_name + " -> " + to_name);
      }
      // The whole array on every process, whatever the layout.
      if (!(spmd::multihost::process_allgather(a) == g)) {
        throw spmd::Error("process_allgather of " + from_name + " differs from the global array");
      }
      std::printf("ok process_allgather %s\n", from_name.c_str());
    }
    check(spmd::device_put(g, *layouts[2].second), g, "device_put host -> grid");

    // Host-local data: each process's block of rows, and back.
    const int64_t p = spmd::process_index();
    const HostArray mine = g.slice({{p * 4 * k, (p + 1) * 4 * k}, {0, 2 * n}});
    const spmd::Array global =
        spmd::multihost::host_local_array_to_global_array(mine, line, spmd::P("x"));
    check(global, g, "host_local_array_to_global_array rows");
    if (!(spmd::multihost::global_array_to_host_local_array(make(*layouts[1].second), line,
                                                            spmd::P("x")) == mine)) {
      throw spmd::Error(
          "global_array_to_host_local_array of columns as rows is not this process's rows");
    }
    std::printf("ok global_array_to_host_local_array columns -> rows\n");

    // Host arrays gathered, stacked and tiled; broadcast from the last process.
    const HostArray small =
        HostArray::from_vector(std::vector<int32_t>{int32_t(p), int32_t(10 * p)}, {2});
    const HostArray stacked = spmd::multihost::process_allgather(small, false);
    const HostArray tiled = spmd::multihost::process_allgather(small, true);
    std::vector<int32_t> want;
    for (int64_t q = 0; q < np; ++q) {
      want.push_back(int32_t(q));
      want.push_back(int32_t(10 * q));
    }
    if (!(stacked == HostArray::from_vector(want, {np, 2})) ||
        !(tiled == HostArray::from_vector(want, {2 * np}))) {
      throw spmd::Error("process_allgather of host arrays: " + stacked.to_string() + " / " +
                        tiled.to_string());
    }
    std::printf("ok process_allgather host\n");
    const HostArray b = spmd::multihost::broadcast_one_to_all(small, p == np - 1);
    if (!(b == HostArray::from_vector(std::vector<int32_t>{int32_t(np - 1), int32_t(10 * (np - 1))},
                                      {2}))) {
      throw spmd::Error("broadcast_one_to_all gave " + b.to_string());
    }
    std::printf("ok broadcast_one_to_all\n");
    spmd::multihost::sync_global_devices("done");
    std::printf("ok sync_global_devices\n");
    spmd::distributed::shutdown();
  } catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    std::fflush(stdout);
    return 1;
  }
  return 0;
}
