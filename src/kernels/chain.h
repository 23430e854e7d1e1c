// Element-wise chains: several element-wise kernels (elementwise.h) in a row, later steps reading
// earlier steps' results, run as one pass over the elements.
//
// A chain such as a * b + c run step by step writes a * b to memory and reads it back. Run here,
// it goes block by block: every step runs on a block of at most 2048 elements (fewer where the
// intermediates would pass 24 KiB) before the next block starts, so each intermediate lives in a
// block-sized buffer in the L1 cache, every input is read once, `out` is written once, and all
// the streams move forward together, as in a loop written by hand for that chain. Blocks are
// small on purpose: with tiles of 4096 elements the streams took turns (a and b, then c and out),
// and a * b + c over 16 Mi float32 ran at 0.90-0.93x a hand-written loop's speed; blocks of 512
// ran at 1.03-1.05x one compiled at -O3, and 2048 made long chains 9-16% faster still
// (chain.cc; DESIGN.md, "Kernels").
//
// Each step's kernel is looked up once per call (elementwise.h's unary_kernel and the like), so a
// block costs one indirect call per step beside the arithmetic. Before each block the inputs read
// in order are prefetched four blocks ahead, so that memory and the arithmetic of the steps
// overlap (DESIGN.md, "Chains prefetch their inputs"). Pure function; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/elementwise.h"
#include "kernels/reduce.h"
#include "spmd/dtype.h"

namespace spmd::kernels {

// One step of a chain: which kernel, its dtypes, and where each of its operands comes from.
// kMultiplyAdd is a × b + c rounded once (a fused multiply-add), float32 or float64 only, with
// the signs its `fn` flags (MultiplyAddSign) flipped first: jit makes it where XLA's code
// contracts a product and the sum or difference reading it (jit/contract.h).
struct ChainStep {
  enum class Kind : uint8_t { kUnary, kBinary, kSelect, kConvert, kMultiplyAdd };
  Kind kind = Kind::kUnary;
  uint8_t fn = 0;                  // kUnary: a Unary; kBinary: a Binary; kMultiplyAdd: its signs
  DType dtype = DType::kFloat32;   // the kernel's dtype (kConvert: the one it converts from)
  DType result = DType::kFloat32;  // the dtype it writes: bool for a comparison, convert's `to`
  // Its operands in the kernel's order (1, 2, 3 and 1 of them by kind): chain_input(i) or
  // chain_result(k) of an earlier step k.
  std::array<int32_t, 3> args{};
};

// The most steps and inputs one chain takes, on every backend: a GPU launch carries the chain
// as its parameters (scalar_chain.h). jit's fusion (jit/fuse.h) makes no longer chain.
constexpr int kMaxChainSteps = 64;
constexpr int kMaxChainInputs = 16;

// kMultiplyAdd's fn: which operands' signs flip before the fused multiply-add, a bit each.
// c − a × b is (−a) × b + c, and a × b − c is a × b + (−c), each rounded once.
enum MultiplyAddSign : uint8_t { kNegateProduct = 1, kNegateAddend = 2 };

constexpr int32_t chain_input(int i) { return i; }
constexpr int32_t chain_result(int step) { return -1 - step; }

// How many operands a step of `kind` reads (1, 2 or 3).
int arity(ChainStep::Kind kind);

// Runs `steps` over n elements. `inputs` are the chain's operands, each of n elements, one (a
// scalar for every element) or a broadcast read in place (elementwise.h: Input's `repeat`;
// element i reads element (i / repeat) % elements: a row broadcast with repeat 1, a column
// broadcast with repeat its row's length), of the dtype the steps reading them give it
// (select's condition: bool); the last step's result, n elements of its `result` dtype, goes to
// `out`, which no input may overlap. Blocks end where a broadcast's run ends, so runs shorter
// than a block cost a kernel call each: fuse.h reads only runs of at least 64 in place. Equal,
// element for element, to running each step's kernel over all n elements in order. Throws
// InvalidArgument for a step reading a later step or a missing input, a multiply-add of another
// dtype than float32 or float64, and what a kernel throws (an
// integer division by zero; `out` is then partly written). Steps that read only scalars (a
// scalar computation jit fused into the chain) run once a call, not per element
// (chain_hoist.h); so do they in the two reductions below.
void run_chain(std::span<const ChainStep> steps, std::span<const Input> inputs, std::byte* out,
               int64_t n);

// A chain feeding a reduction of its result's last axis, in one pass: the chain runs over
// rows × extent elements a few rows at a time into a buffer that stays in cache, and each row of
// it is reduced with `op` into out[row] (`rows` elements of the last step's result dtype, which
// must be float32 or float64: InvalidArgument otherwise). The same values as run_chain followed
// by reduce(op, …, axis = last), without the result's trip through memory, but for one thing JAX
// does: XLA hands a float32 sum, max or min of 4,096 elements or more, with the element-wise work
// feeding it, to YNNPACK, which computes exp, log, expm1, log1p, tanh and logistic with its own
// formulas (ynn_math.h), so the float32 steps of those kinds that XLA's fusion takes in
// (ynn_fusion.h: not those behind a select, a comparison or another operation YNNPACK lacks) are
// YNNPACK's (ynn_reduce.h: ynn_has_own). A sum of one of them is then taken in registers
// (ynn_simd.h). The calling thread's team (thread_team.h) takes ranges of rows.
void run_chain_reduce(std::span<const ChainStep> steps, std::span<const Input> inputs, int64_t rows,
                      int64_t extent, Reduce op, std::byte* out);

// A chain feeding a reduction of one axis of its result, in one pass: the result viewed as
// outer × extent × inner, each of the `outer` slabs reduced over its `extent` rows into
// out[o × inner + c]. With inner = 1 it is run_chain_reduce (rows = outer). Else the chain makes
// each row as reduce_made_rows (reduce.h) needs it and it is added into the sums in reduce()'s
// order, so a leading axis's sum, such as a bias gradient's sum(dy, 0), reads the chain's inputs
// once and never writes its result. The same values as run_chain followed by reduce(op, …,
// axis), with YNNPACK's formulas as above; float32 or float64 results only (InvalidArgument
// otherwise). The team takes whole slabs where there are at least as many as it has threads, else
// it splits each slab's rows or columns.
void run_chain_reduce_axis(std::span<const ChainStep> steps, std::span<const Input> inputs,
                           int64_t outer, int64_t extent, int64_t inner, Reduce op, std::byte* out);

}  // namespace spmd::kernels
