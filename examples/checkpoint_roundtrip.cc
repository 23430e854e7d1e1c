// Issue example for seed 000's "distributed checkpointing": every process saves its shards of a
// small training state, which is then restored onto another layout and checked value by value.
//   w: float32 (8, 6), element (i, j) = i * 6 + j, rows split over a 1-D mesh 'x' of every device
//   b: int32 (6,), 0..5, replicated
// The checkpoint lands in DIR (a Zarr v2 directory any Zarr reader opens); w comes back split by
// columns instead, P(None, "x").
//
//   spmdrun -n 4 --cpu-devices 2 -- ./checkpoint_roundtrip /tmp/ckpt
#include <spmd/spmd.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: checkpoint_roundtrip DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  spmd::distributed::initialize();
  const int64_t n = spmd::device_count();
  if (8 % n != 0) {
    std::fprintf(stderr,
                 "checkpoint_roundtrip: w has 8 rows, which cannot be split over %lld devices; "
                 "run with a device count that divides 8 (1, 2, 4 or 8)\n",
                 static_cast<long long>(n));
    return 2;
  }
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  std::vector<float> w(size_t{8} * 6);
  std::iota(w.begin(), w.end(), 0.0f);
  std::vector<int32_t> b(6);
  std::iota(b.begin(), b.end(), 0);
  const auto w_host = spmd::HostArray::from_vector(w, {8, 6});
  const auto b_host = spmd::HostArray::from_vector(b, {6});
  const spmd::checkpoint::Tree state = {
      {"w", spmd::device_put(w_host, spmd::NamedSharding(mesh, spmd::P("x", spmd::None)))},
      {"b", spmd::device_put(b_host, spmd::NamedSharding(mesh, spmd::P()))},
  };
  spmd::checkpoint::save(dir, state, {.metadata = {.step = 1}});
  if (spmd::process_index() == 0) std::printf("saved %s (committed: yes)\n", dir.c_str());

  const auto restored = spmd::checkpoint::restore(
      dir, {{"w", spmd::NamedSharding(mesh, spmd::P(spmd::None, "x")).clone()},
            {"b", spmd::NamedSharding(mesh, spmd::P()).clone()}});
  bool same = true;
  for (const auto& [name, whole] : {std::pair{"w", &w_host}, std::pair{"b", &b_host}}) {
    for (const auto& shard : restored.at(name).addressable_shards()) {
      same = same && shard.data == whole->slice(shard.index);
    }
  }
  std::printf("restored w onto %s: every value matches: %s\n",
              restored.at("w").sharding().to_string().c_str(), same ? "yes" : "no");
  return same ? 0 : 1;
}
