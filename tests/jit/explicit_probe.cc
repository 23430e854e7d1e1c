// Prints, as one JSON object, what spmd makes of the programs explicit_jax_test.py runs in JAX:
// per program, the jit result's sharding ("out"), the result's type at trace time ("type"), or
// the trace-time error ("error": its class and message). Meshes over this process's 8 CPU devices:
// "e2" (x: 2, y: 4, both Explicit), "a2" (both Auto), "m2" (x Explicit, y Auto), "e1" (x: 8,
// Explicit). Inputs hold 0, 1, 2, … laid out as each program says; a uint32[2] input is a key.
#include <spmd/spmd.h>

#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

namespace jnp = spmd::numpy;
using nlohmann::json;
using spmd::AxisType;
using spmd::DType;
using spmd::None;
using spmd::P;
using spmd::Shape;
using spmd::Tensor;
using Args = std::vector<Tensor>;

struct Input {
  Shape shape;
  P spec;
  DType dtype = DType::kFloat32;
};

struct Program {
  std::string mesh;
  std::vector<Input> inputs;
  std::function<Tensor(const Args&)> fn;
};

Tensor sq_loss(const Tensor& x, const Tensor& w) {
  const Tensor y = jnp::matmul(x, w);
  return jnp::sum(y * y);
}

// The programs, by name, as explicit_jax_test.py's PROGRAMS.
std::map<std::string, Program> programs() {
  const Input a{{8, 16}, P("x", "y")};
  const Input rows{{8, 16}, P("x", None)};
  const Input cols{{8, 16}, P(None, "y")};
  const Input w{{16, 4}, P(None, "y")};
  const Input v{{64}, P("x")};
  std::map<std::string, Program> p;
  // Element-wise.
  p["add"] = {"e2", {a, a}, [](const Args& t) { return t[0] + t[1]; }};
  p["add_mixed_specs"] = {"e2", {rows, cols}, [](const Args& t) { return t[0] + t[1]; }};
  p["add_conflict"] = {
      "e2", {rows, {{8, 16}, P("y", None)}}, [](const Args& t) { return t[0] + t[1]; }};
  p["mul_duplicate_axis"] = {
      "e2", {rows, {{8, 16}, P(None, "x")}}, [](const Args& t) { return t[0] * t[1]; }};
  p["bias"] = {"e2", {rows, {{16}, P("y")}}, [](const Args& t) { return t[0] + t[1]; }};
  p["scalar_and_exp"] = {"e2", {a}, [](const Args& t) { return t[0] * 2.0f + jnp::exp(t[0]); }};
  p["where_scalar"] = {
      "e2", {a}, [](const Args& t) { return jnp::where(t[0] > 0.0f, t[0], 0.0f); }};
  p["where_conflict"] = {
      "e2", {a, rows}, [](const Args& t) { return jnp::where(t[0] > 0.0f, t[0], t[1]); }};
  p["astype"] = {"e2", {a}, [](const Args& t) { return jnp::astype(t[0], DType::kInt32); }};
  // Reductions.
  p["sum0"] = {"e2", {a}, [](const Args& t) { return jnp::sum(t[0], {0}); }};
  p["sum_all"] = {"e2", {a}, [](const Args& t) { return jnp::sum(t[0]); }};
  p["mean0"] = {"e2", {a}, [](const Args& t) { return jnp::mean(t[0], {0}); }};
  p["max1_keepdims"] = {"e2", {a}, [](const Args& t) { return jnp::max(t[0], {1}, true); }};
  p["argmax1"] = {"e2", {a}, [](const Args& t) { return jnp::argmax(t[0], 1); }};
  p["logsumexp1"] = {"e2", {a}, [](const Args& t) { return jnp::logsumexp(t[0], {1}); }};
  p["softmax1"] = {"e2", {a}, [](const Args& t) { return jnp::softmax(t[0], 1); }};
  // Contractions.
  p["matmul"] = {"e2", {rows, w}, [](const Args& t) { return jnp::matmul(t[0], t[1]); }};
  p["matmul_ambiguous"] = {
      "e2", {a, {{16, 4}, P("y", None)}}, [](const Args& t) { return jnp::matmul(t[0], t[1]); }};
  p["matmul_out_sharding"] = {"e2", {a, {{16, 4}, P("y", None)}}, [](const Args& t) {
                                return jnp::matmul(t[0], t[1], P("x", None));
                              }};
  p["matmul_one_side_split"] = {
      "e2", {cols, {{16, 4}, P()}}, [](const Args& t) { return jnp::matmul(t[0], t[1]); }};
  p["matmul_inconsistent"] = {"e2",
                              {{{8, 16}, P(None, "x")}, {{16, 4}, P("y", None)}},
                              [](const Args& t) { return jnp::matmul(t[0], t[1]); }};
  p["matmul_duplicate_axis"] = {
      "e2", {rows, {{16, 4}, P(None, "x")}}, [](const Args& t) { return jnp::matmul(t[0], t[1]); }};
  p["matvec"] = {"e2", {rows, {{16}, P()}}, [](const Args& t) { return jnp::matmul(t[0], t[1]); }};
  p["batched_einsum"] = {"e2",
                         {{{4, 8, 16}, P("y", None, None)}, {{4, 16, 4}, P("y", None, None)}},
                         [](const Args& t) { return jnp::einsum("bmk,bkn->bmn", t[0], t[1]); }};
  p["batched_einsum_mismatch"] = {
      "e2",
      {{{4, 8, 16}, P("y", None, None)}, {{4, 16, 4}, P("x", None, None)}},
      [](const Args& t) { return jnp::einsum("bmk,bkn->bmn", t[0], t[1]); }};
  p["einsum_transposed"] = {
      "e2", {rows, w}, [](const Args& t) { return jnp::einsum("ij,jk->ki", t[0], t[1]); }};
  // Layout.
  p["transpose"] = {"e2", {a}, [](const Args& t) { return jnp::transpose(t[0]); }};
  p["reshape_split_major"] = {"e2", {rows}, [](const Args& t) {
                                return jnp::reshape(t[0], {8, 4, 4});
                              }};
  p["reshape_split_minor"] = {"e2", {cols}, [](const Args& t) {
                                return jnp::reshape(t[0], {8, 4, 4});
                              }};
  p["reshape_merge"] = {"e2", {a}, [](const Args& t) { return jnp::reshape(t[0], {128}); }};
  p["reshape_merge_minor_only"] = {
      "e2", {cols}, [](const Args& t) { return jnp::reshape(t[0], {128}); }};
  p["concatenate"] = {"e2", {rows, {{8, 4}, P("x", None)}}, [](const Args& t) {
                        return jnp::concatenate({t[0], t[1]}, 1);
                      }};
  p["concatenate_conflict"] = {"e2", {rows, {{8, 4}, P()}}, [](const Args& t) {
                                 return jnp::concatenate({t[0], t[1]}, 1);
                               }};
  p["slice_even"] = {"e2", {rows}, [](const Args& t) { return jnp::slice(t[0], {2}, {6}); }};
  p["slice_uneven"] = {"e2", {rows}, [](const Args& t) { return jnp::slice(t[0], {1}, {4}); }};
  // Creation, reshard, constraints, gradients, random numbers.
  p["zeros_out_sharding"] = {"e2", {a}, [](const Args& t) {
                               return t[0] + jnp::zeros({8, 16}, DType::kFloat32, P("x", "y"));
                             }};
  p["zeros_plain"] = {"e2", {a}, [](const Args& t) { return jnp::zeros({8, 16}) + t[0]; }};
  p["reshard"] = {"e2", {a}, [](const Args& t) { return spmd::reshard(t[0], P(None, "x")); }};
  p["reshard_then_sum"] = {
      "e2", {a}, [](const Args& t) { return jnp::sum(spmd::reshard(t[0], P("y", "x")), {1}); }};
  p["constraint_mismatch"] = {"e2", {a}, [](const Args& t) {
                                return spmd::lax::with_sharding_constraint(t[0], P(None, "x"));
                              }};
  p["grad_weights"] = {"e2", {rows, w}, [](const Args& t) {
                         const Tensor& x = t[0];
                         return spmd::grad([&](const Tensor& u) { return sq_loss(x, u); })(t[1]);
                       }};
  p["grad_inputs"] = {"e2", {rows, w}, [](const Args& t) {
                        const Tensor& u = t[1];
                        return spmd::grad([&](const Tensor& x) { return sq_loss(x, u); })(t[0]);
                      }};
  p["random_add"] = {"e2", {a, {{2}, P(), DType::kUInt32}}, [](const Args& t) {
                       return t[0] + spmd::random::normal(t[1], {8, 16});
                     }};
  // Auto axes: propagation.
  p["auto_add"] = {"a2", {a, a}, [](const Args& t) { return t[0] + t[1]; }};
  p["auto_matmul"] = {
      "a2", {a, {{16, 4}, P("y", None)}}, [](const Args& t) { return jnp::matmul(t[0], t[1]); }};
  p["auto_sum0"] = {"a2", {a}, [](const Args& t) { return jnp::sum(t[0], {0}); }};
  p["auto_transpose"] = {"a2", {a}, [](const Args& t) { return jnp::transpose(t[0]); }};
  // A mixed mesh: x Explicit, y Auto.
  p["mixed_matmul"] = {
      "m2", {a, {{16, 4}, P("y", None)}}, [](const Args& t) { return jnp::matmul(t[0], t[1]); }};
  p["mixed_add"] = {"m2", {a, a}, [](const Args& t) { return t[0] + t[1]; }};
  p["mixed_sum1"] = {"m2", {a}, [](const Args& t) { return jnp::sum(t[0], {1}); }};
  p["mixed_out_sharding_auto_axis"] = {"m2", {rows, {{16, 4}, P()}}, [](const Args& t) {
                                         return jnp::matmul(t[0], t[1], P("x", "y"));
                                       }};
  p["mixed_constraint_explicit_axis"] = {"m2", {rows}, [](const Args& t) {
                                           return spmd::lax::with_sharding_constraint(t[0],
                                                                                      P("x", "y"));
                                         }};
  p["mixed_constraint_auto_axis"] = {"m2", {rows}, [](const Args& t) {
                                       return spmd::lax::with_sharding_constraint(t[0],
                                                                                  P(None, "y"));
                                     }};
  // A 1-D mesh.
  p["e1_sum"] = {"e1", {v}, [](const Args& t) { return jnp::sum(t[0]); }};
  p["e1_outer"] = {"e1", {v, v}, [](const Args& t) { return jnp::einsum("i,j->ij", t[0], t[1]); }};
  p["e1_mul"] = {"e1", {v, v}, [](const Args& t) { return t[0] * t[1]; }};
  p["e1_reshape"] = {"e1", {v}, [](const Args& t) { return jnp::reshape(t[0], {8, 8}); }};
  p["e1_dot"] = {"e1", {v, {{64}, P()}}, [](const Args& t) { return jnp::dot(t[0], t[1]); }};
  return p;
}

spmd::Mesh mesh_named(const std::string& name) {
  const AxisType e = AxisType::kExplicit, a = AxisType::kAuto;
  if (name == "e1") return spmd::make_mesh({8}, {"x"}, {e});
  if (name == "a2") return spmd::make_mesh({2, 4}, {"x", "y"}, {a, a});
  if (name == "m2") return spmd::make_mesh({2, 4}, {"x", "y"}, {e, a});
  return spmd::make_mesh({2, 4}, {"x", "y"}, {e, e});
}

spmd::Array input(const Input& in, const spmd::Mesh& mesh) {
  const int64_t n = spmd::shape_size(in.shape);
  spmd::HostArray host = in.dtype == DType::kUInt32
                             ? spmd::HostArray::from_vector(std::vector<uint32_t>{0, 1}, in.shape)
                             : spmd::HostArray::zeros(DType::kFloat32, in.shape);
  if (in.dtype != DType::kUInt32) {
    for (int64_t i = 0; i < n; ++i) host.mutable_data<float>()[i] = static_cast<float>(i);
  }
  return spmd::device_put(host, spmd::NamedSharding(mesh, in.spec));
}

// A spec as a list of entries, each a list of axis names, trailing whole dimensions dropped.
json entries(const spmd::PartitionSpec& spec) {
  json out = json::array();
  for (const spmd::AxisEntry& e : spec.entries()) out.push_back(e.axes());
  while (!out.empty() && out.back().empty()) out.erase(out.size() - 1);
  return out;
}

json run(const Program& program) {
  const spmd::Mesh mesh = mesh_named(program.mesh);
  std::vector<spmd::Array> args;
  for (const Input& in : program.inputs) args.push_back(input(in, mesh));
  json result;
  try {
    auto f = spmd::jit([&](const Args& t) {
      Tensor out = program.fn(t);
      result["type"] = entries(out.sharding().spec());
      return out;
    });
    const spmd::Array out = f(args);
    result["out"] = entries(dynamic_cast<const spmd::NamedSharding&>(out.sharding()).spec());
  } catch (const spmd::ShardingTypeError& e) {
    result = {{"error", "ShardingTypeError"}, {"message", e.what()}};
  } catch (const spmd::InvalidArgument& e) {
    result = {{"error", "InvalidArgument"}, {"message", e.what()}};
  }
  return result;
}

}  // namespace

int main() {
  spmd::distributed::initialize({.num_processes = 1, .num_cpu_devices = 8});
  json out;
  for (const auto& [name, program] : programs()) out[name] = run(program);
  std::cout << out.dump(1) << "\n";
  return 0;
}
