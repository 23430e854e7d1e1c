#include "jit/fuse.h"

#include <algorithm>
#include <map>
#include <utility>

#include "jit/manual.h"
#include "jit/ops/layout.h"
#include "jit/ops/reduction.h"
#include "kernels/chain.h"

namespace spmd::compiler {

std::optional<BroadcastRead> broadcast_read(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return std::nullopt;
  Shape padded(to.size() - from.size(), 1);
  padded.insert(padded.end(), from.begin(), from.end());
  size_t first = to.size(), last = 0;  // the run of the operand's dimensions other than 1
  for (size_t d = 0; d < to.size(); ++d) {
    if (padded[d] == 1) continue;
    if (padded[d] != to[d]) return std::nullopt;
    first = std::min(first, d);
    last = d + 1;
  }
  BroadcastRead read;
  for (size_t d = first; d < last; ++d) {
    if (padded[d] != to[d]) return std::nullopt;  // a broadcast dimension inside the run
    read.period *= to[d];
  }
  for (size_t d = last; d < to.size(); ++d) read.repeat *= to[d];  // all of them for a scalar's
  return read;
}

namespace {

bool elementwise(const Step& s) {
  return s.kind == StepKind::kCompute &&
         dynamic_cast<const ElementwiseOperation*>(s.operation.get()) != nullptr;
}

bool broadcast(const Step& s) {
  return s.kind == StepKind::kCompute &&
         dynamic_cast<const BroadcastOp*>(s.operation.get()) != nullptr;
}

// A broadcast's runs, read in place, must be at least this long: a chain's block ends at each
// run's end (kernels/chain.h), and a shorter run would cost a kernel call for a few elements.
constexpr int64_t kMinBroadcastRun = 64;

// Each slot's per-device shape.
std::map<int, Shape> slot_shapes(const LocalProgram& local) {
  std::map<int, Shape> shapes;
  for (const Edge& p : local.parameters) shapes[p.slot] = p.block;
  for (const Step& s : local.steps) shapes[s.output] = s.shape;
  return shapes;
}

// Whether a chain can read broadcast step `b` (of an operand of shape `from`) in place.
bool read_in_place(const Step& b, const Shape& from) {
  const std::optional<BroadcastRead> read = broadcast_read(from, b.shape);
  if (!read) return false;
  if (read->period == 1) return true;  // a scalar's
  return (read->repeat > 1 ? read->repeat : read->period) >= kMinBroadcastRun;
}

// How many times each slot is read (by steps and as an output).
std::vector<int> use_counts(const LocalProgram& local) {
  std::vector<int> uses(static_cast<size_t>(local.slots), 0);
  for (const Step& s : local.steps) {
    for (int in : s.inputs) ++uses[static_cast<size_t>(in)];
  }
  for (const Edge& out : local.outputs) ++uses[static_cast<size_t>(out.slot)];
  return uses;
}

struct ChainSize {
  int steps = 0, inputs = 0;
};

// The steps and inputs of the chain that `members` (indices into `steps`) would make: a broadcast
// member is one more input (execute.cc reads its operand in place or makes it whole), any other
// member a step; the inputs also count each slot read from outside the members once.
ChainSize chain_size(const std::vector<Step>& steps, const std::vector<size_t>& members) {
  ChainSize size;
  std::vector<int> inside, outside;
  for (size_t m : members) inside.push_back(steps[m].output);
  for (size_t m : members) {
    const Step& s = steps[m];
    if (broadcast(s)) ++size.inputs;
    if (!broadcast(s)) ++size.steps;
    for (int in : s.inputs) {
      if (std::find(inside.begin(), inside.end(), in) == inside.end() &&
          std::find(outside.begin(), outside.end(), in) == outside.end()) {
        outside.push_back(in);
      }
    }
  }
  size.inputs += static_cast<int>(outside.size());
  return size;
}

// How many times the steps `members` other than broadcasts read slot `slot`: a broadcast
// member reads its operand from the slot (execute.cc), so a value it reads is never internal.
int reads_by(const std::vector<Step>& steps, const std::vector<size_t>& members, int slot) {
  int reads = 0;
  for (size_t m : members) {
    if (broadcast(steps[m])) continue;
    reads += static_cast<int>(std::count(steps[m].inputs.begin(), steps[m].inputs.end(), slot));
  }
  return reads;
}

// Joins to `members` (a chain in the making, its last step first) the first group whose result
// nothing but its steps read, that is of the chain's size or a scalar's (which each element
// recomputes: the CPU's chain computes such a step once a call, kernels/chain_hoist.h), and that
// keeps the chain within its limits. A broadcast member's operand joins nothing: the chain reads
// it from its slot (in place, or made whole by execute.cc). Several steps of the chain may read the
// group's result: a value read twice (x * x, a mask used by two selects) is computed in the chain,
// once per element, rather than written and read back. True when one joined.
bool join_one_group(const std::vector<Step>& steps, const std::vector<int>& uses,
                    std::map<int, std::vector<size_t>>& group_of_result,
                    std::vector<size_t>& members) {
  const int64_t chain_elements = shape_size(steps[members.front()].shape);
  for (size_t k = 0; k < members.size(); ++k) {
    if (broadcast(steps[members[k]])) continue;  // its operand stays a slot the chain reads
    for (int in : steps[members[k]].inputs) {
      auto it = group_of_result.find(in);
      if (it == group_of_result.end()) continue;
      if (reads_by(steps, members, in) != uses[static_cast<size_t>(in)]) continue;
      const int64_t size = shape_size(steps[it->second.back()].shape);
      if (size != chain_elements && size != 1) continue;
      std::vector<size_t> joined = members;
      joined.insert(joined.end(), it->second.begin(), it->second.end());
      const ChainSize would = chain_size(steps, joined);
      if (would.steps > kernels::kMaxChainSteps || would.inputs > kernels::kMaxChainInputs)
        continue;
      members = std::move(joined);
      group_of_result.erase(it);
      return true;
    }
  }
  return false;
}

}  // namespace

void fuse_elementwise(LocalProgram& local) {
  const std::vector<int> uses = use_counts(local);
  const std::map<int, Shape> shapes = slot_shapes(local);
  // group[i]: the group step i belongs to (its members' indices), keyed by the group's result.
  // A broadcast a chain can read in place starts a group that only a chain's step can join.
  std::map<int, std::vector<size_t>> group_of_result;
  std::vector<bool> absorbed(local.steps.size(), false);
  for (size_t i = 0; i < local.steps.size(); ++i) {
    const Step& s = local.steps[i];
    if (broadcast(s) && s.inputs.size() == 1 && shapes.count(s.inputs[0]) == 1 &&
        read_in_place(s, shapes.at(s.inputs[0]))) {
      group_of_result[s.output] = {i};
      continue;
    }
    if (!elementwise(s) || shape_size(s.shape) < 1) continue;
    std::vector<size_t> members{i};
    while (join_one_group(local.steps, uses, group_of_result, members)) {
    }
    std::sort(members.begin(), members.end());
    for (size_t m : members) absorbed[m] = m != i;
    group_of_result[s.output] = std::move(members);
  }
  std::vector<Step> steps;
  for (size_t i = 0; i < local.steps.size(); ++i) {
    if (absorbed[i]) continue;
    auto it = group_of_result.find(local.steps[i].output);
    if (it == group_of_result.end() || it->second.size() < 2) {
      steps.push_back(std::move(local.steps[i]));
      continue;
    }
    Step fused{.kind = StepKind::kFused,
               .output = local.steps[i].output,
               .shape = local.steps[i].shape,
               .dtype = local.steps[i].dtype};
    std::vector<int> inside;
    for (size_t m : it->second) inside.push_back(local.steps[m].output);
    for (size_t m : it->second) {
      for (int in : local.steps[m].inputs) {
        const bool internal = std::find(inside.begin(), inside.end(), in) != inside.end();
        if (!internal &&
            std::find(fused.inputs.begin(), fused.inputs.end(), in) == fused.inputs.end()) {
          fused.inputs.push_back(in);
        }
      }
      fused.body.push_back(local.steps[m]);
    }
    steps.push_back(std::move(fused));
  }
  local.steps = std::move(steps);
}

namespace {

constexpr int64_t kMaxFusedRow = int64_t{1} << 16;
constexpr int64_t kMinFusedColumns = 64;
constexpr int64_t kMaxFusedColumns = 16384;

// Whether step r reduces a float32 or float64 value of its own dtype over axes whose last is
// either the operand's last (a row of at most kMaxFusedRow) or one with kMinFusedColumns to
// kMaxFusedColumns elements after it. Fewer would make each made row a call too short to pay;
// more would be made a slab of columns at a time (kernels/reduce.h: reduce_made_rows), each row's
// slab a short run of memory: sum(tanh(x) * y, 0) over 64 × 512 × 512 took 5.8 ms fused against
// 4.5 for the chain, then the sum (2 threads), the loads of x waiting on memory.
bool fusable_reduction(const Step& r, const Shape& operand) {
  const auto* op =
      r.kind == StepKind::kCompute ? dynamic_cast<const ReduceOp*>(r.operation.get()) : nullptr;
  if (op == nullptr || op->axes.empty() || operand.empty()) return false;
  if (r.dtype != DType::kFloat32 && r.dtype != DType::kFloat64) return false;
  if (!std::is_sorted(op->axes.begin(), op->axes.end())) return false;
  const auto axis = static_cast<size_t>(op->axes.back());
  if (axis + 1 == operand.size()) return operand.back() <= kMaxFusedRow;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < operand.size(); ++d) inner *= operand[d];
  return inner >= kMinFusedColumns && inner <= kMaxFusedColumns;
}

}  // namespace

void fuse_reductions(LocalProgram& local) {
  const std::vector<int> uses = use_counts(local);
  std::map<int, size_t> producer;  // slot -> the step writing it
  std::vector<bool> absorbed(local.steps.size(), false);
  for (size_t i = 0; i < local.steps.size(); ++i) {
    Step& r = local.steps[i];
    producer[r.output] = i;
    if (r.inputs.size() != 1) continue;
    const auto at = producer.find(r.inputs[0]);
    if (at == producer.end() || uses[static_cast<size_t>(r.inputs[0])] != 1) continue;
    Step& p = local.steps[at->second];
    const bool chain = p.kind == StepKind::kFused || elementwise(p);
    if (!chain || p.dtype != r.dtype || !fusable_reduction(r, p.shape)) continue;
    Step fused{
        .kind = StepKind::kFusedReduce, .output = r.output, .shape = r.shape, .dtype = r.dtype};
    if (p.kind == StepKind::kFused) {
      fused.inputs = p.inputs;
      fused.body = std::move(p.body);
    } else {
      fused.inputs = p.inputs;
      fused.body.push_back(p);
    }
    fused.body.push_back(r);
    absorbed[at->second] = true;
    r = std::move(fused);
  }
  std::vector<Step> steps;
  for (size_t i = 0; i < local.steps.size(); ++i) {
    if (!absorbed[i]) steps.push_back(std::move(local.steps[i]));
  }
  local.steps = std::move(steps);
}

namespace {

// A smaller psum stays a step of its own: below it the all-reduce's time is its latency, and the
// chain after it costs microseconds either way.
constexpr int64_t kMinPsumThenBytes = int64_t{64} << 10;

// Whether chain step `c` (a kFused step or one element-wise step) can run in the all-reduce of
// psum step `p`, whose result it reads: the same dtype and size, the sum read by no broadcast,
// the psum's operand not read itself, and every other input the same on every device along the
// psum's axes and either whole-size or one element (an epilogue reads a range of each:
// execute.cc).
bool chain_fits_psum(const LocalProgram& local, const std::map<int, Shape>& shapes, const Step& p,
                     const Step& c) {
  const int64_t n = shape_size(p.shape);
  if (c.dtype != p.dtype || shape_size(c.shape) != n) return false;
  const uint64_t axes = axis_bits(p.axes);
  for (int in : c.inputs) {
    if (in == p.output) continue;
    if (in == p.inputs[0]) return false;
    const auto slot = static_cast<size_t>(in);
    if (slot >= local.varying.size() || (local.varying[slot] & axes) != 0) return false;
    const auto shape = shapes.find(in);
    if (shape == shapes.end()) return false;
    const int64_t size = shape_size(shape->second);
    if (size != n && size != 1) return false;
  }
  for (const Step& b : c.body) {
    if (!broadcast(b)) continue;
    if (b.inputs[0] == p.output) return false;
    const auto from = shapes.find(b.inputs[0]);
    if (from == shapes.end() || shape_size(from->second) != 1) return false;
  }
  return true;
}

// `c` with its read of `p`'s result taken into the all-reduce (LocalProgram's kPsumThen).
Step psum_then(const Step& p, Step c) {
  Step fused{.kind = StepKind::kPsumThen,
             .inputs = {p.inputs[0]},
             .output = c.output,
             .shape = c.shape,
             .dtype = c.dtype,
             .axes = p.axes};
  for (int in : c.inputs) {
    if (in != p.output) fused.inputs.push_back(in);
  }
  if (c.kind == StepKind::kFused) {
    fused.body = std::move(c.body);
  } else {
    fused.body.push_back(std::move(c));
  }
  for (Step& b : fused.body) {
    std::replace(b.inputs.begin(), b.inputs.end(), p.output, p.inputs[0]);
  }
  return fused;
}

}  // namespace

void fuse_psum_chains(LocalProgram& local) {
  if (local.varying.empty()) return;
  const std::vector<int> uses = use_counts(local);
  const std::map<int, Shape> shapes = slot_shapes(local);
  std::map<int, size_t> psum_at;  // a psum's result slot -> its step
  std::vector<bool> absorbed(local.steps.size(), false);
  for (size_t i = 0; i < local.steps.size(); ++i) {
    Step& c = local.steps[i];
    if (c.kind == StepKind::kPsum && (c.dtype == DType::kFloat32 || c.dtype == DType::kFloat64) &&
        shape_size(c.shape) * static_cast<int64_t>(dtype_size(c.dtype)) >= kMinPsumThenBytes) {
      psum_at[c.output] = i;
      continue;
    }
    if (c.kind != StepKind::kFused && !elementwise(c)) continue;
    for (int in : c.inputs) {
      const auto at = psum_at.find(in);
      if (at == psum_at.end() || uses[static_cast<size_t>(in)] != 1) continue;
      const Step& p = local.steps[at->second];
      if (!chain_fits_psum(local, shapes, p, c)) continue;
      c = psum_then(p, std::move(c));
      absorbed[at->second] = true;
      psum_at.erase(at);
      break;
    }
  }
  std::vector<Step> steps;
  for (size_t i = 0; i < local.steps.size(); ++i) {
    if (!absorbed[i]) steps.push_back(std::move(local.steps[i]));
  }
  local.steps = std::move(steps);
}

}  // namespace spmd::compiler
