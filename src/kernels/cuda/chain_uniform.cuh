// The uniform floating-point chain kernel (chain_uniform.h): its definitions, included by the
// one file per dtype that instantiates launch_uniform (chain_uniform_f32.cu and the others), so
// that nvcc compiles the four dtypes' kernels in parallel. Private to src/kernels/cuda.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/cuda/chain_grid.cuh"
#include "kernels/cuda/chain_uniform.h"

namespace spmd::kernels::cuda {
namespace {

// The fields of ScalarChain that uniform_chain_kernel reads for a program without a prologue, of
// at most S steps: about 300 bytes of a launch's parameters for S = 2 where ScalarChain takes
// 1.3 KB (its 64 steps). Every input fits (kMaxScalarChainInputs), so no program falls back.
template <int S>
struct CompactChain {
  int32_t steps = 0;
  int32_t inputs = 0;
  ChainStep step[S];
  const std::byte* input[kMaxScalarChainInputs];
  int64_t input_elements[kMaxScalarChainInputs];
  std::byte* out = nullptr;
  int64_t n = 0;
};

// `program`, which has no prologue and at most S steps, as a CompactChain<S>.
template <int S>
CompactChain<S> compact(const ScalarChain& program) {
  CompactChain<S> c;
  c.steps = program.steps;
  c.inputs = program.inputs;
  std::copy_n(program.step, program.steps, c.step);
  std::copy_n(program.input, program.inputs, c.input);
  std::copy_n(program.input_elements, program.inputs, c.input_elements);
  c.out = program.out;
  c.n = program.n;
  return c;
}

template <DType D>
struct Uniform;  // the storage and compute types of a uniform program of dtype D
template <class T>
struct ComputedAsStored {  // float and double: computed in the type they are stored in
  using Storage = T;
  using F = T;
  __device__ static F in(Storage v) { return v; }
  __device__ static Storage out(F v) { return v; }
};
template <>
struct Uniform<DType::kFloat32> : ComputedAsStored<float> {};
template <>
struct Uniform<DType::kFloat64> : ComputedAsStored<double> {};
template <>
struct Uniform<DType::kBFloat16> {
  using Storage = uint16_t;
  using F = float;
  __device__ static F in(Storage v) { return to_float(bfloat16{v}); }
  __device__ static Storage out(F v) { return to_bfloat16(v).bits; }
};
template <>
struct Uniform<DType::kFloat16> {
  using Storage = uint16_t;
  using F = float;
  __device__ static F in(Storage v) { return to_float(float16{v}); }
  __device__ static Storage out(F v) { return to_float16(v).bits; }
};

// Calls each(std::integral_constant<Op, op>{}) for the run-time `op` among the values 0 to
// kLast, so that `each` sees the operation as a constant; false when `op` is past kLast.
template <class Op, class Each, int... I>
__device__ __forceinline__ bool dispatch(Op op, Each&& each, std::integer_sequence<int, I...>) {
  return ((static_cast<int>(op) == I &&
           (each(std::integral_constant<Op, static_cast<Op>(I)>{}), true)) ||
          ...);
}

// The unary steps that chain_uniform.h's expanded() leaves out: one copy a kernel, which each
// such step calls, the operation dispatched once for all K (through local memory: the call's
// cost is small beside these functions').
template <class F, int K>
__device__ __noinline__ void unary_called(Unary op, const F (&a)[K], F (&out)[K]) {
  const bool done = dispatch(
      op,
      [&](auto constant) {
        if constexpr (!expanded(constant.value)) {
#pragma unroll
          for (int j = 0; j < K; ++j) out[j] = scalar::unary_float<F>(constant.value, a[j]);
        }
      },
      std::make_integer_sequence<int, static_cast<int>(kLastUnary) + 1>{});
  if (!done) {
    for (int j = 0; j < K; ++j) out[j] = scalar::unary_float<F>(op, a[j]);
  }
}

// A step's operation on a thread's K elements, dispatched once for all K: each case calls
// scalar_ops' function with a constant operation, whose own switch then folds away. (A switch
// per element, which the compiler hoisted out of the unrolled loop while the functions were
// few, stayed per element once sin, erf, cbrt and the rest had joined: the fused a * b + c fell
// from 0.85x to 0.77x of a device copy's bandwidth on an H100.) With Called, the operations that
// are not expanded call unary_called; without it, the launch saw that the program has none.
template <class F, int K, bool Called>
__device__ __forceinline__ void unary_k(Unary op, const F (&a)[K], F (&out)[K]) {
  const bool done = dispatch(
      op,
      [&](auto constant) {
        if constexpr (expanded(constant.value)) {
#pragma unroll
          for (int j = 0; j < K; ++j) out[j] = scalar::unary_float<F>(constant.value, a[j]);
        } else if constexpr (Called) {
          unary_called<F, K>(constant.value, a, out);
        }
      },
      std::make_integer_sequence<int, static_cast<int>(kLastUnary) + 1>{});
  if constexpr (Called) {
    if (!done) unary_called<F, K>(op, a, out);
  }
}

// The last binary operation dispatch() sees as a constant (those after it call or fall back).
constexpr Binary kLastDispatchedBinary = Binary::kRem;

// The binary steps that expanded() leaves out, as unary_called.
template <class F, int K>
__device__ __noinline__ void binary_called(Binary op, const F (&a)[K], const F (&b)[K],
                                           F (&out)[K]) {
  const bool done = dispatch(
      op,
      [&](auto constant) {
        if constexpr (!expanded(constant.value)) {
#pragma unroll
          for (int j = 0; j < K; ++j) out[j] = scalar::binary_float<F>(constant.value, a[j], b[j]);
        }
      },
      std::make_integer_sequence<int, static_cast<int>(kLastDispatchedBinary) + 1>{});
  if (!done) {
    for (int j = 0; j < K; ++j) out[j] = scalar::binary_float<F>(op, a[j], b[j]);
  }
}

// A binary step on K elements, as unary_k.
template <class F, int K, bool Called>
__device__ __forceinline__ void binary_k(Binary op, const F (&a)[K], const F (&b)[K], F (&out)[K]) {
  const bool done = dispatch(
      op,
      [&](auto constant) {
        if constexpr (expanded(constant.value)) {
#pragma unroll
          for (int j = 0; j < K; ++j) out[j] = scalar::binary_float<F>(constant.value, a[j], b[j]);
        } else if constexpr (Called) {
          binary_called<F, K>(constant.value, a, b, out);
        }
      },
      std::make_integer_sequence<int, static_cast<int>(kLastDispatchedBinary) + 1>{});
  if constexpr (Called) {
    if (!done) binary_called<F, K>(op, a, b, out);
  }
}

// A prologue value (a Slot of float's or double's class) as F.
template <class F>
__device__ __forceinline__ F slot_value(scalar::Slot v) {
  if constexpr (std::is_same_v<F, double>) {
    return v.d;
  } else {
    return v.f;
  }
}

// K values of S read or written by one access (a float's 4: 16 bytes).
template <class S, int K>
struct alignas(sizeof(S) * K) Vector {
  S value[K];
};

// Blocks of 256 threads a multiprocessor must hold, which bounds a thread's registers (ptxas
// -v, sm_90). The float kernels without a prologue, the memory-bound ones, at the 40 registers
// (six blocks) that ptxas chose for them while every operation was expanded in them, except
// N = 4, which spills there now: 48 (five). The prologue's float kernel at 64 (four), as before;
// double's at 80 (three), ptxas's own choice.
template <DType D, int N, int H>
constexpr int kMinBlocks = D == DType::kFloat64 ? 3
                           : H > 0              ? 4
                           : N == 4             ? 5
                                                : 6;

// Uniform floating-point programs (scalar_chain.h's is_uniform_float) of at most N per-element
// steps, K elements a thread: plain F values in registers, one switch on the operation per step
// and K elements, the same unary_float/binary_float arithmetic as scalar_ops.h's unary/binary.
// With H > 0, the prologue (any steps) runs once a thread through scalar_chain.h's general
// path and its values (at most H) wait in registers as F; with H = 0 the program has none, and
// the registers are not spent (ptxas: 32 a thread for float32's N = 8, 40 with H = 8).
//
// With `contiguous`, a thread's K elements are neighbours, read and written by one vector access
// each (K × the storage's size, to which the launch checked every array is aligned), as a
// memory-bound chain wants on a GPU whose bandwidth outruns one load an element (a plain a * b +
// c kernel on an H200, one wave of blocks: 0.92× of a device copy's bandwidth with a load an
// element, 1.02× with 16-byte vectors; this kernel, over a block a tile: 0.74× and 0.75×, its
// per-tile decoding of the program the larger cost).
// Otherwise a thread's elements are `blockDim.x` apart, a warp still reading neighbours.
//
// `Program` is ScalarChain where H > 0 (the prologue runs through scalar_chain.h), else the
// smaller CompactChain below: a launch's host time grows with its parameters.
// Called: whether the program may hold steps that chain_uniform.h's expanded() leaves out (they
// call unary_called or binary_called); without it the kernel has neither their code nor their
// registers.
template <DType D, int N, int K, int H, class Program, bool Called>
__global__ void __launch_bounds__(256, kMinBlocks<D, N, H>)
    uniform_chain_kernel(const __grid_constant__ Program program, int* error, bool contiguous) {
  using U = Uniform<D>;
  using F = typename U::F;
  using Storage = typename U::Storage;
  constexpr bool kHalf = scalar::is_half(D);
  F hoisted[H > 0 ? H : 1];
  if constexpr (H > 0) {
    bool divided_by_zero = false;
    HoistedValues values{};
    run_prologue(program, values, &divided_by_zero);
    if (divided_by_zero) atomicExch(error, 1);
#pragma unroll
    for (int h = 0; h < H; ++h) hoisted[h] = slot_value<F>(values.value[h]);
  }
  const int64_t width = blockDim.x;
  const int64_t tile = width * K;
  const int64_t step = contiguous ? 1 : width;
  for (int64_t base = blockIdx.x * tile + threadIdx.x * (contiguous ? K : 1); base < program.n;
       base += int64_t{gridDim.x} * tile) {
    int64_t e[K];
    bool live[K];
#pragma unroll
    for (int j = 0; j < K; ++j) {
      e[j] = base + j * step;
      live[j] = e[j] < program.n;
      if (!live[j]) e[j] = base;  // read a valid element; nothing is stored for it
    }
    const bool whole = contiguous && base + K <= program.n;  // one vector access an array
    F results[N][K];
    const auto operand = [&](int32_t arg, F* out) {
      if (H > 0 && arg >= program.inputs) {  // a prologue value, picked without an address
        F v = hoisted[0];
#pragma unroll
        for (int h = 1; h < H; ++h) {
          if (h == arg - program.inputs) v = hoisted[h];
        }
#pragma unroll
        for (int j = 0; j < K; ++j) out[j] = v;
        return;
      }
      if (arg >= 0) {
        const Storage* in =
            static_cast<const Storage*>(static_cast<const void*>(program.input[arg]));
        const bool scalar_input = program.input_elements[arg] == 1;
        Storage raw[K];
        if (whole && !scalar_input) {
          const auto v = *reinterpret_cast<const Vector<Storage, K>*>(in + base);
#pragma unroll
          for (int j = 0; j < K; ++j) raw[j] = v.value[j];
        } else {
#pragma unroll
          for (int j = 0; j < K; ++j) raw[j] = in[scalar_input ? 0 : e[j]];
        }
#pragma unroll
        for (int j = 0; j < K; ++j) out[j] = U::in(raw[j]);
        return;
      }
#pragma unroll
      for (int j = 0; j < K; ++j) {
        out[j] = results[0][j];
#pragma unroll
        for (int i = 1; i < N; ++i) {
          if (i == -1 - arg) out[j] = results[i][j];
        }
      }
    };
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (k >= program.steps) break;
      const ChainStep& s = program.step[k];
      F a[K], b[K];
      operand(s.args[0], a);
      if (s.kind == ChainStep::Kind::kBinary) {
        operand(s.args[1], b);
        binary_k<F, K, Called>(static_cast<Binary>(s.fn), a, b, results[k]);
      } else {
        unary_k<F, K, Called>(static_cast<Unary>(s.fn), a, results[k]);
      }
      if constexpr (kHalf) {
#pragma unroll
        for (int j = 0; j < K; ++j) results[k][j] = U::in(U::out(results[k][j]));
      }
    }
    F last[K];
    operand(-program.steps, last);
    Storage* out = static_cast<Storage*>(static_cast<void*>(program.out));
    if (whole) {
      Vector<Storage, K> v;
#pragma unroll
      for (int j = 0; j < K; ++j) v.value[j] = U::out(last[j]);
      *reinterpret_cast<Vector<Storage, K>*>(out + base) = v;
      continue;
    }
#pragma unroll
    for (int j = 0; j < K; ++j) {
      if (live[j]) out[e[j]] = U::out(last[j]);
    }
  }
}

// Whether every array that `program` reads element by element, and its output, start at a
// multiple of K elements of `bytes` each (what the contiguous path's vector accesses need).
bool vectors_align(const ScalarChain& program, int k, size_t bytes) {
  const auto aligned = [&](const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % (k * bytes) == 0;
  };
  if (!aligned(program.out)) return false;
  for (int32_t a = 0; a < program.inputs; ++a) {
    if (program.input_elements[a] != 1 && !aligned(program.input[a])) return false;
  }
  return true;
}

// Queues a CompactChain<S> kernel for `program`: with Called where it has a step that is not
// expanded.
template <DType D, int S, int K>
void launch_compact(const ScalarChain& program, int* error, int64_t wanted, int threads,
                    cudaStream_t stream, bool contiguous) {
  if (every_step_expanded(program)) {
    launch_all<&uniform_chain_kernel<D, S, K, 0, CompactChain<S>, false>>(
        wanted, threads, stream, compact<S>(program), error, contiguous);
  } else {
    launch_all<&uniform_chain_kernel<D, S, K, 0, CompactChain<S>, true>>(
        wanted, threads, stream, compact<S>(program), error, contiguous);
  }
}

}  // namespace

template <DType D>
void launch_uniform(const ScalarChain& program, int* error, int64_t wanted, int multiprocessors,
                    int threads, cudaStream_t stream) {
  constexpr int kK = 4;
  const bool contiguous = vectors_align(program, kK, sizeof(typename Uniform<D>::Storage));
  if (program.prologue > 0) {  // one kernel for every length and step: prologues are rare
    // A wave of blocks, each thread computing the prologue once for the tiles it strides over.
    launch_grid<&uniform_chain_kernel<D, 8, kK, kMaxHoistedValues, ScalarChain, true>>(
        wanted, multiprocessors, threads, stream, program, error, contiguous);
  } else if (program.steps <= 2) {
    launch_compact<D, 2, kK>(program, error, wanted, threads, stream, contiguous);
  } else if (program.steps <= 4) {
    launch_compact<D, 4, kK>(program, error, wanted, threads, stream, contiguous);
  } else {
    launch_compact<D, 8, kK>(program, error, wanted, threads, stream, contiguous);
  }
}

}  // namespace spmd::kernels::cuda
