// Seed 002's "Complete Multi-Process Training Example", as written: jit(train_step) with grad of
// the loss, an Adam update and tree_map over a parameter dictionary, here for a two-layer MLP,
// with batches from the distributed data loader, checkpoints every few steps and resumption.
//
//   spmdrun -n 4 --cpu-devices 2 -- ./train_mlp [--layout replicated|model-parallel|pmean]
//       [--steps 200] [--save-every 50] [--dir train_mlp_run] [--out DIR] [--kill-after STEP]
//
// The mesh is (processes × local devices) = ("dp", "mp"). replicated: every parameter on every
// device (PartitionSpec()), the batch split over all devices. model-parallel: w1 split by columns
// and w2 by rows over "mp" (Megatron), the batch split over "dp". Either way the partitioner
// reduces the gradients: seed 002's explicit pmean is not needed under jit. pmean: seed 002's
// explicit form, replicated parameters and each device's gradients averaged by lax::pmean inside
// a lax::shard_map with check_vma = false (pmap's semantics: each device's own gradient; under
// JAX's default check_vma the gradient of a replicated parameter is already summed over the
// devices, examples/data_parallel.cc).
//
// The run lives in --dir: the data (data.npy, written by process 0 on the first run) and the
// checkpoints. A run that finds a checkpoint there continues from it, the loader included, and
// ends with the parameters an uninterrupted run ends with. --kill-after STEP makes the last
// process SIGKILL itself after step STEP (a checkpoint step) to show it. --out DIR: process 0
// writes the final parameters there as .npy files. At the end every process checks that all
// hold identical parameters; process 0 prints `final loss <x> params-digest <hex>`. On SIGTERM
// (a preemption: Slurm's scancel, a spot instance) to any process, every process saves a
// checkpoint at the step they agree on and exits 0; started again, the run continues from it.
#include <spmd/spmd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::NamedSharding;
using spmd::P;
using spmd::Tensor;
using spmd::Tree;

namespace {

constexpr int64_t kIn = 16, kHidden = 64, kOut = 4;
constexpr int64_t kRecords = 4096, kBatch = 64;

struct Flags {
  std::string layout = "replicated";
  int64_t steps = 200;
  int64_t save_every = 50;
  std::string dir = "train_mlp_run";
  std::string out;
  int64_t kill_after = -1;
};

Flags parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const std::string value = argv[i + 1];
    if (key == "--layout")
      f.layout = value;
    else if (key == "--steps")
      f.steps = std::stoll(value);
    else if (key == "--save-every")
      f.save_every = std::stoll(value);
    else if (key == "--dir")
      f.dir = value;
    else if (key == "--out")
      f.out = value;
    else if (key == "--kill-after")
      f.kill_after = std::stoll(value);
    else
      throw spmd::InvalidArgument("train_mlp: unknown flag " + key);
  }
  if (f.layout != "replicated" && f.layout != "model-parallel" && f.layout != "pmean") {
    throw spmd::InvalidArgument("train_mlp: --layout is replicated, model-parallel or pmean");
  }
  return f;
}

spmd::HostArray normal(std::mt19937_64& rng, const spmd::Shape& shape, float scale) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(spmd::shape_size(shape)));
  for (auto& x : v) x = dist(rng);
  return spmd::HostArray::from_vector(v, shape);
}

// kRecords rows of [x (kIn) | y (kOut)]: x ~ N(0, 1), y = tanh(x·T) + noise for a fixed T.
void write_data(const std::string& path) {
  std::mt19937_64 rng(7);
  const spmd::HostArray teacher = normal(rng, {kIn, kOut}, 0.5f);
  std::vector<float> rows(kRecords * (kIn + kOut));
  std::normal_distribution<float> unit(0.0f, 1.0f), noise(0.0f, 0.01f);
  for (int64_t r = 0; r < kRecords; ++r) {
    float* row = &rows[r * (kIn + kOut)];
    for (int64_t i = 0; i < kIn; ++i) row[i] = unit(rng);
    for (int64_t o = 0; o < kOut; ++o) {
      float t = 0;
      for (int64_t i = 0; i < kIn; ++i) t += row[i] * teacher.data<float>()[i * kOut + o];
      row[kIn + o] = std::tanh(t) + noise(rng);
    }
  }
  spmd::data::write_npy(path + ".tmp", spmd::HostArray::from_vector(rows, {kRecords, kIn + kOut}));
  std::filesystem::rename(path + ".tmp", path);
}

// The parameters' layouts on `mesh` for --layout.
Tree<NamedSharding> layouts(const spmd::Mesh& mesh, const std::string& layout) {
  const NamedSharding rep(mesh, P());
  if (layout != "model-parallel") return {{"w1", rep}, {"b1", rep}, {"w2", rep}, {"b2", rep}};
  return {{"w1", NamedSharding(mesh, P(spmd::None, "mp"))},
          {"b1", NamedSharding(mesh, P("mp"))},
          {"w2", NamedSharding(mesh, P("mp", spmd::None))},
          {"b2", rep}};
}

// A normal sample times `scale`, as JAX's `random.normal(key, shape) * scale` rounds it.
spmd::HostArray scaled_normal(const spmd::random::Key& key, const spmd::Shape& shape, float scale) {
  spmd::HostArray h = spmd::random::normal(key, shape).to_host();
  for (float& x : h.mutable_data<float>()) x *= scale;
  return h;
}

// params = {w1, b1, w2, b2} as seed 002 starts: key = random.PRNGKey(42), split once per weight,
// random.normal(k, shape) / sqrt(fan_in). JAX's values, the same in every process and layout.
Tree<Array> init_params(const Tree<NamedSharding>& layout) {
  const auto keys = spmd::random::split(spmd::random::wrap_key_data(spmd::random::PRNGKey(42)));
  const Tree<spmd::HostArray> host{
      {"w1", scaled_normal(keys[0], {kIn, kHidden}, 1.0f / std::sqrt(float(kIn)))},
      {"b1", spmd::HostArray::zeros(spmd::DType::kFloat32, {kHidden})},
      {"w2", scaled_normal(keys[1], {kHidden, kOut}, 1.0f / std::sqrt(float(kHidden)))},
      {"b2", spmd::HostArray::zeros(spmd::DType::kFloat32, {kOut})}};
  return spmd::tree_map(
      [](const spmd::HostArray& h, const NamedSharding& s) { return spmd::device_put(h, s); }, host,
      layout);
}

Tensor model(const Tree<Tensor>& params, const Tensor& x) {
  const Tensor h = jnp::tanh(jnp::matmul(x, params.at("w1").leaf()) + params.at("b1").leaf());
  return jnp::matmul(h, params.at("w2").leaf()) + params.at("b2").leaf();
}

Tensor loss_fn(const Tree<Tensor>& params, const Tensor& x, const Tensor& y) {
  return jnp::mean(jnp::power(model(params, x) - y, 2));
}

// Seed 002's form: grad on each device's rows, then `tree_map(pmean(g, 'devices'), grads)`.
std::pair<Tensor, Tree<Tensor>> pmean_of_device_grads(const spmd::Mesh& mesh,
                                                      const Tree<Tensor>& params, const Tensor& x,
                                                      const Tensor& y) {
  const spmd::AxisEntry devices{"dp", "mp"};
  auto per_device = [&](const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
                        const Tensor& xb, const Tensor& yb) {
    auto [loss, grads] = spmd::value_and_grad(loss_fn)(
        Tree<Tensor>{{"w1", w1}, {"b1", b1}, {"w2", w2}, {"b2", b2}}, xb, yb);
    std::vector<Tensor> out{spmd::lax::pmean(loss, devices)};
    for (const Tensor& g : spmd::tree_leaves(grads)) out.push_back(spmd::lax::pmean(g, devices));
    return out;
  };
  const auto out = spmd::lax::shard_map(
      per_device, mesh, {P(), P(), P(), P(), P(devices), P(devices)}, {P(), P(), P(), P(), P()},
      {.check_vma = false})(params.at("w1").leaf(), params.at("b1").leaf(), params.at("w2").leaf(),
                            params.at("b2").leaf(), x, y);
  return {out[0], spmd::tree_unflatten(params.structure(),
                                       std::vector<Tensor>(out.begin() + 1, out.end()))};
}

// The state a checkpoint holds, resumed when there is one: returns the next step to run, and
// sets the losses of the run's first step and of the checkpoint's.
int64_t resume(spmd::checkpoint::CheckpointManager& manager, Tree<Array>& state,
               spmd::data::DistributedDataLoader& loader, float& first_loss, float& loss) {
  const auto latest = manager.latest_step();
  if (!latest) return 0;
  spmd::checkpoint::ShardingTree targets;
  for (const auto& [path, array] : spmd::tree_to_paths(state)) {
    targets[path] = array.sharding_ptr();
  }
  state = spmd::tree_from_paths(manager.restore(*latest, targets));
  const spmd::checkpoint::Metadata metadata = manager.metadata(*latest);
  loader.restore(metadata.user.at("data_loader"));
  first_loss = static_cast<float>(metadata.metrics.at("first_loss"));
  loss = static_cast<float>(metadata.metrics.at("loss"));
  if (spmd::process_index() == 0) std::printf("resumed from step %lld\n", (long long)*latest);
  return *latest;
}

// FNV-1a over the parameters' bytes, gathered whole: equal parameters, equal digests.
uint64_t digest(const Tree<Array>& params, const std::string& out) {
  uint64_t h = 1469598103934665603ull;
  for (const auto& [name, array] : spmd::tree_to_paths(params)) {
    const spmd::HostArray whole = spmd::multihost::process_allgather(array);
    for (std::byte b : whole.bytes()) h = (h ^ static_cast<uint64_t>(b)) * 1099511628211ull;
    if (!out.empty() && spmd::process_index() == 0) {
      std::filesystem::create_directories(out);
      spmd::data::write_npy((std::filesystem::path(out) / (name + ".npy")).string(), whole);
    }
  }
  return h;
}

bool same_everywhere(uint64_t mine) {
  const auto all = spmd::multihost::process_allgather(
      spmd::HostArray::from_vector(std::vector<uint64_t>{mine}, {1}), false);
  for (uint64_t d : all.data<uint64_t>()) {
    if (d != mine) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each log line as it happens, also into a pipe
  const Flags flags = parse(argc, argv);
  spmd::distributed::initialize();
  const spmd::Mesh mesh(spmd::devices(), {spmd::process_count(), spmd::local_device_count()},
                        {"dp", "mp"});

  // Process 0 writes the data set once; the others wait for it.
  const std::string data = flags.dir + "/data.npy";
  if (spmd::process_index() == 0 && !std::filesystem::exists(data)) {
    std::filesystem::create_directories(flags.dir);
    write_data(data);
  }
  spmd::multihost::sync_global_devices("train_mlp data written");

  const NamedSharding batch_sharding(
      mesh, flags.layout == "model-parallel" ? P("dp") : P(spmd::AxisEntry{"dp", "mp"}));
  spmd::data::DistributedDataLoader loader(spmd::data::npy_source(data), kBatch, batch_sharding,
                                           {.seed = 0, .drop_remainder = true});

  const auto optimizer = spmd::optim::adam(1e-2);
  const Tree<Array> params = init_params(layouts(mesh, flags.layout));
  Tree<Array> state{{"params", params}, {"opt_state", optimizer.init(params)}};

  // train_step: loss and gradients of the mean squared error, the Adam update, the new state.
  auto train_step = spmd::jit(
      [&](const Tree<Tensor>& s, const Tensor& batch) {
        const Tensor x = jnp::slice(batch, {0, 0}, {kBatch, kIn});
        const Tensor y = jnp::slice(batch, {0, kIn}, {kBatch, kIn + kOut});
        const Tree<Tensor>& p = s.at("params");
        auto [loss, grads] = flags.layout == "pmean" ? pmean_of_device_grads(mesh, p, x, y)
                                                     : spmd::value_and_grad(loss_fn)(p, x, y);
        auto [updates, opt_state] = optimizer.update(grads, s.at("opt_state"), p);
        return Tree<Tensor>{{"params", spmd::optim::apply_updates(p, updates)},
                            {"opt_state", opt_state},
                            {"loss", loss}};
      },
      {.name = "train_step"});

  spmd::checkpoint::CheckpointManager manager(
      flags.dir + "/checkpoints", {.max_to_keep = 2, .save_interval_steps = flags.save_every});
  float first_loss = -1, loss = 0;
  for (int64_t step = resume(manager, state, loader, first_loss, loss); step < flags.steps;) {
    Tree<Array> out = train_step(state, loader.next().data);
    loss = out.at("loss").leaf().to_host().data<float>()[0];
    if (first_loss < 0) first_loss = loss;
    state = Tree<Array>{{"params", out.at("params")}, {"opt_state", out.at("opt_state")}};
    ++step;
    const bool saved = manager.save(step, state, {{"loss", loss}, {"first_loss", first_loss}},
                                    {{"data_loader", loader.state()}});
    if (spmd::process_index() == 0 && step % 10 == 0) {
      std::printf("step %lld loss %.6f%s\n", (long long)step, loss, saved ? " (checkpoint)" : "");
    }
    if (step == flags.kill_after && spmd::process_index() == spmd::process_count() - 1) {
      std::raise(SIGKILL);
    }
    if (spmd::multihost::reached_preemption_sync_point(step)) {  // saved above (should_save)
      std::printf("preempted: checkpoint %lld saved in every process; exiting\n", (long long)step);
      spmd::distributed::shutdown();
      return 0;
    }
  }

  const uint64_t mine = digest(state.at("params"), flags.out);
  const bool same = same_everywhere(mine);
  std::printf("params identical on all %d processes: %s; loss %.6f -> %.6f (%s)\n",
              spmd::process_count(), same ? "yes" : "no", first_loss, loss,
              loss < first_loss ? "falling" : "NOT falling");
  if (spmd::process_index() == 0) {
    std::printf("final loss %.6f params-digest %016llx\n", loss, (unsigned long long)mine);
  }
  spmd::distributed::shutdown();
  return same && loss < first_loss ? 0 : 1;
}
