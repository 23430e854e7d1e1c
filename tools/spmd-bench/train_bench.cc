#include "spmd-bench/train_bench.h"

#include <fmt/format.h>
#include <spmd/spmd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "spmd-bench/jax_baseline.h"
#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

namespace jnp = spmd::numpy;

constexpr int64_t kBatch = 512, kIn = 512, kHidden = 1024, kOut = 256;
constexpr double kLearningRate = 1e-3, kB1 = 0.9, kB2 = 0.999, kEps = 1e-8;

Array filled(const Shape& shape, const NamedSharding& sharding, float seed) {
  return make_array_from_callback(shape, sharding, [&](const Index& index) {
    HostArray h = HostArray::uninitialized(DType::kFloat32, index_extents(index));
    auto v = h.mutable_data<float>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.02f * std::sin(seed + static_cast<float>(i));
    return h;
  });
}

Tensor loss_fn(const Tree<Tensor>& p, const Tensor& x, const Tensor& y) {
  const Tensor h = jnp::relu(jnp::matmul(x, p.at("w1").leaf()) + p.at("b1").leaf());
  const Tensor d = jnp::matmul(h, p.at("w2").leaf()) + p.at("b2").leaf() - y;
  return jnp::mean(d * d);
}

struct Model {
  Tree<Array> params;
  Array x, y;
};

// Parameters replicated, the batch split over "dp" on `mesh`.
Model model(const Mesh& mesh) {
  const NamedSharding rep(mesh, P()), rows(mesh, P("dp"));
  return Model{Tree<Array>{{"w1", filled({kIn, kHidden}, rep, 1)},
                           {"b1", filled({kHidden}, rep, 2)},
                           {"w2", filled({kHidden, kOut}, rep, 3)},
                           {"b2", filled({kOut}, rep, 4)}},
               filled({kBatch, kIn}, rows, 5), filled({kBatch, kOut}, rows, 6)};
}

// The jit train step: (params, opt state, x, y) -> {params, opt_state, loss}.
auto jit_step() {
  return jit(
      [](const Tree<Tensor>& s, const Tensor& x, const Tensor& y) {
        static const auto opt = optim::adam(kLearningRate, kB1, kB2, kEps);
        const Tree<Tensor>& p = s.at("params");
        auto [loss, grads] = value_and_grad(loss_fn)(p, x, y);
        auto [updates, next] = opt.update(grads, s.at("opt_state"), p);
        return Tree<Tensor>{
            {"params", optim::apply_updates(p, updates)}, {"opt_state", next}, {"loss", loss}};
      },
      {.name = "train_step"});
}

// h += b per row, then relu (in place): the baseline's own loop.
void bias_relu(Block& h, const Block& b, bool relu) {
  auto v = h.mutable_data<float>();
  const auto bias = b.data<float>();
  for (size_t i = 0; i < v.size(); ++i) {
    const float t = v[i] + bias[i % bias.size()];
    v[i] = relu && t < 0 ? 0.0f : t;
  }
}

// g where the activation a is positive, else 0 (relu's derivative), in place.
void relu_grad(Block& g, const Block& a) {
  auto v = g.mutable_data<float>();
  const auto act = a.data<float>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = act[i] > 0 ? v[i] : 0.0f;
}

// Adam on one parameter block; t is the step count after this update.
std::vector<Block> adam(const Block& p, const Block& g, const Block& m, const Block& v, int t) {
  const Block m2 = add(scale(m, kB1), scale(g, 1 - kB1));
  const Block v2 = add(scale(v, kB2), scale(mul(g, g), 1 - kB2));
  const Block m_hat = scale(m2, 1.0 / (1.0 - std::pow(kB1, t)));
  const Block v_hat = scale(v2, 1.0 / (1.0 - std::pow(kB2, t)));
  const Block update = div(m_hat, add(sqrt(v_hat), Block::scalar(static_cast<float>(kEps))));
  return {sub(p, scale(update, kLearningRate)), m2, v2};
}

// The same step by hand on each device's rows: blocks w1 b1 w2 b2, their m and v, x, y in;
// the new parameters, m and v, and the loss out.
std::vector<Block> hand_step(std::vector<Block>& in, int t) {
  const Block &w1 = in[0], &b1 = in[1], &w2 = in[2], &b2 = in[3], &x = in[12], &y = in[13];
  Block a = matmul(x, w1);
  bias_relu(a, b1, true);
  Block d = matmul(a, w2);
  bias_relu(d, b2, false);
  d = sub(d, y);
  const Block loss = pmean(mean(mul(d, d)), "dp");
  const Block dy = scale(d, 2.0 / static_cast<double>(d.shape()[0] * d.shape()[1]));
  Block da = matmul(dy, w2, false, true);
  relu_grad(da, a);
  const std::vector<Block> grads = {pmean(matmul(x, da, true), "dp"), pmean(sum(da, 0), "dp"),
                                    pmean(matmul(a, dy, true), "dp"), pmean(sum(dy, 0), "dp")};
  std::vector<Block> out(13);
  for (size_t i = 0; i < 4; ++i) {
    auto next = adam(in[i], grads[i], in[4 + i], in[8 + i], t);
    out[i] = next[0];
    out[4 + i] = next[1];
    out[8 + i] = next[2];
  }
  out[12] = loss;
  return out;
}

// The hand-written step's inputs: w1 b1 w2 b2, then their first and second moments (zeros).
std::vector<Array> hand_state(const Tree<Array>& params) {
  std::vector<Array> hand = {params.at("w1").leaf(), params.at("b1").leaf(), params.at("w2").leaf(),
                             params.at("b2").leaf()};
  for (int k = 0; k < 8; ++k) {
    const Array& p = hand[static_cast<size_t>(k % 4)];
    hand.push_back(device_put(HostArray::zeros(DType::kFloat32, p.shape()), p.sharding()));
  }
  return hand;
}

// One hand-written step, step count t: the new state and the loss.
std::pair<std::vector<Array>, Array> run_hand_step(const Mesh& mesh,
                                                   const std::vector<Array>& state, const Model& m,
                                                   int t) {
  std::vector<PartitionSpec> specs(12, P());
  specs.insert(specs.end(), {P("dp"), P("dp")});
  std::vector<const Array*> inputs;
  inputs.reserve(state.size() + 2);
  for (const Array& a : state) inputs.push_back(&a);
  inputs.push_back(&m.x);
  inputs.push_back(&m.y);
  auto out = detail::run_shard_map(mesh, specs, {P()}, {.check_rep = false}, "hand_step", inputs,
                                   [t](std::vector<Block>& b) { return hand_step(b, t); });
  Array loss = out.back();
  out.pop_back();
  return {std::move(out), std::move(loss)};
}

// Both steps once from the same state: the same loss and first weight, up to rounding.
bool same_first_step(const Mesh& mesh, const Model& m) {
  auto step = jit_step();
  const Tree<Array> state{{"params", m.params},
                          {"opt_state", optim::adam(kLearningRate).init(m.params)}};
  const Tree<Array> out = step(state, m.x, m.y);
  const auto [hand, hand_loss] = run_hand_step(mesh, hand_state(m.params), m, 1);
  auto close = [](const HostArray& a, const HostArray& b) {
    for (size_t i = 0; i < a.data<float>().size(); ++i) {
      const float x = a.data<float>()[i], y = b.data<float>()[i];
      if (std::abs(x - y) > 1e-5f + 1e-4f * std::abs(y)) return false;
    }
    return true;
  };
  return close(out.at("loss").leaf().to_host(), hand_loss.to_host()) &&
         close(out.at("params").at("w1").leaf().to_host(), hand[0].to_host());
}

// Waits for every array of `tree`: a GPU's call returns with its work queued, and a timing ends
// when the work has, as JAX's worker blocks on its state.
void wait_for(const Tree<Array>& tree) {
  for (const Array& a : tree_leaves(tree)) a.block_until_ready();
}

// The jit step's seconds per step on `mesh`, 5 steps per timing.
double jit_step_seconds(const Mesh& mesh, int iterations) {
  const Model m = model(mesh);
  auto step = jit_step();
  Tree<Array> state{{"params", m.params}, {"opt_state", optim::adam(kLearningRate).init(m.params)}};
  return timed(iterations,
               [&] {
                 for (int i = 0; i < 5; ++i) {
                   Tree<Array> out = step(state, m.x, m.y);
                   state = Tree<Array>{{"params", out.at("params")},
                                       {"opt_state", out.at("opt_state")}};
                 }
                 wait_for(state);
               }) /
         5;
}

// The first 10 jit steps' losses from the initial state, data parallel over every process (the
// JAX baseline runs the same steps and compares).
void first_losses(nlohmann::ordered_json& row) {
  const Mesh mesh(devices(), {"dp"});
  const Model m = model(mesh);
  auto step = jit_step();
  Tree<Array> state{{"params", m.params}, {"opt_state", optim::adam(kLearningRate).init(m.params)}};
  std::vector<double> losses;
  for (int i = 0; i < 10; ++i) {
    Tree<Array> out = step(state, m.x, m.y);
    losses.push_back(out.at("loss").leaf().to_host().data<float>()[0]);
    state = Tree<Array>{{"params", out.at("params")}, {"opt_state", out.at("opt_state")}};
  }
  row["losses"] = losses;
}

// jit against the hand-written shard_map step, steps per second, 5 steps per timing.
void jit_vs_shard_map(nlohmann::ordered_json& row, int iterations) {
  const Mesh mesh(devices(), {"dp"});
  const Model m = model(mesh);
  const double jit_s = jit_step_seconds(mesh, iterations);
  std::vector<Array> hand = hand_state(m.params);
  int t = 0;
  const double hand_s = timed(iterations,
                              [&] {
                                for (int i = 0; i < 5; ++i)
                                  hand = run_hand_step(mesh, hand, m, ++t).first;
                              }) /
                        5;
  row["jit_step_s"] = jit_s;
  row["shard_map_step_s"] = hand_s;
  row["jit_vs_shard_map"] = jit_s / hand_s;
  row["jit_within_1_2x"] = jit_s <= 1.2 * hand_s;
  row["correct"] = same_first_step(mesh, m);
}

// The jit step's samples per second on every process (the batch split) and on process 0 alone
// (the whole batch on its one device, the others waiting at a barrier).
void scaling(nlohmann::ordered_json& row, int iterations) {
  auto samples_per_s = [&](const Mesh& mesh) {
    const Model m = model(mesh);
    auto step = jit_step();
    const Tree<Array> state{{"params", m.params},
                            {"opt_state", optim::adam(kLearningRate).init(m.params)}};
    return static_cast<double>(kBatch) /
           timed(iterations, [&] { wait_for(step(state, m.x, m.y)); });
  };
  const double all = samples_per_s(Mesh(devices(), {"dp"}));
  double alone = 0;
  if (process_index() == 0) alone = samples_per_s(Mesh({local_devices()[0]}, {"dp"}));
  distributed::client().wait_at_barrier("bench/train/alone", std::chrono::minutes(10));
  row["samples_per_s_1_process"] = alone;
  row[fmt::format("samples_per_s_{}_processes", process_count())] = all;
  row["scaling"] = all / alone;
}

// Trace and partition (lower() on a new jit), then another new jit's first, second and later
// calls.
void compile(nlohmann::ordered_json& row) {
  const Mesh mesh(devices(), {"dp"});
  const Model m = model(mesh);
  const Tree<Array> state{{"params", m.params},
                          {"opt_state", optim::adam(kLearningRate).init(m.params)}};
  auto lowered = jit_step();
  row["compile_s"] = seconds_of([&] { lowered.lower(state, m.x, m.y); });
  auto step = jit_step();
  row["first_call_s"] = seconds_of([&] { wait_for(step(state, m.x, m.y)); });
  row["second_call_s"] = seconds_of([&] { wait_for(step(state, m.x, m.y)); });
  std::vector<double> later;
  later.reserve(98);
  for (int i = 3; i <= 100; ++i) {
    later.push_back(seconds_of([&] { wait_for(step(state, m.x, m.y)); }));
  }
  row["calls_3_to_100_median_s"] = median(later);
  row["second_vs_later"] = row["second_call_s"].get<double>() / median(later);
  // The host's own time per step: 16 steps queued without waiting (a GPU's run ahead of it, up
  // to SPMD_GPU_CALLS_IN_FLIGHT), then waited for. Beside jit_step_s it says which of the host
  // and the device bounds the step; on CPU devices each call is the whole step.
  Tree<Array> chained = state;
  row["host_s_per_call"] =
      seconds_of([&] {
        for (int i = 0; i < 16; ++i) {
          Tree<Array> out = step(chained, m.x, m.y);
          chained = Tree<Array>{{"params", out.at("params")}, {"opt_state", out.at("opt_state")}};
        }
      }) /
      16;
  wait_for(chained);
}

// Adds the largest relative difference between spmd's and JAX's first losses; more than
// kLossTolerance (float32 rounding, summed in another order) makes the row incorrect.
constexpr double kLossTolerance = 1e-4;
void compare_losses(nlohmann::ordered_json& row) {
  if (!row["jax"].is_object()) return;
  const auto ours = row["spmd"]["losses"].get<std::vector<double>>();
  const auto theirs = row["jax"]["losses"].get<std::vector<double>>();
  double worst = ours.size() == theirs.size() ? 0.0 : 1.0;
  for (size_t i = 0; i < ours.size() && i < theirs.size(); ++i) {
    worst = std::max(worst, std::abs(ours[i] - theirs[i]) / std::abs(theirs[i]));
  }
  row["losses_max_relative_difference"] = worst;
  row["losses_equal_jax"] = worst <= kLossTolerance;
  row["correct"] = row["correct"].get<bool>() && worst <= kLossTolerance;
}

}  // namespace

int run_train_worker(const TrainBenchOptions& o) {
  distributed::initialize();
  nlohmann::ordered_json row;
  row["processes"] = process_count();
  row["batch"] = kBatch;
  row["layers"] = fmt::format("{}x{}x{}", kIn, kHidden, kOut);
  first_losses(row);
  jit_vs_shard_map(row, o.iterations);
  scaling(row, o.iterations);
  compile(row);
  print_row(row);
  distributed::shutdown();
  return 0;
}

int run_train_bench(const TrainBenchOptions& o) {
  if (o.platform == "gpu") {
    ::setenv("SPMD_PLATFORMS", "gpu", 1);  // inherited by the spmd processes
    set_jax_platform("cuda");
  }
  const std::vector<std::string> worker = {"train-worker", "--iterations",
                                           std::to_string(o.iterations)};
  if (o.impls == "spmd") {
    return run_spmd_job(o.processes, worker,
                        "an MLP train step (forward, backward, Adam): jit beside shard_map, "
                        "scaling, compile time:",
                        o.json);
  }
  return run_beside_jax(
      "an MLP train step (forward, backward, Adam): jit beside shard_map, scaling, compile time, "
      "and beside JAX with Optax",
      o.processes, worker, "train", {std::to_string(o.iterations)}, o.rounds, o.json,
      {{"step_speed_vs_jax", "jit_step_s", "step_s", true}}, &compare_losses);
}

double mlp_step_seconds_on_one_device(int iterations) {
  return jit_step_seconds(Mesh({local_devices()[0]}, {"dp"}), iterations);
}

}  // namespace spmd::bench
