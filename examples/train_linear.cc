// Seed 002, "Complete Multi-Process Training Example": a linear model y = x·w + b trained with
// Adam. Parameters are replicated on every device (PartitionSpec()); each process loads its own
// batch, laid out over all devices by rows; one shard_map computes each device's gradients,
// averages them across all devices with pmean, and applies the Adam update, so every device ends
// every step with the same parameters. Process 0 logs every 5 epochs; at the end every process
// checks that all processes hold identical parameters, and process 0 prints
// `final loss <x> params-digest <hex>`.
//
//   spmdrun -n 4 --cpu-devices 2 -- ./train_linear
#include <spmd/spmd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr int64_t kFeatures = 10;
constexpr int64_t kBatch = 32;  // rows per process per epoch
constexpr int kEpochs = 50;
constexpr float kLearningRate = 0.05f;
constexpr float kBeta1 = 0.9f;
constexpr float kBeta2 = 0.999f;
constexpr float kEpsilon = 1e-8f;

// This process's batch for `epoch` (seed 002: `x = random.normal(key, (32, 10))`, with its best
// practice's per-process key, PRNGKey(42 + process_index()), folded with the epoch so each epoch
// has new rows): x ~ N(0, 1), y = x·w_true + b_true + 0.01 N(0, 1).
std::pair<spmd::HostArray, spmd::HostArray> load_batch(int epoch) {
  namespace random = spmd::random;
  const random::Key key = random::fold_in(random::key(42 + spmd::process_index()), epoch);
  const random::Key keys = random::split(key);
  spmd::HostArray x = random::normal(keys[0], {kBatch, kFeatures}).to_host();
  const spmd::HostArray noise = random::normal(keys[1], {kBatch}).to_host();
  std::vector<float> y(kBatch);
  for (int64_t r = 0; r < kBatch; ++r) {
    float t = 0.5f;  // b_true
    for (int64_t f = 0; f < kFeatures; ++f) {
      t += x.data<float>()[r * kFeatures + f] * (static_cast<float>(f) - 4.5f) / 5.0f;
    }
    y[r] = t + 0.01f * noise.data<float>()[r];
  }
  return {std::move(x), spmd::HostArray::from_vector(y, {kBatch, 1})};
}

// FNV-1a over the parameters' bytes: equal parameters, equal digests.
uint64_t digest(const std::vector<const spmd::HostArray*>& params) {
  uint64_t h = 1469598103934665603ull;
  for (const auto* p : params) {
    for (std::byte b : p->bytes()) h = (h ^ static_cast<uint64_t>(b)) * 1099511628211ull;
  }
  return h;
}

}  // namespace

int main() {
  spmd::distributed::initialize();

  // key = random.PRNGKey(42)
  // params = {'w': random.normal(key, (10, 1)), 'b': random.normal(key, (1,))}: JAX's values,
  // the same in every process.
  const spmd::Array key = spmd::random::PRNGKey(42);
  const spmd::Mesh mesh(spmd::devices(), {"devices"});
  const spmd::NamedSharding replicated(mesh, spmd::P());
  const spmd::NamedSharding rows(mesh, spmd::P("devices"));
  std::vector<spmd::Array> state = {
      spmd::device_put(spmd::random::normal(key, {kFeatures, 1}).to_host(), replicated),  // w
      spmd::device_put(spmd::random::normal(key, {1}).to_host(), replicated),             // b
      spmd::device_put(spmd::HostArray::zeros(spmd::DType::kFloat32, {kFeatures, 1}), replicated),
      spmd::device_put(spmd::HostArray::zeros(spmd::DType::kFloat32, {kFeatures, 1}), replicated),
      spmd::device_put(spmd::HostArray::zeros(spmd::DType::kFloat32, {1}), replicated),
      spmd::device_put(spmd::HostArray::zeros(spmd::DType::kFloat32, {1}), replicated),
  };

  // One Adam step on a parameter: returns the new parameter, first and second moments.
  int step = 0;
  auto adam = [&step](const spmd::Block& p, const spmd::Block& g, const spmd::Block& m,
                      const spmd::Block& v) {
    const spmd::Block m2 = spmd::add(spmd::scale(m, kBeta1), spmd::scale(g, 1 - kBeta1));
    const spmd::Block v2 =
        spmd::add(spmd::scale(v, kBeta2), spmd::scale(spmd::mul(g, g), 1 - kBeta2));
    const spmd::Block m_hat = spmd::scale(m2, 1.0 / (1.0 - std::pow(kBeta1, step)));
    const spmd::Block v_hat = spmd::scale(v2, 1.0 / (1.0 - std::pow(kBeta2, step)));
    const spmd::Block update =
        spmd::div(m_hat, spmd::add(spmd::sqrt(v_hat), spmd::Block::scalar(kEpsilon)));
    return std::vector<spmd::Block>{spmd::sub(p, spmd::scale(update, kLearningRate)), m2, v2};
  };

  // train_step: gradients of the mean squared error on this device's rows, averaged over every
  // device of every process (pmean over 'devices'), then the optimiser update.
  const auto train_step = spmd::shard_map(
      [&](const spmd::Block& w, const spmd::Block& b, const spmd::Block& mw, const spmd::Block& vw,
          const spmd::Block& mb, const spmd::Block& vb, const spmd::Block& x,
          const spmd::Block& y) {
        const double n = static_cast<double>(x.shape()[0]);
        const spmd::Block err = spmd::sub(spmd::add(spmd::matmul(x, w), b), y);
        const spmd::Block loss = spmd::pmean(spmd::mean(spmd::mul(err, err)), "devices");
        const spmd::Block d_pred = spmd::scale(err, 2.0 / n);
        const spmd::Block gw = spmd::pmean(spmd::matmul(x, d_pred, true), "devices");
        const spmd::Block gb = spmd::pmean(spmd::sum(d_pred, 0), "devices");
        auto new_w = adam(w, gw, mw, vw);
        auto new_b = adam(b, gb, mb, vb);
        return std::vector<spmd::Block>{new_w[0], new_b[0], new_w[1], new_w[2],
                                        new_b[1], new_b[2], loss};
      },
      mesh,
      {spmd::P(), spmd::P(), spmd::P(), spmd::P(), spmd::P(), spmd::P(), spmd::P("devices"),
       spmd::P("devices")},
      spmd::P());

  float first_loss = 0;
  float loss = 0;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    // Each process loads different data; together they form one global batch.
    const auto [x_local, y_local] = load_batch(epoch);
    const spmd::Array x = spmd::make_array_from_process_local_data(rows, x_local);
    const spmd::Array y = spmd::make_array_from_process_local_data(rows, y_local);
    step = epoch + 1;
    auto out = train_step(state[0], state[1], state[2], state[3], state[4], state[5], x, y);
    loss = out[6].addressable_data(0).data<float>()[0];
    if (epoch == 0) first_loss = loss;
    out.pop_back();
    state = std::move(out);
    if (spmd::process_index() == 0 && epoch % 5 == 0) {
      std::printf("Epoch %d completed, loss %.6f\n", epoch, loss);
    }
  }

  // Every device of every process must hold the same parameters.
  bool same = true;
  for (const auto& p : {state[0], state[1]}) {
    for (const auto& s : p.addressable_shards()) same = same && s.data == p.addressable_data(0);
  }
  const uint64_t mine = digest({&state[0].addressable_data(0), &state[1].addressable_data(0)});
  const auto all = spmd::multihost::process_allgather(
      spmd::HostArray::from_vector(std::vector<uint64_t>{mine}, {1}), false);
  for (uint64_t d : all.data<uint64_t>()) same = same && d == mine;
  std::printf("params identical on all %d processes: %s; loss %.6f -> %.6f (%s)\n",
              spmd::process_count(), same ? "yes" : "no", first_loss, loss,
              loss < first_loss ? "falling" : "NOT falling");
  if (spmd::process_index() == 0) {
    std::printf("final loss %.6f params-digest %016llx\n", loss,
                static_cast<unsigned long long>(mine));
  }
  return same && loss < first_loss ? 0 : 1;
}
