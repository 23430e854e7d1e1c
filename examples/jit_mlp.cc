// A two-layer MLP forward written once on global shapes and run by spmd::jit, data-parallel and
// Megatron-style, checked against the same forward on whole arrays in this one process.
//
//   spmdrun -n 4 --cpu-devices 2 -- build/examples/jit_mlp
//
// Mesh (processes × local devices) = ("dp", "mp"). Data parallel: the batch split over dp, the
// weights replicated: no communication. Megatron: the first weight split by columns over mp and
// the second by rows, so the hidden layer never leaves its device and the second product ends in
// one psum over mp (printed by as_text()).
#include <spmd/spmd.h>

#include <cstdio>
#include <map>
#include <string>

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::NamedSharding;
using spmd::None;
using spmd::P;
using spmd::Tensor;

namespace {

constexpr int64_t kBatch = 64, kIn = 32, kHidden = 64, kOut = 16;

// Seeded values, the same in every process: the arrays are global.
Array make(const spmd::Shape& shape, const NamedSharding& sharding, int seed) {
  return spmd::make_array_from_callback(shape, sharding, [&](const spmd::Index& index) {
    spmd::Shape extents;
    for (const auto& s : index) extents.push_back(s.stop - s.start);
    spmd::HostArray h = spmd::HostArray::zeros(spmd::DType::kFloat32, extents);
    auto v = h.mutable_data<float>();
    const int64_t cols = shape.size() > 1 ? shape[1] : 1;
    const int64_t width = extents.size() > 1 ? extents[1] : 1;
    for (int64_t k = 0; k < static_cast<int64_t>(v.size()); ++k) {
      const int64_t r = index[0].start + k / width;
      const int64_t c = (extents.size() > 1 ? index[1].start : 0) + k % width;
      v[k] = static_cast<float>((r * cols + c) * 37 % 19 - 9 + seed) / 16.0f;
    }
    return h;
  });
}

std::map<std::string, Array> params(const std::map<std::string, NamedSharding>& layout) {
  return {{"w1", make({kIn, kHidden}, layout.at("w1"), 1)},
          {"b1", make({kHidden}, layout.at("b1"), 2)},
          {"w2", make({kHidden, kOut}, layout.at("w2"), 3)},
          {"b2", make({kOut}, layout.at("b2"), 4)}};
}

}  // namespace

int main() {
  spmd::distributed::initialize();
  const spmd::Mesh mesh(spmd::devices(), {spmd::process_count(), spmd::local_device_count()},
                        {"dp", "mp"});
  auto forward = spmd::jit(
      [](const std::map<std::string, Tensor>& p, const Tensor& x) {
        const Tensor h = jnp::relu(jnp::matmul(x, p.at("w1")) + p.at("b1"));
        return jnp::matmul(h, p.at("w2")) + p.at("b2");
      },
      {.name = "mlp"});

  // The reference: whole arrays on one device of this process.
  const spmd::Mesh alone({spmd::local_devices()[0]}, {"one"});
  const NamedSharding whole(alone, P());
  const std::map<std::string, NamedSharding> all_whole{
      {"w1", whole}, {"b1", whole}, {"w2", whole}, {"b2", whole}};
  const spmd::HostArray want = forward(params(all_whole), make({kBatch, kIn}, whole, 0)).to_host();

  const NamedSharding batch(mesh, P("dp")), replicated(mesh, P());
  const std::map<std::string, std::map<std::string, NamedSharding>> layouts{
      {"data-parallel",
       {{"w1", replicated}, {"b1", replicated}, {"w2", replicated}, {"b2", replicated}}},
      {"megatron",
       {{"w1", NamedSharding(mesh, P(None, "mp"))},
        {"b1", NamedSharding(mesh, P("mp"))},
        {"w2", NamedSharding(mesh, P("mp", None))},
        {"b2", replicated}}}};
  bool all_equal = true;
  for (const auto& [name, layout] : layouts) {
    const auto p = params(layout);
    const Array x = make({kBatch, kIn}, batch, 0);
    const spmd::HostArray got = spmd::multihost::process_allgather(forward(p, x));
    const bool equal = got == want;
    all_equal = all_equal && equal;
    std::printf("%s forward over %d devices equals the one-process forward: %s\n", name.c_str(),
                static_cast<int>(mesh.size()), equal ? "yes" : "no");
    if (name == "megatron" && spmd::process_index() == 0) {
      std::printf("%s", forward.lower(p, x).as_text().c_str());
    }
  }
  spmd::distributed::shutdown();
  return all_equal ? 0 : 1;
}
