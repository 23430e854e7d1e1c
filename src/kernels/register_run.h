// Register runs: a few consecutive float arithmetic steps of a chain (chain.h) compiled into one
// loop of vector instructions, each step's value kept in a register from the step that makes it
// to the last step of the run that reads it.
//
// A chain otherwise runs step by step over a block of up to 2048 elements: every step is a call
// that reads its operands from the L1 cache and writes its result back there, and on the 2-core
// Zen 3 a call cost about what 512 float32s of arithmetic do. nn.gelu's nine steps were then nine
// passes over each block, where XLA's fusion computes all nine on a vector in registers (session
// 65: sum(gelu(a), 1) at 0.73 of JAX's speed). A run does that for the steps it takes: the
// four arithmetic operations, the fused multiply-add (its signs flipped first by the sign bit, as
// float_arithmetic.h's), negation, absolute value and the square root, of float32 or float64,
// and jnp.maximum and jnp.minimum. Each is the one IEEE instruction on each element (the
// extremes: mask_ops.h's instructions in its order), in the vector loop as in the loop for the
// last few elements, so the bits are those of the steps run one by one (no reordering, no
// contraction; a NaN is some NaN); subnormals follow the calling thread's floating-point mode as
// the steps' own loops do.
//
// The code is generated at run time by Xbyak (Debian's libxbyak-dev, the JIT assembler oneDNN
// is built on), once per distinct program and width, and cached: at most kMaxRunPrograms
// programs (about a page of code each), the oldest dropped first. Its vector loop takes the
// widest registers the CPU has: zmm (16 float32s) where it has AVX-512 Foundation, else ymm (8)
// with AVX2 and FMA3. The values are the same bits at either width, since each element gets the
// same IEEE instruction. SPMD_CHAIN_REGISTERS=avx2 keeps to ymm (a CPU whose clock drops under
// zmm, say). No run is compiled on a CPU without AVX2 and FMA, on another architecture, where the
// environment sets SPMD_CHAIN_REGISTERS=0, or once mapping executable memory has failed
// (compile_run returns nothing; the chain runs step by step, with the same values). Thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "spmd/dtype.h"

namespace spmd::kernels {

// One step of a run.
struct RunOp {
  // kMax and kMin: jnp.maximum and jnp.minimum as mask_ops.h's ieee_max_min computes them.
  enum class Kind : uint8_t { kAdd, kSub, kMul, kDiv, kMultiplyAdd, kNeg, kAbs, kSqrt, kMax, kMin };
  Kind kind = Kind::kAdd;
  uint8_t signs = 0;  // kMultiplyAdd: chain.h's MultiplyAddSign bits
  // Operands in order (1, 2 or 3 by kind): a slot (>= 0) or run_value(j), op j's value (j before
  // this op).
  std::array<int16_t, 3> args{};
  int16_t store = -1;  // the output this op's value is written to, or -1 (read inside only)
};

constexpr int16_t run_value(int op) { return static_cast<int16_t>(-1 - op); }

// How many operands an op of `kind` reads.
int run_arity(RunOp::Kind kind);

// A run: its ops over `dtype` (float32 or float64), reading `slots` (per slot: true where it is
// one element read for all, false for len elements in order) and writing `outputs` outputs, each
// len elements.
struct RunProgram {
  DType dtype = DType::kFloat32;
  std::vector<RunOp> ops;
  std::vector<bool> scalar_slots;
  int outputs = 0;
};

// A compiled run over elements [0, len): slots[s] and outputs[o] point at element 0 of each.
// An output may be a slot's own buffer (the same address) or overlap none of them.
using RunFunction = void (*)(const std::byte* const* slots, std::byte* const* outputs, int64_t len);

// The most programs kept compiled at once, and the most slots plus outputs one run takes (each
// held in a general register).
constexpr int kMaxRunPrograms = 1024;
constexpr int kMaxRunPointers = 11;

// A compiled run: `fn`, whose code stays mapped while any copy of `code` is held.
struct CompiledRun {
  std::shared_ptr<const void> code;
  RunFunction fn = nullptr;
  explicit operator bool() const { return fn != nullptr; }
};

// The vector registers a run's loop takes.
enum class RunVectors : uint8_t { kNone, kAvx2, kAvx512 };

// The width runs are compiled for in this process: the CPU's widest (kAvx512 with AVX-512
// Foundation, kAvx2 with AVX2 and FMA3, else kNone), kAvx2 where SPMD_CHAIN_REGISTERS=avx2 and the
// CPU has it, kNone where SPMD_CHAIN_REGISTERS=0. Read once.
RunVectors register_run_vectors();

// Whether this CPU runs code of width `v` (kNone: never), whatever the environment says.
bool register_run_vectors_supported(RunVectors v);

// Whether runs are compiled here: register_run_vectors() is not kNone.
bool register_runs_enabled();

// Whether `p` fits the registers: its slots and outputs in kMaxRunPointers general registers, the
// values live at once in eleven vector registers. Its ops must read only earlier values and
// slots it has (else false).
bool run_fits(const RunProgram& p);

// The compiled code of `p` at register_run_vectors()'s width, compiled on the first call for an
// equal program and kept for later calls; once kMaxRunPrograms are kept, the one compiled first
// is dropped from the cache (its code unmapped when its last holder lets it go). Empty where runs
// are not enabled, `p` does not fit or is of another dtype, or mapping executable memory has
// failed.
CompiledRun compile_run(const RunProgram& p);

// The same at width `vectors`, whatever the environment says (tests compare the widths); empty
// where this CPU lacks it.
CompiledRun compile_run(const RunProgram& p, RunVectors vectors);

// How many distinct programs this process has compiled (tests and diagnostics).
int64_t register_runs_compiled();

}  // namespace spmd::kernels
