// Prints spmd::random's values as one JSON object, for random_jax_test.py to compare with JAX's:
// keys from seeds, splits, fold_ins, and bits of every width, eager and sharded under jit over
// this process's 4 CPU devices.
#include <spmd/spmd.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

namespace random = spmd::random;
using nlohmann::json;

template <class T>
json values(const spmd::Array& a) {
  const spmd::HostArray h = spmd::multihost::process_allgather(a);
  json out = json::array();
  for (T v : h.data<T>()) out.push_back(v);
  return out;
}

json bits_of(const spmd::Array& key, const spmd::Shape& shape, spmd::DType dtype) {
  const spmd::Array b = random::bits(key, shape, dtype);
  switch (dtype) {
    case spmd::DType::kUInt8:
      return values<uint8_t>(b);
    case spmd::DType::kUInt16:
      return values<uint16_t>(b);
    case spmd::DType::kUInt64:
      return values<uint64_t>(b);
    default:
      return values<uint32_t>(b);
  }
}

}  // namespace

int main() {
  spmd::distributed::initialize({.num_processes = 1, .num_cpu_devices = 4});
  json out;
  for (int64_t seed : {0, 1, 42, 1701, -1, -123456, 2147483647}) {
    const spmd::Array key = random::PRNGKey(seed);
    const std::string s = std::to_string(seed);
    out["key"][s] = values<uint32_t>(key);
    out["split3"][s] = values<uint32_t>(random::split(key, 3));
    out["fold_in"][s] = values<uint32_t>(random::fold_in(key, 7));
    out["fold_in_big"][s] = values<uint32_t>(random::fold_in(key, 4000000000u));
    for (auto [name, dtype] : {std::pair{"u8", spmd::DType::kUInt8},
                               {"u16", spmd::DType::kUInt16},
                               {"u32", spmd::DType::kUInt32},
                               {"u64", spmd::DType::kUInt64}}) {
      out["bits"][s][name] = bits_of(key, {3, 5, 7}, dtype);
    }
    out["bits_of_folded"][s] = values<uint32_t>(random::bits(random::fold_in(key, 1), {4}));
  }
  // Sharded over a 2 x 2 mesh under jit, gathered.
  const spmd::Mesh mesh(spmd::devices(), {2, 2}, {"a", "b"});
  const spmd::Array key =
      spmd::device_put(random::PRNGKey(42), spmd::NamedSharding(mesh, spmd::P()));
  auto sharded = spmd::jit(
      [](const spmd::Tensor& k) {
        return random::bits(k, {16, 10});
      },
      {.out_shardings = {spmd::NamedSharding(mesh, spmd::P("a", "b"))}});
  out["sharded_16x10"] = values<uint32_t>(sharded(key));
  std::cout << out.dump() << "\n";
  spmd::distributed::shutdown();
  return 0;
}
