#include "jit/executable.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compute/axis_groups.h"
#include "compute/device_run.h"
#include "compute/output_check.h"
#include "compute/resident_shard.h"
#include "jit/execute.h"
#include "jit/step_profile.h"
#include "kernels/backend.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

namespace spmd::compiler {

struct Executable::Session {
  std::weak_ptr<AxisGroups> groups;  // the session's own: expires when it shuts down
  LocalMeshDevices local;
  int process_index = 0;
  std::vector<std::vector<DeviceIndex>> places;  // [output][local device]
  std::unique_ptr<KeptSteps[]> kept;             // [local device]: constant steps' blocks
  std::unique_ptr<Replay[]> replay;              // [local device]: Backend::run_call's
};

// One device's replayed calls (Backend::run_call): the backend's state, and where the outputs of
// the last captured call came from, so that a call the backend answers by launching its graph
// again (kReplayed) runs nothing here either.
struct Executable::Replay {
  struct Output {
    enum class Kind { kReused, kInput, kHeld } kind = Kind::kHeld;
    const std::byte* data = nullptr;  // kReused: where the graph leaves it
    DType dtype = DType::kFloat32;
    Shape shape;
    size_t input = 0;  // kInput: which
    Block held;        // kHeld: a block that outlives calls (a kept constant, an input's view)
  };
  std::mutex mu;  // one call of the program at a time on the device goes through the backend
  std::shared_ptr<void> state;
  std::vector<Output> outputs;  // empty until a call was captured
  // The program's own input buffers (copy_into_slots), made on the first call: each call's
  // inputs are copied in, so the program always reads the same buffers and its graph is launched
  // again whatever buffers the caller passes (a training loop's state is new every step).
  std::vector<Block> slots;
};

namespace {

// `block` (a view of a shard) with zeros after it up to `shape`, kept in `storage`.
Block padded_to(const Block& block, const Shape& shape, std::vector<HostArray>& storage) {
  if (block.shape() == shape) return block;
  HostArray full = HostArray::zeros(block.dtype(), shape);
  Index part;
  for (int64_t n : block.shape()) part.push_back({0, n});
  full.assign(part, block.to_host());
  storage.push_back(std::move(full));
  return Block::view(block.dtype(), shape, storage.back().bytes().data());
}

// A padded block cut to the extents of `index`, its device's part.
HostArray without_padding(HostArray block, const Index& index) {
  Index part;
  bool whole = true;
  for (size_t d = 0; d < index.size(); ++d) {
    part.push_back({0, index[d].size()});
    whole = whole && index[d].size() == block.shape()[d];
  }
  return whole ? std::move(block) : block.slice(part);
}

std::vector<PartitionSpec> specs_of(const std::vector<Edge>& edges) {
  std::vector<PartitionSpec> out;
  out.reserve(edges.size());
  for (const Edge& e : edges) out.push_back(e.sharding->spec());
  return out;
}

}  // namespace

Executable::Executable(LocalProgram program, std::string identity, std::string platform)
    : program_(std::move(program)),
      identity_(std::move(identity)),
      platform_(std::move(platform)),
      what_(fmt::format("jit({})", program_.name)),
      out_specs_(specs_of(program_.outputs)) {
  call_ = call_identity(identity_.c_str(), specs_of(program_.parameters), out_specs_);
  for (const auto* edges : {&program_.parameters, &program_.outputs}) {
    for (const Edge& e : *edges) padded_ = padded_ || e.padded;
  }
  for (const Step& step : program_.steps) {
    effects_ = effects_ || (step.operation && step.operation->has_effect());
  }
}

bool Executable::takes(std::span<const Array* const> inputs) const {
  if (padded_ || inputs.size() != program_.parameters.size()) return false;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!same_layout(*inputs[k], *program_.parameters[k].sharding)) return false;
  }
  return true;
}

std::shared_ptr<const Executable::Session> Executable::session() const {
  std::lock_guard lock(mu_);
  if (session_ && !session_->groups.expired()) return session_;
  auto s = std::make_shared<Session>();
  s->groups = axis_groups_for(program_.mesh);
  s->local = local_mesh_devices(program_.mesh);
  s->process_index = process_index();
  s->kept = std::make_unique<KeptSteps[]>(s->local.ids.size());
  s->replay = std::make_unique<Replay[]>(s->local.ids.size());
  for (const Edge& out : program_.outputs) {
    std::vector<DeviceIndex> map = out.sharding->devices_indices_map(out.shape);
    auto& places = s->places.emplace_back();
    for (int64_t p : s->local.positions) places.push_back(std::move(map[static_cast<size_t>(p)]));
  }
  session_ = std::move(s);
  return session_;
}

std::vector<Array> Executable::run(std::span<const Array* const> inputs) const {
  if (inputs.size() != program_.parameters.size()) {
    throw InvalidArgument(fmt::format("jit({}): {} inputs for a program of {} parameters",
                                      program_.name, inputs.size(), program_.parameters.size()));
  }
  // Nothing to compute: an empty tree, and no effect (a debug callback) to run.
  if (program_.outputs.empty() && program_.steps.empty()) return {};
  size_t first = 0;  // the first input not laid out as the program takes it
  while (first < inputs.size() && same_layout(*inputs[first], *program_.parameters[first].sharding))
    ++first;
  if (first == inputs.size()) return run_laid_out(inputs);  // a cached call's usual case
  std::vector<Array> resharded;
  resharded.reserve(inputs.size());
  std::vector<const Array*> laid(inputs.begin(), inputs.end());
  for (size_t k = first; k < inputs.size(); ++k) {
    const NamedSharding& want = *program_.parameters[k].sharding;
    if (!same_layout(*inputs[k], want)) {
      resharded.push_back(device_put(*inputs[k], want));
      laid[k] = &resharded.back();
    }
  }
  return run_laid_out(laid);
}

std::vector<Array> Executable::run_laid_out(std::span<const Array* const> inputs) const {
  if (program_.outputs.empty() && program_.steps.empty()) return {};
  const ProfiledScope whole(StepProfile::active(), "call: the executable, whole");
  const std::shared_ptr<const Session> s = session();
  const size_t devices = s->local.ids.size();
  std::vector<HostArray> padding;  // what padded blocks view
  padding.reserve(padded_ ? devices * inputs.size() : 0);
  std::vector<std::vector<Block>> blocks(devices);
  const kernels::Backend& backend = kernels::backend_for(platform_);
  for (size_t i = 0; i < devices; ++i) {
    blocks[i].reserve(inputs.size());
    // A shard already in the device's memory (an earlier call's output) is used there; padding
    // is added on the host.
    const MemorySpace memory = padded_ ? MemorySpace::host() : backend.memory(s->local.hardware[i]);
    for (size_t k = 0; k < inputs.size(); ++k) {
      Block b = block_of(*inputs[k], s->local.ids[i], k, memory);
      if (padded_) b = padded_to(b, program_.parameters[k].block, padding);
      blocks[i].push_back(std::move(b));
    }
  }
  std::vector<std::vector<Block>> results;
  {
    const ProfiledScope timed(StepProfile::active(), "call: on the device threads");
    results = run_devices(*s, blocks);
  }
  const ProfiledScope timed(StepProfile::active(), "call: outputs assembled");
  return assemble(*s, results);
}

std::vector<std::vector<Block>> Executable::run_devices(
    const Session& s, std::vector<std::vector<Block>>& blocks) const {
  const std::shared_ptr<AxisGroups> groups = s.groups.lock();
  if (!groups) {
    throw FailedPrecondition(
        fmt::format("jit({}): the runtime shut down while a call was starting", program_.name));
  }
  const kernels::Backend& backend = kernels::backend_for(platform_);
  std::vector<std::vector<Block>> results(blocks.size());
  for_each_local_device(*groups, s.local, what_, [&](size_t i, const AxisContext& context) {
    const KernelContext device{backend, backend.memory(s.local.hardware[i])};
    const std::shared_ptr<void> bound = backend.bind_thread(device.memory);
    StepProfile* const profile = StepProfile::active();
    {
      const ProfiledScope timed(profile, "call: inputs to the device");
      for (Block& b : blocks[i]) b = b.to_memory(device.memory);  // host to device: staging
    }
    if (program_.mesh.size() == 1 && !padded_ && backend.replays_calls()) {
      run_replayable(device, blocks[i], s.kept[i], s.replay[i], results[i]);
    } else {
      results[i] = execute(program_, device, blocks[i], &s.kept[i]);
    }
    {
      // The call returns with its work queued (a GPU's), once few enough earlier calls are
      // unfinished: Array::block_until_ready and reads of the outputs wait for the rest.
      const ProfiledScope timed(profile, "call: wait for the device");
      backend.call_queued(device.memory);
    }
    const ProfiledScope timed(profile, "call: output check");
    // A program of effects alone (debug callbacks) has no outputs to check, and a device alone
    // has no other to agree with (assemble() checks its blocks against the program).
    if (!program_.outputs.empty() && program_.mesh.size() > 1)
      check_outputs(context, call_, out_specs_, {.check_rep = false}, results[i]);
  });
  return results;
}

namespace {

// Whether the bytes of `b` start inside those of one of `blocks`.
bool inside(const std::vector<Block>& blocks, const Block& b) {
  const auto at = reinterpret_cast<uintptr_t>(b.bytes().data());
  for (const Block& s : blocks) {
    const auto start = reinterpret_cast<uintptr_t>(s.bytes().data());
    if (start != 0 && at >= start && at < start + s.nbytes()) return true;
  }
  return false;
}

// Where result `b` of a captured call came from (Executable::Replay). `inputs` are the call's
// input buffers: its slots when `slotted`, whose bytes the next call overwrites.
Executable::Replay::Output output_of(const kernels::Backend& backend,
                                     const std::shared_ptr<void>& state, const Block& b,
                                     const std::vector<Block>& inputs, bool slotted) {
  using Kind = Executable::Replay::Output::Kind;
  const std::byte* data = b.bytes().data();
  if (data == nullptr) return {Kind::kHeld, nullptr, b.dtype(), b.shape(), 0, b};  // no bytes
  if (backend.replay_holds(state, data)) return {Kind::kReused, data, b.dtype(), b.shape()};
  // An input, or its bytes in another shape or dtype (a reshape shares them).
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Block& in = inputs[k];
    if (in.bytes().data() == data && in.nbytes() == b.nbytes()) {
      return {Kind::kInput, nullptr, b.dtype(), b.shape(), k};
    }
  }
  // Part of a slot: copied out of it at each call, as the arena's results are.
  if (slotted && inside(inputs, b)) return {Kind::kReused, data, b.dtype(), b.shape()};
  return {Kind::kHeld, nullptr, b.dtype(), b.shape(), 0, b};
}

// A new block of `dtype` and `shape` in `memory`, and the piece that copies the bytes at `data`
// into it (queued with the other results' in one Backend::copy_pieces).
Block copy_target(MemorySpace memory, const std::byte* data, DType dtype, const Shape& shape,
                  std::vector<kernels::Backend::CopyPiece>& pieces) {
  Block out = Block::allocate(dtype, shape, memory);
  pieces.push_back({data, out.mutable_bytes().data(), out.nbytes()});
  return out;
}

// What a call that ran its program (directly, or captured into a graph) profiles as.
const char* profile_name(kernels::Backend::CallRun how) {
  switch (how) {
    case kernels::Backend::CallRun::kCaptured:
      return "call: captured into a graph, launched";
    case kernels::Backend::CallRun::kReplayed:
      return "call: a kept graph launched again";
    default:
      return "call: run directly";
  }
}

// Which programs copy their inputs into slots: those of kSlotSteps steps or more, whose inputs
// come to at most kSlotBytesPerStep a step and kSlotBytes in all. A replay saves the host a
// launch a step (4 to 15 µs), and the copy costs the GPU about a microsecond a megabyte (read and
// written at a few TB/s), so the copy is kept well below what it saves. A program of a few steps
// (an eager operation, one step) saves nothing from a replay, and larger inputs (a large model's
// parameters, which a second copy would not fit beside, and whose step is not bound by launches)
// are read where they are: their program is replayed when the same buffers come again.
constexpr size_t kSlotSteps = 4;
constexpr size_t kSlotBytesPerStep = size_t{1} << 20;
constexpr size_t kSlotBytes = size_t{64} << 20;

// Whether `slots` are buffers like `inputs`, one each of the same dtype and shape.
bool slots_fit(const std::vector<Block>& slots, const std::vector<Block>& inputs) {
  if (slots.size() != inputs.size()) return false;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (slots[k].dtype() != inputs[k].dtype() || slots[k].shape() != inputs[k].shape()) {
      return false;
    }
  }
  return true;
}

// Copies `inputs` into `replay`'s slots (made like them, the first time) and returns true, for a
// program of `steps` steps that takes slots (above); else returns false, with nothing copied.
bool copy_into_slots(const KernelContext& device, const std::vector<Block>& inputs, size_t steps,
                     Executable::Replay& replay) {
  size_t total = 0;
  for (const Block& b : inputs) total += b.nbytes();
  if (steps < kSlotSteps || total > kSlotBytes || total > steps * kSlotBytesPerStep) return false;
  if (!slots_fit(replay.slots, inputs)) {
    replay.slots.clear();
    for (const Block& b : inputs)
      replay.slots.push_back(Block::allocate(b.dtype(), b.shape(), device.memory));
  }
  std::vector<kernels::Backend::CopyPiece> pieces;
  pieces.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    // The slot's own buffer, written in place (mutable_bytes() would copy a shared one): only
    // this call reads it, after the copy, in the device's order.
    auto* slot = const_cast<std::byte*>(replay.slots[k].bytes().data());  // NOLINT
    pieces.push_back({inputs[k].bytes().data(), slot, inputs[k].nbytes()});
  }
  device.backend.copy_pieces(device.memory, pieces);
  return true;
}

}  // namespace

void Executable::run_replayable(const KernelContext& device, std::vector<Block>& inputs,
                                KeptSteps& kept, Replay& replay,
                                std::vector<Block>& results) const {
  const kernels::Backend& backend = device.backend;
  const std::lock_guard lock(replay.mu);
  std::vector<Block> callers;  // the caller's inputs, when the program reads copies in its slots
  if (copy_into_slots(device, inputs, program_.steps.size(), replay)) {
    callers = std::exchange(inputs, replay.slots);
  }
  const bool slotted = !callers.empty();
  std::vector<const void*> key;
  key.reserve(inputs.size());
  for (const Block& b : inputs) key.push_back(b.bytes().data());
  // A program with effects (a host callback) runs them at every call: never replayed unrun.
  const bool may_replay = !effects_ && !replay.outputs.empty();
  StepProfile* const profile = StepProfile::active();
  const auto started = profile ? StepProfile::Clock::now() : StepProfile::Clock::time_point{};
  const auto how =
      backend.run_call(device.memory, replay.state, key, may_replay, [&](bool may_run_again) {
        if (!may_run_again) {
          results = execute(program_, device, inputs, &kept);
          return;
        }
        std::vector<Block> held = inputs;  // execute() lets its inputs go at their last use
        results = execute(program_, device, held, &kept);
      });
  if (profile) profile->add(profile_name(how), StepProfile::Clock::now() - started);
  const ProfiledScope timed(profile, "call: results copied out");
  // Where each result lies; a captured call's, for its replays.
  std::vector<Replay::Output> origins;
  if (how != kernels::Backend::CallRun::kReplayed) {
    origins.reserve(results.size());
    for (const Block& b : results)
      origins.push_back(output_of(backend, replay.state, b, inputs, slotted));
    if (how == kernels::Backend::CallRun::kCaptured) replay.outputs = origins;
  }
  // The results from where they lie: copied out of memory the backend or the slots reuse for
  // the next call, all in one batch; an input passed through is the caller's.
  const std::vector<Block>& given = slotted ? callers : inputs;
  std::vector<kernels::Backend::CopyPiece> pieces;
  results.clear();
  using Kind = Replay::Output::Kind;
  for (const Replay::Output& o :
       how == kernels::Backend::CallRun::kReplayed ? replay.outputs : origins) {
    if (o.kind == Kind::kReused) {
      results.push_back(copy_target(device.memory, o.data, o.dtype, o.shape, pieces));
    } else {
      results.push_back(o.kind == Kind::kInput ? given[o.input].bitcast(o.dtype, o.shape) : o.held);
    }
  }
  backend.copy_pieces(device.memory, pieces);
}

std::vector<Array> Executable::assemble(const Session& s,
                                        std::vector<std::vector<Block>>& results) const {
  std::vector<Array> arrays;
  arrays.reserve(program_.outputs.size());
  for (size_t k = 0; k < program_.outputs.size(); ++k) {
    const Edge& out = program_.outputs[k];
    std::vector<Shard> shards;
    shards.reserve(results.size());
    for (size_t i = 0; i < results.size(); ++i) {
      const DeviceIndex& place = s.places[k][i];
      if (results[i].size() != program_.outputs.size()) {
        throw Error(fmt::format("jit({}): device {} returned {} blocks; the program promised {}",
                                program_.name, s.local.ids[i], results[i].size(),
                                program_.outputs.size()));
      }
      const Block& b = results[i][k];
      if (b.dtype() != out.dtype || b.shape() != out.block) {
        throw Error(fmt::format(
            "jit({}): device {} returned {}[{}] as output {}; the program promised {}[{}]",
            program_.name, s.local.ids[i], dtype_name(b.dtype()), fmt::join(b.shape(), ", "), k,
            dtype_name(out.dtype), fmt::join(out.block, ", ")));
      }
      // A device's output stays in its memory until the host reads it (resident_shard.h).
      HostArray data = !padded_ && b.memory() != MemorySpace::host()
                           ? resident_shard(std::move(results[i][k]))
                           : std::move(results[i][k]).to_host();
      if (padded_) data = without_padding(std::move(data), place.index);
      shards.push_back(Shard{place.device, place.index, place.replica_id, std::move(data)});
    }
    arrays.emplace_back(out.shape, out.dtype, out.sharding, std::move(shards), s.process_index,
                        Array::Unchecked{});
  }
  return arrays;
}

}  // namespace spmd::compiler
