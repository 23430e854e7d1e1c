#include "kernels/chain.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "kernels/chain_hoist.h"
#include "kernels/float_arithmetic.h"
#include "kernels/register_run.h"
#include "kernels/thread_team.h"
#include "kernels/xla_exp_avx2.h"
#include "kernels/xla_exp_avx512.h"
#include "kernels/xla_sum.h"
#include "kernels/ynn_fusion.h"
#include "kernels/ynn_reduce.h"
#include "kernels/ynn_simd.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

// Elements per block: 2048, or fewer (down to 128) where the intermediates of 2048 would pass
// kBlockBytes. Each step of each block is one call (ChainPass::run, run_block), which costs
// about what 512 float32s of arithmetic do on the 2-core Zen 3; long chains gained from longer
// blocks (session 65, medians of 15 calls over 4096 x 2048 float32, five interleaved rounds,
// 512 and 16 KiB against 2048 and 24 KiB: nn.gelu 12.8 -> 10.7 ms, sum(gelu(a), 1) 13.6 ->
// 12.1, norm.logcdf 63 -> 58, sum(a * (1 + 0.044715 a^2), 1) 5.5 -> 4.7; a * a + a 3.6 -> 3.5
// and tanh(a * 1.5 + 0.25) * a unchanged). 512 had been chosen on a * b + c alone, when chains
// were first fused (1.03-1.05x a hand-written loop's speed, 2048 at 0.95-0.99x), where a call's
// cost matters least.
constexpr int64_t kMaxBlock = 2048;
constexpr int64_t kMinBlock = 128;
constexpr int64_t kBlockBytes = int64_t{24} << 10;

// Where one operand of a step reads, block by block: base + offset × stride bytes, `elements`
// per block (the block's length, or 1 for a scalar input). A broadcast read in place (Input's
// `repeat`, or fewer elements than the chain's and more than one) reads element
// (offset / repeat) % period: the block's length from there where repeat is 1, else that one
// element; blocks never cross a boundary of its runs (ChainPass::run).
struct Source {
  const std::byte* base = nullptr;
  int64_t stride = 0;
  bool scalar = false;
  int64_t period = 0;  // a broadcast read in place: its elements; else 0
  int64_t repeat = 1;
};

// A step with its kernel looked up and its operands resolved.
struct Resolved {
  const ChainStep* step = nullptr;
  UnaryKernel unary = nullptr;
  BinaryKernel binary = nullptr;
  SelectKernel select = nullptr;
  ConvertKernel convert = nullptr;
  std::array<Source, 3> from{};
  int operands = 0;          // arity(step->kind), looked up once
  std::byte* dst = nullptr;  // the block buffer, or `out` for the last step
  int64_t dst_stride = 0;    // bytes per element when writing `out`, else 0
  int64_t dst_first = 0;     // the element `dst` holds first (run_chain_reduce's buffer)
};

// The dtype operand `i` of `s` is read as.
DType operand_dtype(const ChainStep& s, int i) {
  return s.kind == ChainStep::Kind::kSelect && i == 0 ? DType::kBool : s.dtype;
}

// `ynn_math`: the step is inside the YNNPACK fusion XLA makes of the reduction the chain feeds
// (ynn_fusion.h), where exp, log, tanh and their kin are YNNPACK's (ynn_reduce.h: ynn_has_own).
Resolved resolve(const ChainStep& s, bool ynn_math) {
  Resolved r{.step = &s, .operands = arity(s.kind)};
  switch (s.kind) {
    case ChainStep::Kind::kUnary:
      r.unary = ynn_math && s.dtype == DType::kFloat32 && ynn_has_own(static_cast<Unary>(s.fn))
                    ? ynn_unary
                    : unary_kernel(s.dtype);
      break;
    case ChainStep::Kind::kBinary:
      r.binary = binary_kernel(s.dtype);
      break;
    case ChainStep::Kind::kSelect:
      r.select = select_kernel(s.dtype);
      break;
    case ChainStep::Kind::kConvert:
      r.convert = convert_kernel(s.dtype, s.result);
      break;
    case ChainStep::Kind::kMultiplyAdd:
      if (s.dtype != DType::kFloat32 && s.dtype != DType::kFloat64) {
        throw InvalidArgument(fmt::format(
            "run_chain: a fused multiply-add of {}, not float32 or float64", dtype_name(s.dtype)));
      }
      break;
  }
  return r;
}

// How an input of `size`-byte elements is read by a chain over n elements (step k's operand).
Source source(const Input& in, int64_t n, int64_t size, int k) {
  if (in.repeat == 1 && in.elements == n) return {in.data, size, false};
  if (in.elements == 1 && in.repeat >= 1) return {in.data, 0, true};
  if (in.repeat < 1 || in.elements < 1 || in.elements > n) {
    throw InvalidArgument(
        fmt::format("run_chain: step {} reads an input of {} elements, each {} "
                    "times, in a chain of {}",
                    k, in.elements, in.repeat, n));
  }
  return {in.data, size, false, in.elements, in.repeat};
}

// The length of the runs of a broadcast read in place: a block must not cross their ends.
int64_t run_length(const Source& s) { return s.repeat > 1 ? s.repeat : s.period; }

// Step k's operands: chain inputs (at the block's offset, or their one element) or the block
// buffers of earlier steps.
void connect(Resolved& r, int k, std::span<const Input> inputs, int64_t n,
             std::span<std::byte* const> buffers) {
  for (int i = 0; i < arity(r.step->kind); ++i) {
    const int32_t arg = r.step->args[static_cast<size_t>(i)];
    if (arg >= 0) {
      if (static_cast<size_t>(arg) >= inputs.size()) {
        throw InvalidArgument(
            fmt::format("run_chain: step {} reads input {} of {}", k, arg, inputs.size()));
      }
      const Input& in = inputs[static_cast<size_t>(arg)];
      const auto size = static_cast<int64_t>(dtype_size(operand_dtype(*r.step, i)));
      r.from[static_cast<size_t>(i)] = source(in, n, size, k);
    } else {
      const int32_t earlier = -1 - arg;
      if (earlier >= k) {
        throw InvalidArgument(fmt::format("run_chain: step {} reads step {}'s result", k, earlier));
      }
      r.from[static_cast<size_t>(i)] = {buffers[static_cast<size_t>(earlier)], 0, false};
    }
  }
}

// Whether a block reads one element of `s` for all of its elements: a scalar, or a broadcast
// read in place whose element repeats (blocks never cross its runs).
bool one_per_block(const Source& s) { return s.scalar || (s.period > 0 && s.repeat > 1); }

// Where a block from element `offset` reads `s`.
const std::byte* block_start(const Source& s, int64_t offset) {
  if (s.period == 0) return s.base + offset * s.stride;
  if (s.repeat > 1) return s.base + (offset / s.repeat) % s.period * s.stride;
  return s.base + offset % s.period * s.stride;
}

// Where a block from element `offset` writes step r's result.
std::byte* block_destination(const Resolved& r, int64_t offset) {
  return r.dst + (offset - r.dst_first) * r.dst_stride;
}

// Runs one step on `len` elements from element `offset`.
void run_block(const Resolved& r, int64_t offset, int64_t len) {
  std::array<Input, 3> in{};
  for (int i = 0; i < r.operands; ++i) {
    const Source& s = r.from[static_cast<size_t>(i)];
    in[static_cast<size_t>(i)] = {block_start(s, offset), one_per_block(s) ? 1 : len};
  }
  std::byte* dst = block_destination(r, offset);
  const ChainStep& s = *r.step;
  switch (s.kind) {
    case ChainStep::Kind::kUnary:
      r.unary(static_cast<Unary>(s.fn), s.dtype, in[0], dst, len);
      return;
    case ChainStep::Kind::kBinary:
      r.binary(static_cast<Binary>(s.fn), s.dtype, in[0], in[1], dst, len);
      return;
    case ChainStep::Kind::kSelect:
      r.select(s.dtype, in[0], in[1], in[2], dst, len);
      return;
    case ChainStep::Kind::kConvert:
      r.convert(s.dtype, s.result, in[0], dst, len);
      return;
    case ChainStep::Kind::kMultiplyAdd:
      float_multiply_add(s.fn, s.dtype, in[0], in[1], in[2], dst, len);
      return;
  }
}

// Steps [first, last] of a chain as one register run (register_run.h): its program, the
// sources its slots read, and the steps whose results it writes (its outputs, in order): those a
// step after the run reads, and the chain's last.
struct RunDraft {
  RunProgram program;
  std::vector<Source> slots;
  std::vector<int> stored;
};

// The run op computing step r, where a run takes it: float32 or float64 arithmetic, a fused
// multiply-add, negation, absolute value, the square root, the maximum and the minimum.
std::optional<RunOp::Kind> run_kind(const Resolved& r) {
  const ChainStep& s = *r.step;
  if ((s.dtype != DType::kFloat32 && s.dtype != DType::kFloat64) || s.result != s.dtype) {
    return std::nullopt;
  }
  switch (s.kind) {
    case ChainStep::Kind::kMultiplyAdd:
      return RunOp::Kind::kMultiplyAdd;
    case ChainStep::Kind::kUnary:
      if (s.fn == static_cast<uint8_t>(Unary::kNeg)) return RunOp::Kind::kNeg;
      if (s.fn == static_cast<uint8_t>(Unary::kAbs)) return RunOp::Kind::kAbs;
      if (s.fn == static_cast<uint8_t>(Unary::kSqrt)) return RunOp::Kind::kSqrt;
      return std::nullopt;
    case ChainStep::Kind::kBinary:
      switch (static_cast<Binary>(s.fn)) {
        case Binary::kAdd:
          return RunOp::Kind::kAdd;
        case Binary::kSub:
          return RunOp::Kind::kSub;
        case Binary::kMul:
          return RunOp::Kind::kMul;
        case Binary::kDiv:
          return RunOp::Kind::kDiv;
        case Binary::kMax:
          return RunOp::Kind::kMax;
        case Binary::kMin:
          return RunOp::Kind::kMin;
        default:
          return std::nullopt;
      }
    default:
      return std::nullopt;
  }
}

bool same_source(const Source& a, const Source& b) {
  return a.base == b.base && a.stride == b.stride && a.scalar == b.scalar && a.period == b.period &&
         a.repeat == b.repeat;
}

// The slot reading `from`: one per distinct source, however many of the run's steps read it.
int16_t slot_of(RunDraft& d, const Source& from) {
  for (size_t i = 0; i < d.slots.size(); ++i) {
    if (same_source(d.slots[i], from)) return static_cast<int16_t>(i);
  }
  d.slots.push_back(from);
  d.program.scalar_slots.push_back(one_per_block(from));
  return static_cast<int16_t>(d.slots.size() - 1);
}

// `last_reader[k]`: the last step reading step k's result (-1 for none). Every step in
// [first, last] must have a run_kind.
RunDraft draft_run(std::span<const Resolved> resolved, std::span<const int> last_reader, int first,
                   int last) {
  RunDraft d;
  d.program.dtype = resolved[static_cast<size_t>(first)].step->dtype;
  for (int k = first; k <= last; ++k) {
    const Resolved& r = resolved[static_cast<size_t>(k)];
    RunOp op{.kind = *run_kind(r)};
    if (op.kind == RunOp::Kind::kMultiplyAdd) op.signs = r.step->fn;
    for (int i = 0; i < r.operands; ++i) {
      const int32_t arg = r.step->args[static_cast<size_t>(i)];
      const int32_t earlier = -1 - arg;
      op.args[static_cast<size_t>(i)] = arg < 0 && earlier >= first
                                            ? run_value(earlier - first)
                                            : slot_of(d, r.from[static_cast<size_t>(i)]);
    }
    const bool last_step = static_cast<size_t>(k) + 1 == resolved.size();
    if (last_step || last_reader[static_cast<size_t>(k)] > last) {
      op.store = static_cast<int16_t>(d.stored.size());
      d.stored.push_back(k);
    }
    d.program.ops.push_back(op);
  }
  d.program.outputs = static_cast<int>(d.stored.size());
  return d;
}

// The block buffers of a chain's intermediates. Step k (all but the last) writes buffer
// buffer_of[k], taken from those whose values no step from k on reads (of its element size): a
// chain needs as many buffers as it has values live at once, not one per step, as registers are
// allocated. A long chain (norm.logcdf's 24 steps) then keeps long blocks in L1, where one
// buffer per step cut them to 128 and each step's call cost more than its arithmetic.
struct BufferPlan {
  std::vector<int> buffer_of;         // per step but the last
  std::vector<size_t> element_bytes;  // per buffer
};

BufferPlan plan_buffers(std::span<const ChainStep> steps) {
  const size_t n = steps.size();
  std::vector<size_t> last_read(n, 0);  // 0: read by no step (then free from the next)
  for (size_t k = 0; k < n; ++k) {
    for (int i = 0; i < arity(steps[k].kind); ++i) {
      const int32_t arg = steps[k].args[static_cast<size_t>(i)];
      const auto earlier = static_cast<size_t>(-1 - static_cast<int64_t>(arg));
      if (arg < 0 && earlier < k) last_read[earlier] = std::max(last_read[earlier], k);
    }
  }
  BufferPlan plan;
  std::vector<size_t> held_until;  // per buffer: the last step reading its value
  for (size_t k = 0; k + 1 < n; ++k) {
    const size_t bytes = dtype_size(steps[k].result);
    int chosen = -1;
    for (size_t b = 0; b < held_until.size() && chosen < 0; ++b) {
      if (plan.element_bytes[b] == bytes && held_until[b] < k) chosen = static_cast<int>(b);
    }
    if (chosen < 0) {
      chosen = static_cast<int>(held_until.size());
      plan.element_bytes.push_back(bytes);
      held_until.push_back(0);
    }
    held_until[static_cast<size_t>(chosen)] = std::max(last_read[k], k);
    plan.buffer_of.push_back(chosen);
  }
  return plan;
}

// Elements per block for these buffers: a multiple of 64.
int64_t block_length(const BufferPlan& plan) {
  int64_t bytes = 0;
  for (size_t b : plan.element_bytes) bytes += static_cast<int64_t>(b);
  const int64_t fits = kBlockBytes / std::max<int64_t>(bytes, 1) / 64 * 64;
  return std::clamp(fits, kMinBlock, kMaxBlock);
}

}  // namespace

int arity(ChainStep::Kind kind) {
  switch (kind) {
    case ChainStep::Kind::kUnary:
    case ChainStep::Kind::kConvert:
      return 1;
    case ChainStep::Kind::kBinary:
      return 2;
    case ChainStep::Kind::kSelect:
    case ChainStep::Kind::kMultiplyAdd:
      return 3;
  }
  return 0;
}

namespace {

// Elements per part when the team splits a chain: fewer would cost more in waking a helper
// (some microseconds) than the part's arithmetic saves.
constexpr int64_t kPartGrain = int64_t{1} << 15;

// How far ahead of the blocks the inputs are prefetched (ChainPass::prefetch), in blocks, and
// the line size it steps by.
constexpr int64_t kPrefetchBlocks = 4;
constexpr int64_t kCacheLine = 64;

// The fewest elements a pass makes to take register runs (ChainPass::plan_pieces; a pass, not
// the chain: run_chain_reduce_axis makes a pass per slab, 64 elements each for 4096 x 8 x 8,
// which took 3.7 ms with runs planned against 2.8 step by step). Planning one
// (drafts, the cache's lock) costs 0.4-1 us a pass, which 1,024 elements did not repay on the
// Zen 5 of session 67 (4 to 64 steps of float32 arithmetic: 0.9-7.6 us step by step, 1.3-8.6
// with runs) and 4,096 did (1.6-17 us against 1.7-15).
constexpr int64_t kRunElements = 4096;

// run_chain_reduce's rows per pass hold about this many elements (16 KiB of float32, in L1).
constexpr int64_t kChainReduceElements = 4096;

// A chain with its kernels looked up and its block buffers allocated once, to run over any
// number of ranges of its n elements (run_chain_reduce_axis runs one per made row). `work`: how
// many elements this pass will make in all (it takes register runs from kRunElements on).
// `ynn_steps`: bit k set where step k is computed as YNNPACK computes it (resolve).
class ChainPass {
 public:
  ChainPass(std::span<const ChainStep> steps, std::span<const Input> inputs, int64_t n,
            int64_t work, uint64_t ynn_steps = 0) {
    const BufferPlan plan = plan_buffers(steps);
    block_ = steps.size() == 1 ? 0 : block_length(plan);
    buffers_.resize(plan.element_bytes.size());
    for (size_t b = 0; b < buffers_.size(); ++b) {
      buffers_[b].resize(static_cast<size_t>(block_) * plan.element_bytes[b]);
    }
    std::vector<std::byte*> at(steps.size() - 1);
    for (size_t k = 0; k + 1 < steps.size(); ++k) {
      at[k] = buffers_[static_cast<size_t>(plan.buffer_of[k])].data();
    }
    resolved_.reserve(steps.size());
    for (size_t k = 0; k < steps.size(); ++k) {
      Resolved r = resolve(steps[k], (ynn_steps >> k & 1u) != 0);
      connect(r, static_cast<int>(k), inputs, n, at);
      if (k + 1 < steps.size()) r.dst = at[k];
      resolved_.push_back(r);
    }
    Resolved& last = resolved_.back();
    last.dst_stride = static_cast<int64_t>(dtype_size(steps.back().result));
    for (const Resolved& r : resolved_) {
      for (int i = 0; i < arity(r.step->kind); ++i) {
        const Source& from = r.from[static_cast<size_t>(i)];
        if (from.period > 0) runs_.push_back(run_length(from));
        // An input read in order (a block buffer's stride is 0, a scalar's too), once however
        // many steps read it: xlogy's x, read by three steps, was prefetched three times.
        const bool streamed = std::any_of(streams_.begin(), streams_.end(), [&](const Source& s) {
          return s.base == from.base && s.stride == from.stride;
        });
        if (from.period == 0 && from.stride > 0 && !from.scalar && !streamed) {
          streams_.push_back(from);
        }
      }
    }
    plan_pieces(work);
  }

  // Elements [begin, end), element i of the result written at out[i - out_first]. One step is
  // one kernel call over the range (no blocks); more go block by block. Either way a call ends
  // where a broadcast read in place starts a new run. `horizon` (at least `end`): how far the
  // caller will go on in later calls, elements [end, horizon) next; the inputs are prefetched
  // up to it, so that a caller making a few rows a call (run_chain_reduce: two rows of 2,048)
  // has the next call's first blocks on their way (cut at `end`, no block of such a call was
  // ever prefetched, and the chain waited on memory with the arithmetic idle).
  void run(std::byte* out, int64_t begin, int64_t end, int64_t out_first, int64_t horizon = 0) {
    Resolved& last = resolved_.back();
    last.dst = out;
    last.dst_first = out_first;
    horizon = std::max(horizon, end);
    const int64_t block = block_ == 0 ? end - begin : block_;
    for (int64_t offset = begin; offset < end;) {
      int64_t len = std::min(block, end - offset);
      for (int64_t run : runs_) len = std::min(len, run - offset % run);
      if (block_ != 0) {
        const int64_t ahead = offset + kPrefetchBlocks * block;
        prefetch(std::min(ahead, horizon), block, horizon);
        prefetch_result(last, std::min(ahead, end), std::min(ahead + block, end));
      }
      for (const int piece : pieces_) {
        if (piece >= 0) {
          run_block(resolved_[static_cast<size_t>(piece)], offset, len);
        } else {
          run_registers(register_runs_[static_cast<size_t>(-1 - piece)], offset, len);
        }
      }
      offset += len;
    }
  }

 private:
  // A register run's compiled code, the sources of its slots, the steps it writes.
  struct RegisterRun {
    CompiledRun code;
    std::vector<Source> slots;
    std::vector<int> stored;
  };

  // What runs each block, in order (pieces_): steps one call each, and the longest runs of
  // consecutive steps a register run takes (at least two, as long as they fit its registers),
  // compiled (register_run.h). A pass making fewer than kRunElements elements runs step by
  // step: planning a run costs microseconds, more than it saves there.
  void plan_pieces(int64_t work) {
    const int count = static_cast<int>(resolved_.size());
    std::vector<int> last_reader(resolved_.size(), -1);
    for (int k = 0; k < count; ++k) {
      const ChainStep& s = *resolved_[static_cast<size_t>(k)].step;
      for (int i = 0; i < arity(s.kind); ++i) {
        const int32_t arg = s.args[static_cast<size_t>(i)];
        if (arg < 0) last_reader[static_cast<size_t>(-1 - arg)] = k;
      }
    }
    const bool runs = count >= 2 && work >= kRunElements && register_runs_enabled();
    for (int k = 0; k < count;) {
      const int last = runs ? run_end(k, last_reader) : k;
      if (last > k) {
        RunDraft d = draft_run(resolved_, last_reader, k, last);
        if (CompiledRun run = compile_run(d.program)) {
          pieces_.push_back(-1 - static_cast<int>(register_runs_.size()));
          register_runs_.push_back({std::move(run), std::move(d.slots), std::move(d.stored)});
          k = last + 1;
          continue;
        }
      }
      for (; k <= last; ++k) pieces_.push_back(k);
    }
  }

  // The last step of the register run from step k: the longest stretch of steps a run takes,
  // of one dtype, if it fits the registers (the common case: one draft), else the longest fitting
  // stretch a binary search finds (fitting is nearly monotone: a shorter run has fewer values
  // live, though it may store more); k itself where none of two steps or more fits.
  int run_end(int k, std::span<const int> last_reader) const {
    const Resolved& first = resolved_[static_cast<size_t>(k)];
    if (!run_kind(first)) return k;
    int end = k;
    while (end + 1 < static_cast<int>(resolved_.size())) {
      const Resolved& next = resolved_[static_cast<size_t>(end) + 1];
      if (!run_kind(next) || next.step->dtype != first.step->dtype) break;
      ++end;
    }
    const auto fits = [&](int last) {
      return run_fits(draft_run(resolved_, last_reader, k, last).program);
    };
    if (end == k || fits(end)) return end;
    int good = k;  // fits (a single step runs on its own)
    int bad = end;
    while (bad - good > 1) {
      const int mid = good + (bad - good) / 2;
      (fits(mid) ? good : bad) = mid;
    }
    return good;
  }

  // A register run over the block of `len` elements from element `offset`.
  void run_registers(const RegisterRun& run, int64_t offset, int64_t len) const {
    std::array<const std::byte*, kMaxRunPointers> slots{};
    std::array<std::byte*, kMaxRunPointers> outputs{};
    for (size_t i = 0; i < run.slots.size(); ++i) slots[i] = block_start(run.slots[i], offset);
    for (size_t o = 0; o < run.stored.size(); ++o) {
      outputs[o] = block_destination(resolved_[static_cast<size_t>(run.stored[o])], offset);
    }
    run.code.fn(slots.data(), outputs.data(), len);
  }

  // Asks the caches for elements [at, min(at + len, end)) of every input read in order, some
  // blocks before the steps read them. Otherwise a block's first step (often a cheap one) waits
  // on memory with the arithmetic units idle, and the costly steps after it run with memory
  // idle; spread over the blocks, the reads overlap the arithmetic. A prefetch never faults.
  void prefetch(int64_t at, int64_t len, int64_t end) const {
    const int64_t last = std::min(at + len, end);
    for (const Source& s : streams_) {
      const std::byte* first = s.base + at * s.stride;
      const std::byte* stop = s.base + last * s.stride;
      for (const std::byte* line = first; line < stop; line += kCacheLine) {
        __builtin_prefetch(line);
      }
    }
  }

  // Asks the caches, for writing, for the result's elements [first, last), which the last step
  // writes some blocks later. Without it each block's stores wait for their lines to be read
  // (a store to a line not in cache reads it first) with the arithmetic idle: (x + 1) * 2 over
  // 4 Mi float32s took 2.7-3.3 ms on one core where x * 2 in one call took 1.0-1.4.
  static void prefetch_result(const Resolved& last, int64_t first, int64_t end) {
    const std::byte* from = last.dst + (first - last.dst_first) * last.dst_stride;
    const std::byte* stop = last.dst + (end - last.dst_first) * last.dst_stride;
    for (const std::byte* line = from; line < stop; line += kCacheLine) {
      __builtin_prefetch(line, 1);
    }
  }

  int64_t block_ = 0;  // elements per block; 0 for one step
  std::vector<std::vector<std::byte>> buffers_;
  std::vector<Resolved> resolved_;
  std::vector<int64_t> runs_;    // the run lengths of the broadcasts read in place
  std::vector<Source> streams_;  // the inputs read in order, element by element
  std::vector<int> pieces_;      // step k, or -1 - r for register_runs_[r]
  std::vector<RegisterRun> register_runs_;
};

// Runs the chain over elements [begin, end) of n, with block buffers of its own, writing element
// i of the result at out[i - out_first].
void run_range(std::span<const ChainStep> steps, std::span<const Input> inputs, std::byte* out,
               int64_t n, int64_t begin, int64_t end, int64_t out_first = 0,
               uint64_t ynn_steps = 0) {
  ChainPass(steps, inputs, n, end - begin, ynn_steps).run(out, begin, end, out_first);
}

// Whether XLA hands a float32 reduction of n elements (with the chain feeding it) to YNNPACK.
bool by_ynn(DType dtype, Reduce op, int64_t n) {
  return dtype == DType::kFloat32 && op != Reduce::kProd && n >= kYnnReduceElements;
}

// A sum whose chain is one float32 exp, expm1, tanh, logistic, log or log1p of an input of all n
// elements, in XLA's order (xla_sum.h) and by YNNPACK: each row's values made and added in
// registers (ynn_simd.h), never stored. False where the chain is another, the CPU has no vector
// loops for it, or the rows are short enough for ynn_short_row_sums (the general pass runs: a
// call a row cost more than the row, 10 ms for rows of 3 of (2^20, 3) against JAX's 3.9).
bool unary_sums(std::span<const ChainStep> steps, std::span<const Input> inputs, int64_t rows,
                int64_t extent, Reduce op, std::byte* out) {
  const int64_t n = rows * extent;
  if (steps.size() != 1 || op != Reduce::kSum || !by_ynn(steps[0].result, op, n) ||
      !sums_in_xla_order(extent) || extent <= kYnnShortRow) {
    return false;
  }
  const ChainStep& s = steps[0];
  if (s.kind != ChainStep::Kind::kUnary || !ynn_has_own(static_cast<Unary>(s.fn)) ||
      s.dtype != DType::kFloat32 || s.args[0] < 0 ||
      static_cast<size_t>(s.args[0]) >= inputs.size()) {
    return false;
  }
  const Input& in = inputs[static_cast<size_t>(s.args[0])];
  if (in.elements != n || in.repeat != 1) return false;
  const auto* x = reinterpret_cast<const float*>(in.data);
  auto* y = reinterpret_cast<float*>(out);
  const YnnLoops* loops = ynn_loops();
  if (loops == nullptr) return false;
  const auto fn = static_cast<Unary>(s.fn);
  parallel_for(rows, std::max<int64_t>(1, kPartGrain / extent), 1,
               [&](int64_t first, int64_t last) {
                 for (int64_t r = first; r < last; ++r)
                   loops->unary_row_sum(fn, x + r * extent, extent, &y[r]);
               });
  return true;
}

// A sum whose chain is one widening convert of a half type (float16 or bfloat16 into float32,
// spmd::numpy's sum of a half array) over the whole outer × extent × inner input, in its
// order: reduce() itself, which widens a row or a piece at a time into the same float32 values
// and adds them in the same order, so the bits are those of the chain's pass; false where the
// chain is another (the general pass runs).
bool widened_sums(std::span<const ChainStep> steps, std::span<const Input> inputs, int64_t outer,
                  int64_t extent, int64_t inner, Reduce op, std::byte* out) {
  if (steps.size() != 1 || op != Reduce::kSum) return false;
  const ChainStep& s = steps[0];
  if (s.kind != ChainStep::Kind::kConvert || !is_half_dtype(s.dtype) ||
      s.result != DType::kFloat32 || s.args[0] < 0 ||
      static_cast<size_t>(s.args[0]) >= inputs.size()) {
    return false;
  }
  const Input& in = inputs[static_cast<size_t>(s.args[0])];
  if (in.elements != outer * extent * inner || in.repeat != 1) return false;
  reduce(op, s.dtype, in.data, Shape{outer, extent, inner}, 1, s.result, out);
  return true;
}

}  // namespace

void run_chain(std::span<const ChainStep> all_steps, std::span<const Input> all_inputs,
               std::byte* out, int64_t n) {
  if (all_steps.empty()) throw InvalidArgument("run_chain: a chain of no steps");
  if (n == 0)
    return run_range(all_steps, all_inputs, out, 0, 0, 0);  // checks the steps all the same
  const HoistedChain h = hoist_uniform_steps(all_steps, all_inputs, n);
  parallel_for(n, kPartGrain, 64, [&](int64_t begin, int64_t end) {
    run_range(h.steps, h.inputs, out, n, begin, end);
  });
}

void run_chain_reduce(std::span<const ChainStep> all_steps, std::span<const Input> all_inputs,
                      int64_t rows, int64_t extent, Reduce op, std::byte* out) {
  if (all_steps.empty()) throw InvalidArgument("run_chain_reduce: a chain of no steps");
  const DType dtype = all_steps.back().result;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
    throw InvalidArgument(
        fmt::format("run_chain_reduce: reduces float32 or float64, not {}", dtype_name(dtype)));
  }
  const int64_t n = rows * extent;
  if (n == 0) {
    run_range(all_steps, all_inputs, nullptr, 0, 0, 0);  // checks the steps all the same
    if (rows > 0) reduce(op, dtype, nullptr, Shape{rows, 0}, 1, dtype, out);
    return;
  }
  const HoistedChain h = hoist_uniform_steps(all_steps, all_inputs, n);
  const std::span<const ChainStep> steps = h.steps;
  const std::span<const Input> inputs = h.inputs;
  if (widened_sums(steps, inputs, rows, extent, 1, op, out)) return;
  if (unary_sums(steps, inputs, rows, extent, op, out)) return;
  const uint64_t ynn_steps = by_ynn(dtype, op, n) ? ynn_fused_steps(steps) : 0;
  const size_t width = dtype_size(dtype);
  // Rows per pass: enough for a few thousand elements, so short rows share a pass.
  const int64_t group = std::max<int64_t>(1, kChainReduceElements / extent);
  parallel_for(
      rows, std::max<int64_t>(1, kPartGrain / extent), 1, [&](int64_t first, int64_t last) {
        std::vector<std::byte> buffer(static_cast<size_t>(std::min(group, last - first) * extent) *
                                      width);
        // One pass for the part's groups: making one per group of 4,096 elements (its kernels
        // looked up, its buffers allocated) cost more than a short chain's arithmetic.
        ChainPass pass(steps, inputs, n, (last - first) * extent, ynn_steps);
        for (int64_t r = first; r < last; r += group) {
          const int64_t count = std::min(group, last - r);
          pass.run(buffer.data(), r * extent, (r + count) * extent, r * extent, last * extent);
          reduce_rows(op, dtype, buffer.data(), count, extent, rows,
                      out + r * static_cast<int64_t>(width));
        }
      });
}

namespace {

// Outer slab `o` of the chain's outer × extent × inner result, reduced over its rows into `out`
// (inner elements), each part of the team making rows with a ChainPass of its own.
void reduce_slab(std::span<const ChainStep> steps, std::span<const Input> inputs, int64_t outer,
                 int64_t extent, int64_t inner, Reduce op, int64_t o, std::byte* out) {
  const int64_t n = outer * extent * inner;
  const MakeRows makers = [&]() -> MakeRow {
    const uint64_t ynn_steps = by_ynn(steps.back().result, op, n) ? ynn_fused_steps(steps) : 0;
    auto pass = std::make_shared<ChainPass>(steps, inputs, n, extent * inner, ynn_steps);
    return [pass, o, extent, inner](int64_t row, int64_t first, int64_t last, std::byte* dst) {
      const int64_t at = (o * extent + row) * inner;
      pass->run(dst, at + first, at + last, at + first);
    };
  };
  reduce_made_rows(op, steps.back().result, extent, inner, makers, out);
}

}  // namespace

void run_chain_reduce_axis(std::span<const ChainStep> all_steps, std::span<const Input> all_inputs,
                           int64_t outer, int64_t extent, int64_t inner, Reduce op,
                           std::byte* out) {
  if (inner == 1) return run_chain_reduce(all_steps, all_inputs, outer, extent, op, out);
  if (all_steps.empty()) throw InvalidArgument("run_chain_reduce_axis: a chain of no steps");
  const DType dtype = all_steps.back().result;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
    throw InvalidArgument(fmt::format("run_chain_reduce_axis: reduces float32 or float64, not {}",
                                      dtype_name(dtype)));
  }
  if (outer * extent * inner == 0) {
    run_range(all_steps, all_inputs, nullptr, 0, 0, 0);  // checks the steps all the same
    if (outer * inner > 0) reduce(op, dtype, nullptr, Shape{outer, 0, inner}, 1, dtype, out);
    return;
  }
  const HoistedChain h = hoist_uniform_steps(all_steps, all_inputs, outer * extent * inner);
  const std::span<const ChainStep> steps = h.steps;
  const std::span<const Input> inputs = h.inputs;
  if (widened_sums(steps, inputs, outer, extent, inner, op, out)) return;
  const auto width = static_cast<int64_t>(dtype_size(dtype));
  const int64_t slab = extent * inner;
  if (outer >= team_size()) {  // whole slabs to each part, as reduce() splits them
    parallel_for(
        outer, std::max<int64_t>(1, kPartGrain / slab), 1, [&](int64_t first, int64_t last) {
          for (int64_t o = first; o < last; ++o)
            reduce_slab(steps, inputs, outer, extent, inner, op, o, out + o * inner * width);
        });
    return;
  }
  for (int64_t o = 0; o < outer; ++o) {  // the team inside each slab
    reduce_slab(steps, inputs, outer, extent, inner, op, o, out + o * inner * width);
  }
}

}  // namespace spmd::kernels
