// "debug_callback" and "pure_callback": host functions a program calls while it runs
// (spmd/host_callback.h). A debug callback is kept for its effect (Program::effects) and gives a
// token nothing reads; a pure callback gives one of its results per operation, the operations of
// one call sharing the host function and what it last returned on each device thread, so that a
// callback of several results runs once per device and call.
#include "spmd/host_callback.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "compute/axis_context.h"
#include "jit/batching.h"
#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/operation.h"
#include "jit/partitioner.h"
#include "jit/program.h"
#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/runtime.h"
#include "spmd/traced_shard_map.h"

namespace spmd::compiler {

using spmd::lax::HostFunction;
using spmd::lax::VmapMethod;

namespace {

// What the operations of one callback share: the function, its results' types, and, for a pure
// callback of several results, per device thread the last operands it was called with and what
// it returned (one call's values per device thread, kept until the program goes).
struct Callback {
  std::string name;
  HostFunction fn;
  std::vector<ValueType> results;
  VmapMethod vmap_method = VmapMethod::kNone;

  struct Last {
    std::vector<HostArray> operands;
    std::vector<HostArray> results;
  };
  mutable std::mutex mu;
  mutable std::map<std::thread::id, Last> last;
  mutable std::map<int64_t, std::shared_ptr<const Callback>> batches;

  // The same function called once on a batch of `size` (vmap's expand_dims and broadcast_all),
  // made once per size, so that the results of one call share it as they share this one.
  std::shared_ptr<const Callback> over_batch(int64_t size) const {
    const std::lock_guard lock(mu);
    std::shared_ptr<const Callback>& made = batches[size];
    if (made) return made;
    auto b = std::make_shared<Callback>();
    b->name = name;
    b->fn = fn;
    b->vmap_method = vmap_method;
    for (ValueType t : results) {
      t.shape.insert(t.shape.begin(), size);
      b->results.push_back(std::move(t));
    }
    made = b;
    return made;
  }
};

// "device 3 of process 1", from the running device's context.
std::string where_running() {
  if (!in_axis_context()) return fmt::format("the host of process {}", process_index());
  const AxisContext& c = current_axis_context("host callback");
  return fmt::format("device {} of process {}", c.device_id, process_index());
}

bool same_values(const std::vector<HostArray>& a, const std::vector<HostArray>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].dtype() != b[i].dtype() || a[i].shape() != b[i].shape()) return false;
    const auto x = a[i].bytes();
    const auto y = b[i].bytes();
    if (!std::equal(x.begin(), x.end(), y.begin(), y.end())) return false;
  }
  return true;
}

// fn(operands), its failure an Error naming the callback and where it ran; a pure callback's
// results checked against their declared types.
std::vector<HostArray> call(const Callback& cb, std::vector<HostArray> operands, bool pure) {
  std::vector<HostArray> out;
  try {
    out = cb.fn(std::move(operands));
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: the host callback '{}' raised, on {}: {}",
                            pure ? "pure_callback" : "debug_callback", cb.name, where_running(),
                            e.what()));
  }
  if (!pure) return {};
  if (out.size() != cb.results.size()) {
    throw InvalidArgument(fmt::format(
        "pure_callback: the callback '{}' returned {} values; its result_shape_dtypes declare {}",
        cb.name, out.size(), cb.results.size()));
  }
  for (size_t k = 0; k < out.size(); ++k) {
    const ValueType& want = cb.results[k];
    if (out[k].dtype() != want.dtype || out[k].shape() != want.shape) {
      throw InvalidArgument(fmt::format(
          "pure_callback: the callback '{}' returned {} as result {}; its result_shape_dtypes "
          "declare {} (convert the value in the callback)",
          cb.name, type_text(out[k].dtype(), out[k].shape()), k,
          type_text(want.dtype, want.shape)));
    }
  }
  return out;
}

}  // namespace

// Operands: any values. A debug callback (`result` -1) gives a bool[] token; a pure one its
// result number `result`. `per_device`: each device calls with its own blocks (inside shard_map,
// or a partitioned debug callback); otherwise with whole values, a debug callback on the mesh's
// first device only.
class HostCallbackOp final : public Operation {
 public:
  HostCallbackOp(std::shared_ptr<const Callback> callback, int result, bool per_device)
      : callback(std::move(callback)), result(result), per_device(per_device) {}
  const std::shared_ptr<const Callback> callback;
  const int result;
  const bool per_device;

  bool pure() const { return result >= 0; }
  std::string name() const override { return pure() ? "pure_callback" : "debug_callback"; }
  std::string attributes() const override {
    return fmt::format("callback={} result={} per_device={}", callback->name, result,
                       per_device ? "true" : "false");
  }
  bool has_effect() const override { return !pure(); }
  ValueType result_type(std::span<const ValueType> /*operands*/) const override {
    if (!pure()) return {DType::kBool, {}, {}};
    return callback->results.at(static_cast<size_t>(result));
  }
  // The token and a pure callback's results are replicated, whatever the operands' splits.
  PartitionSpec type_spec(std::span<const ValueType> /*operands*/, const ValueType& /*result*/,
                          const Mesh& /*mesh*/) const override {
    return {};
  }
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;

 private:
  std::vector<HostArray> results_for(std::vector<HostArray> operands) const;
};

void HostCallbackOp::partition(Partitioner& p, int value, const Op& op) const {
  if (!per_device || spmd::lax::in_shard_map_function()) {
    p.compute_whole(value);  // a shard_map body's blocks count as whole there
    return;
  }
  // A partitioned debug callback outside shard_map: each device's block where the operand splits
  // evenly (an uneven split's padding is not the user's: that operand arrives whole).
  std::vector<int> slots;
  for (int in : op.inputs) {
    const Op& operand = p.op(in);
    Layout want = p.layout(in).settled();
    std::vector<int> dims(operand.shape.size());
    for (size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int>(d);
    if (!padded_dims(operand.shape, want, p.mesh(), dims).empty())
      want = Layout::replicated(operand.shape.size());
    slots.push_back(p.slot_with(in, want));
  }
  p.compute(value, std::move(slots), Layout::replicated(0));
}

std::vector<HostArray> HostCallbackOp::results_for(std::vector<HostArray> operands) const {
  const Callback& cb = *callback;
  if (cb.results.size() == 1) return call(cb, std::move(operands), /*pure=*/true);  // no sharing
  const std::thread::id me = std::this_thread::get_id();
  {
    const std::lock_guard lock(cb.mu);
    const auto it = cb.last.find(me);
    if (it != cb.last.end() && same_values(it->second.operands, operands))
      return it->second.results;  // a pure function's results for the same values
  }
  std::vector<HostArray> kept = operands;
  std::vector<HostArray> out = call(cb, std::move(operands), /*pure=*/true);
  const std::lock_guard lock(cb.mu);
  cb.last[me] = Callback::Last{std::move(kept), out};
  return out;
}

Block HostCallbackOp::run(const KernelContext& device, const Step& step,
                          std::span<const Block> in) const {
  std::vector<HostArray> operands;
  const auto values = [&] {
    operands.reserve(in.size());
    for (const Block& b : in) operands.push_back(b.to_host());
  };
  if (!pure()) {
    const bool mine = per_device || !in_axis_context() || [] {
      const auto& coords = current_axis_context("debug_callback").coords;
      return std::all_of(coords.begin(), coords.end(), [](int64_t c) { return c == 0; });
    }();
    if (mine) {
      values();
      call(*callback, std::move(operands), /*pure=*/false);
    }
    return Block::scalar(false).to_memory(device.memory);
  }
  values();
  std::vector<HostArray> out = results_for(std::move(operands));
  HostArray& mine = out.at(static_cast<size_t>(result));
  if (mine.shape() != step.shape) {
    throw InvalidArgument(fmt::format(
        "pure_callback: the callback '{}' gave {} on {}, where its block is {}", callback->name,
        type_text(mine.dtype(), mine.shape()), where_running(), type_text(step.dtype, step.shape)));
  }
  return Block(std::move(mine)).to_memory(device.memory);
}

Cotangents HostCallbackOp::vjp(const Op& op, const Tensor& /*result*/,
                               std::span<const Tensor> /*operands*/, const Tensor& /*g*/) const {
  if (pure()) {
    throw InvalidArgument(
        "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while "
        "taking gradients.");
  }
  return Cotangents(op.inputs.size());  // a debug callback's token carries nothing back
}

Batched HostCallbackOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                              int64_t size) const {
  if (!pure()) {  // JAX's unrolling: one call per slice, in order
    Tensor token;
    per_slice(size, operands, [&](const std::vector<Tensor>& slice) {  // (tokens nobody reads)
      token = lax::bind(make_operation<HostCallbackOp>(callback, result, per_device), slice);
      return token;
    });
    return {token, std::nullopt};
  }
  const VmapMethod how = callback->vmap_method;
  if (how == VmapMethod::kNone) {
    throw Unimplemented(fmt::format(
        "vmap is only supported for the pure_callback primitive when vmap_method is one of "
        "'sequential', 'sequential_unrolled', 'expand_dims' or 'broadcast_all' (the callback "
        "'{}' has none)",
        callback->name));
  }
  if (how == VmapMethod::kSequential) {
    return {per_slice(size, operands,
                      [&](const std::vector<Tensor>& slice) {
                        return lax::bind(
                            make_operation<HostCallbackOp>(callback, result, per_device), slice);
                      }),
            0};
  }
  // One call on the batch: its results have a leading batch axis.
  const std::shared_ptr<const Callback> batched = callback->over_batch(size);
  std::vector<Tensor> args;
  for (const Batched& b : operands) {
    const bool whole_batch = b.dim || how == VmapMethod::kBroadcastAll;
    args.push_back(whole_batch ? batched_first(b, size) : lax::expand_dims(b.value, 0));
  }
  return {lax::bind(make_operation<HostCallbackOp>(batched, result, per_device), args), 0};
}

namespace {

std::shared_ptr<Trace> trace_for(const char* what, const std::vector<Tensor>& args) {
  if (args.empty()) return Trace::current(what);
  std::shared_ptr<Trace> t;
  for (const Tensor& a : args) t = trace_of(what, {&args.front(), &a});
  return t;
}

// Neither kind reads back from text: the function is the tracing process's.
std::shared_ptr<const Operation> refuse_text(const AttributeReader& r) {
  throw InvalidArgument(fmt::format(
      "{}: a host callback ('{}') is a function of the process that traced it, which a program's "
      "text cannot carry",
      r.op(), r.text("callback")));
}

const OperationRegistration debug_registration("debug_callback", refuse_text);
const OperationRegistration pure_registration("pure_callback", refuse_text);

}  // namespace
}  // namespace spmd::compiler

namespace spmd::lax {

using compiler::Callback;
using compiler::HostCallbackOp;

bool tracing() { return compiler::Trace::current_or_null() != nullptr; }

void debug_callback(const std::string& name, const std::vector<Tensor>& args, HostFunction fn,
                    bool partitioned) {
  const std::shared_ptr<compiler::Trace> trace = compiler::trace_for("debug_callback", args);
  auto cb = std::make_shared<Callback>();
  cb->name = name;
  cb->fn = std::move(fn);
  const bool per_device = partitioned || in_shard_map_function();
  std::vector<int> inputs;
  inputs.reserve(args.size());
  for (const Tensor& a : args) inputs.push_back(a.value());
  trace->apply(compiler::make_operation<HostCallbackOp>(std::move(cb), -1, per_device),
               std::move(inputs));
}

std::vector<Tensor> pure_callback(const std::string& name, const std::vector<Tensor>& args,
                                  const std::vector<ShapeDtypeStruct>& results, HostFunction fn,
                                  VmapMethod vmap_method) {
  const std::shared_ptr<compiler::Trace> trace = compiler::trace_for("pure_callback", args);
  auto cb = std::make_shared<Callback>();
  cb->name = name;
  cb->fn = std::move(fn);
  cb->vmap_method = vmap_method;
  for (const ShapeDtypeStruct& r : results) cb->results.push_back({r.dtype, r.shape, {}});
  const bool per_device = in_shard_map_function();
  std::vector<int> inputs;
  inputs.reserve(args.size());
  for (const Tensor& a : args) inputs.push_back(a.value());
  std::vector<Tensor> out;
  for (size_t k = 0; k < results.size(); ++k) {
    out.push_back(trace->apply(
        compiler::make_operation<HostCallbackOp>(cb, static_cast<int>(k), per_device), inputs));
  }
  return out;
}

}  // namespace spmd::lax
