// JAX's samplers (jax.random.uniform, normal, truncated_normal, gumbel, randint, exponential,
// laplace, logistic, cauchy, lognormal; gamma, loggamma and poisson below) computed from
// the counter-based bits of random_bits.h in one pass: each element's value is a function of its
// own flat index's hash, so, like the bits, any block of the array is computed alone and equals
// the same elements of the whole.
//
// Each sampler repeats, operation for operation and in the same float type, the program JAX
// traces for it (jax/_src/random/core.py) as XLA compiles it for CPU: the same bits, shifts,
// fused multiply-adds, roundings and polynomials (XLA's erf_inv, and its log, log1p, exp and rsqrt
// as XLA's CPU code generator writes them: xla_math.h). spmd/random.h states how close each comes
// to JAX's values and why; tests/jit/random_jax_test.py measures it. The float samplers are built
// twice, for x86-64-v3 (AVX2, FMA) and the baseline, picked at load time; both give the same
// values. Pure; thread-safe.
// Open to lib/: the random family's attributes name the distributions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/random_bits.h"
#include "spmd/dtype.h"

namespace spmd::kernels {

enum class Distribution : uint8_t {
  kUniform,          // [a, b): float16, bfloat16, float32 or float64
  kNormal,           // standard normal: float32, float16, bfloat16
  kTruncatedNormal,  // standard normal within (a, b): float32
  kGumbel,           // standard Gumbel, JAX's "low" mode: float32, float16, bfloat16
  kRandint,          // integers in [low, high): int32, int64, uint32 or uint64
  // JAX's functions of a uniform (lognormal: of a normal), float32, float16, bfloat16:
  kExponential,  // -log1p(-u), u on [0, 1)
  kLaplace,      // sign(u) log1p(-|u|), u on [-1 + epsneg, 1)
  kLogistic,     // log(u) - log1p(-u), u on [tiny, 1)
  kCauchy,       // tan(pi (u - 1/2)), u on [eps, 1)
  kLognormal,    // exp(normal sigma), sigma the sampler's `a`
  // erf_inv(u), u on (-1, 1): lognormal's draw before its factor sqrt(2) sigma, which XLA folds
  // into one constant (random::lognormal with an array of sigmas multiplies it in after).
  kErfInv,
};

struct Sampler {
  Distribution distribution = Distribution::kUniform;
  DType dtype = DType::kFloat32;
  double a = 0, b = 1;           // uniform's [minval, maxval); truncated normal's (lower, upper);
                                 // lognormal's sigma (a)
  int64_t low = 0, high = 0;     // randint's [minval, maxval), clipped to the dtype's range
  bool high_past_range = false;  // randint: maxval was above the dtype's largest value
};

// The name JAX's function has ("uniform", "normal", …).
std::string_view distribution_name(Distribution d);

// Whether `sampler`'s dtype is one this file computes for its distribution.
bool supported(const Sampler& sampler);

// Writes the block's values, row-major, at `out` (sampler.dtype's elements). Requires
// supported(sampler).
void random_sample(const Sampler& sampler, const RandomBlock& block, std::byte* out);

// JAX's permutation of n elements (jax.random.permutation's _shuffle): rounds of a stable sort
// by fresh 32-bit keys, as many as make a repeated key unlikely (ceil(3 ln n / ln(2^32 - 1))),
// the key split before each. Element k of the result is the index placed at k.
std::vector<int64_t> random_permutation(std::array<uint32_t, 2> key, int64_t n);

// `in` (shape, elements of `element_size` bytes) reordered along `axis` by
// random_permutation(key, shape[axis]), written at `out`.
void random_permute(std::array<uint32_t, 2> key, size_t element_size, const std::byte* in,
                    const Shape& shape, int axis, std::byte* out);

// What random_gamma gives: the samples, their logarithms with XLA's log (jax.random.loggamma's),
// or their logarithms with YNNPACK's log (ynn_math.h: jax.random.dirichlet's from 4,096 values,
// whose logarithms XLA fuses into the reduction it hands YNNPACK).
enum class GammaForm : uint8_t { kSample, kLog, kLogAsYnn };

// jax.random.gamma's float32 values, one for each of the n shape parameters `alpha` (> 0), or
// their logarithms (`form`): value i is JAX's _gamma_one from key i
// of split(key, n), Marsaglia and Tsang's rejection sampler (alpha < 1 boosted to alpha + 1, then
// scaled by a uniform to the power 1 / alpha), its normal and uniform draws JAX's bit for bit from
// the same keys, its logarithms and its c = (1/3) rsqrt(d) XLA's (xla_math.h), its products
// fused where XLA's CPU code fuses them. The power in the boost is the C library's powf, as
// XLA's CPU code calls it. A NaN or non-positive
// alpha gives NaN, as JAX's loop does.
void random_gamma(std::array<uint32_t, 2> key, const float* alpha, int64_t n, GammaForm form,
                  float* out);

// jax.random.poisson's values (int32), one for each of the n rates `lam` (float32), as JAX's
// _poisson computes them over the whole array: Knuth's products of uniforms where lam < 10 (or
// NaN), Hormann's transformed rejection elsewhere, whose rounds run until every element has
// accepted (an element accepted early takes its last accepted draw, as JAX's select does); the
// uniforms JAX's bit for bit, its logarithms XLA's, lgamma the C library's (a few ulps from
// XLA's, which can change a borderline acceptance). 0 where lam is 0, -1 where it is NaN or
// negative. Throws InvalidArgument if the rejection rounds pass 2^20 (JAX's loop runs to 2^31).
void random_poisson(std::array<uint32_t, 2> key, const float* lam, int64_t n, int32_t* out);

// XLA's float32 erf_inv (Giles' single-precision polynomial), as JAX's erf_inv compiles on CPU.
float erf_inv(float x);

}  // namespace spmd::kernels
