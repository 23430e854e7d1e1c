// Prints spmd::random's values as one JSON object, for random_jax_test.py to compare with JAX's:
// keys from seeds, splits, fold_ins, and bits of every width, eager and sharded under jit over
// this process's 4 CPU devices.
#include <spmd/spmd.h>

#include <bit>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
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

// Float values as their bit patterns (uint32 or uint64), so the comparison sees every bit.
json float_bits(const spmd::Array& a) {
  const spmd::HostArray h = spmd::multihost::process_allgather(a);
  json out = json::array();
  if (a.dtype() == spmd::DType::kFloat64) {
    for (double v : h.data<double>()) out.push_back(std::bit_cast<uint64_t>(v));
  } else {
    for (float v : h.data<float>()) out.push_back(std::bit_cast<uint32_t>(v));
  }
  return out;
}

// Half-precision values as their 16-bit patterns.
json half_bits(const spmd::Array& a) {
  const spmd::HostArray h = spmd::multihost::process_allgather(a);
  json out = json::array();
  const auto* p = reinterpret_cast<const uint16_t*>(h.bytes().data());
  for (size_t i = 0; i < h.nbytes() / 2; ++i) out.push_back(p[i]);
  return out;
}

json ints(const spmd::Array& a) {
  const spmd::Array wide = spmd::numpy::astype(a, spmd::DType::kInt64);
  return values<int64_t>(wide);
}

// Every sampler for one key, as the Python side computes them (random_jax_test.py: samplers).
json samplers(const spmd::Array& key) {
  using spmd::DType;
  json out;
  out["uniform"] = float_bits(random::uniform(key, {1000}));
  out["uniform_range"] = float_bits(random::uniform(key, {7, 11}, DType::kFloat32, -3.0, 5.5));
  out["uniform_f64"] = float_bits(random::uniform(key, {100}, DType::kFloat64));
  out["uniform_f16"] = half_bits(random::uniform(key, {4000}, DType::kFloat16, -3.0, 5.5));
  out["uniform_bf16"] = half_bits(random::uniform(key, {4000}, DType::kBFloat16, -3.0, 5.5));
  out["uniform_bf16_unit"] = half_bits(random::uniform(key, {100}, DType::kBFloat16));
  out["normal_f16"] = half_bits(random::normal(key, {4000}, DType::kFloat16));
  out["normal_bf16"] = half_bits(random::normal(key, {4000}, DType::kBFloat16));
  out["gumbel_f16"] = half_bits(random::gumbel(key, {4000}, DType::kFloat16));
  out["gumbel_bf16"] = half_bits(random::gumbel(key, {4000}, DType::kBFloat16));
  out["normal"] = float_bits(random::normal(key, {1 << 16}));
  out["truncated_normal"] = float_bits(random::truncated_normal(key, -2.0, 1.5, {1000}));
  out["gumbel"] = float_bits(random::gumbel(key, {1 << 16}));
  // The functions of a uniform draw, in float32 and the half types.
  out["exponential"] = float_bits(random::exponential(key, {1 << 16}));
  out["laplace"] = float_bits(random::laplace(key, {1 << 16}));
  out["logistic"] = float_bits(random::logistic(key, {1 << 16}));
  out["cauchy"] = float_bits(random::cauchy(key, {1 << 16}));
  out["lognormal"] = float_bits(random::lognormal(key, 0.7, {1 << 16}));
  for (auto [name, dtype] : {std::pair{"f16", DType::kFloat16}, {"bf16", DType::kBFloat16}}) {
    const std::string t(name);
    out["exponential_" + t] = half_bits(random::exponential(key, {4000}, dtype));
    out["laplace_" + t] = half_bits(random::laplace(key, {4000}, dtype));
    out["logistic_" + t] = half_bits(random::logistic(key, {4000}, dtype));
    out["cauchy_" + t] = half_bits(random::cauchy(key, {4000}, dtype));
    out["lognormal_" + t] = half_bits(random::lognormal(key, 0.7, {4000}, dtype));
  }
  out["bernoulli"] = ints(random::bernoulli(key, 0.3, {1000}));
  out["randint"] = ints(random::randint(key, {1000}, -5, 17));
  out["randint_u8"] = ints(random::randint(key, {100}, 0, 256, DType::kUInt8));
  out["randint_i16"] = ints(random::randint(key, {100}, -1000, 1000, DType::kInt16));
  out["randint_empty"] = ints(random::randint(key, {10}, 5, 5));
  out["randint_u32"] = ints(random::randint(key, {100}, 3, 2000000000, DType::kUInt32));
  const spmd::Array logits = spmd::numpy::reshape(
      spmd::numpy::astype(random::uniform(random::fold_in(key, 3), {21}), DType::kFloat32), {3, 7});
  out["categorical"] = ints(random::categorical(key, logits, -1));
  out["categorical_axis0"] = ints(random::categorical(key, logits, 0));
  out["permutation"] = ints(random::permutation(key, 20));
  out["permutation_big"] = ints(random::permutation(key, 100000));
  const spmd::Array x = spmd::numpy::reshape(random::randint(key, {4, 6}, 0, 100), {4, 6});
  out["permutation_rows"] = ints(random::permutation(key, x, 0));
  out["permutation_cols"] = ints(random::permutation(key, x, 1));
  out["choice"] = ints(random::choice(key, 10, {2, 3}));
  out["choice_unique"] = ints(random::choice(key, 10, {4}, false));
  // With probabilities, and from an array's slices.
  const spmd::Array w = random::uniform(random::fold_in(key, 5), {10});
  const spmd::Array w_big = random::uniform(random::fold_in(key, 6), {1000});
  const spmd::Array w_cols = random::uniform(random::fold_in(key, 8), {6});
  out["choice_p"] = ints(random::choice(key, 10, {50}, true, w));
  out["choice_p_unique"] = ints(random::choice(key, 10, {4}, false, w));
  out["choice_p_big"] = ints(random::choice(key, 1000, {200}, true, w_big));
  out["choice_cols"] = ints(random::choice(key, x, {3}, true, std::nullopt, 1));
  out["choice_cols_p"] = ints(random::choice(key, x, {2}, false, w_cols, 1));
  out["choice_rows_unique"] = ints(random::choice(key, x, {3}, false));
  // jnp.cumsum in XLA's order: one long line, and lines along an axis of a matrix.
  auto cumsum = spmd::jit([](const spmd::Tensor& t) {
    return std::vector<spmd::Tensor>{spmd::numpy::cumsum(t),
                                     spmd::numpy::cumsum(spmd::numpy::reshape(t, {50, 100}), 1)};
  });
  const std::vector<spmd::Array> sums = cumsum(random::uniform(random::fold_in(key, 7), {5000}));
  out["cumsum"] = float_bits(sums[0]);
  out["cumsum_rows"] = float_bits(sums[1]);
  return out;
}

// Typed keys (random_key.h), as random_jax_test.py's typed() computes them with jax.random.key.
json typed(int64_t seed) {
  json out;
  const random::Key key = random::key(seed);
  const random::Key keys = random::split(key, 3);
  out["impl"] = std::string(random::key_impl(key));
  out["dtype"] = std::string(random::Key::dtype_name());
  out["key_data"] = values<uint32_t>(random::key_data(key));
  out["split3"] = values<uint32_t>(random::key_data(keys));
  out["fold_in"] = values<uint32_t>(random::key_data(random::fold_in(keys[1], 9)));
  out["normal"] = float_bits(random::normal(keys[1], {50}));
  out["randint_of_last"] = ints(random::randint(keys[-1], {20}, 0, 1000));
  // Inside jit: key data in, wrapped, split and sampled there.
  auto traced = spmd::jit([](const spmd::Tensor& data) {
    const random::KeyTensor k = random::split(random::wrap_key_data(data), 2)[0];
    return random::uniform(k, {8});
  });
  out["jit_uniform"] = float_bits(traced(random::key_data(key)));
  return out;
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
    out["typed"][s] = typed(seed);
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
  for (int64_t seed : {0, 42, 1701})
    out["samplers"][std::to_string(seed)] = samplers(random::PRNGKey(seed));
  auto sharded_normal = spmd::jit(
      [](const spmd::Tensor& k) {
        return random::normal(k, {16, 10});
      },
      {.out_shardings = {spmd::NamedSharding(mesh, spmd::P("b", "a"))}});
  out["sharded_normal_16x10"] = float_bits(sharded_normal(key));
  std::cout << out.dump() << "\n";
  spmd::distributed::shutdown();
  return 0;
}
