// spmd::random — JAX's random numbers (jax.random), bit for bit: the Threefry-2x32 PRNG, JAX's
// default, in its partitionable mode (jax_threefry_partitionable, on by default since JAX 0.5).
//
// Keys are raw keys as jax.random.PRNGKey makes them: uint32[2] Arrays, or Tensors inside jit;
// or typed keys as jax.random.key makes them (random_key.h), which every sampler also takes.
// Every function is a pure function of the key: the same key gives the same values on every
// process, so seed 002's `PRNGKey(42)` initialises the same parameters everywhere, and
// `PRNGKey(42 + process_index())` gives each process its own stream.
//
// Under jit, bits are computed where they are used: with a sharded result (out_shardings or
// lax::with_sharding_constraint), each device computes only its own shard's values, without
// communication, and they equal the unsharded values whatever the sharding. Outside jit the
// functions on Arrays run at once on the key's device, like spmd::numpy's (numpy_eager.h).
//
// PRNGKey, split, fold_in and bits equal JAX's output bit for bit (checked against JAX itself by
// tests/jit/random_jax_test.py, and against Random123's known answers); the samplers below say
// how exactly each matches.
#pragma once

#include <cstdint>
#include <optional>

#include "spmd/array.h"
#include "spmd/dtype.h"
#include "spmd/random_key.h"
#include "spmd/shape.h"
#include "spmd/tensor.h"

namespace spmd::random {

// A raw key for `seed` (jax.random.PRNGKey), on this process's first local device: uint32[2]
// [0, seed] for a seed in int32's range (a negative one as its two's complement), JAX's default
// 32-bit mode; [seed >> 32, seed & 0xffffffff] beyond it, as JAX's 64-bit mode makes them.
// Inside jit, pass keys in as arguments.
Array PRNGKey(int64_t seed);

// `num` new keys from `key` (jax.random.split): uint32[num, 2]. Throws InvalidArgument for a key
// that is not uint32[2] or a negative `num`.
Tensor split(const Tensor& key, int64_t num = 2);
Array split(const Array& key, int64_t num = 2);

// A new key from `key` and `data` (jax.random.fold_in); equal to split(key, n)[data] for any
// n > data. The data is a value, not part of the program: folding in a loop's step number runs
// one compiled program for every step. A Tensor `data` is a scalar of an integer dtype, taken as
// uint32 (as JAX converts it).
Tensor fold_in(const Tensor& key, const Tensor& data);
Tensor fold_in(const Tensor& key, uint32_t data);
Array fold_in(const Array& key, uint32_t data);

// Uniformly random bits of `shape` (jax.random.bits); `dtype` uint8, uint16, uint32 (the
// default) or uint64, else InvalidArgument.
Tensor bits(const Tensor& key, const Shape& shape = {}, DType dtype = DType::kUInt32);
Array bits(const Array& key, const Shape& shape = {}, DType dtype = DType::kUInt32);

// --- Samplers (jax.random's, with its defaults). Each has a Tensor form for inside jit and an
// Array form that runs at once on the key's device. Dtype defaults are JAX's without x64:
// float32 for floats, int32 for integers. A dtype a sampler does not make, a negative
// dimension or a key that is not uint32[2] is InvalidArgument.
//
// Exactness against JAX 0.10.2 on CPU (tests/jit/random_jax_test.py compares with JAX itself):
// - bits, uniform (float32, float64), bernoulli, randint, permutation, choice (but with p and
//   without replacement, below), categorical:
//   bit for bit (uniform is shifts, a subtraction, one fused multiply-add and a max, all exact to
//   repeat; the others are integer arithmetic, comparisons or an argmax);
// - normal, gumbel and truncated_normal: bit for bit. Their logarithms (in erf_inv's log1p, and
//   gumbel's two) are Eigen's logf as XLA's CPU code evaluates it, fused multiply-adds where LLVM
//   contracts them (the product y·x³ fused with the exponent's correction e·c);
//   truncated_normal's bounds are erf(bound · (1/√2)) with XLA's erf, its rational interpolant,
//   as JAX computes them when the bounds are arguments (kernels/random_samplers.cc). Inside a
//   caller's jit whose bounds are constants, XLA folds that erf with the C library's and an exact
//   division instead; the interval, and so the values, can then differ in the last places.
// - uniform, normal and gumbel in float16 and bfloat16: bit for bit. Each operation of JAX's
//   program is computed in float32 and rounded back, as XLA's CPU code does with half types,
//   except that on CPUs with AVX512-FP16 XLA computes float16 natively and fuses uniform's scale
//   and shift into one rounding, and so does spmd there. uniform draws 16 bits for float16, 8
//   for bfloat16, as JAX does; gumbel's [tiny, 1) follows XLA's folding of its two constant
//   additions, which in float16 drops tiny.
// truncated_normal samples float32 only; normal and gumbel float32 and the half types (JAX's
// default without x64 is float32).

// Uniform on [minval, maxval) (jax.random.uniform): float32 or float64.
Tensor uniform(const Tensor& key, const Shape& shape = {}, DType dtype = DType::kFloat32,
               double minval = 0.0, double maxval = 1.0);
Array uniform(const Array& key, const Shape& shape = {}, DType dtype = DType::kFloat32,
              double minval = 0.0, double maxval = 1.0);

// Standard normal (jax.random.normal): float32.
Tensor normal(const Tensor& key, const Shape& shape = {}, DType dtype = DType::kFloat32);
Array normal(const Array& key, const Shape& shape = {}, DType dtype = DType::kFloat32);

// Standard normal within the open interval (lower, upper) (jax.random.truncated_normal):
// float32.
Tensor truncated_normal(const Tensor& key, double lower, double upper, const Shape& shape = {},
                        DType dtype = DType::kFloat32);
Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape = {},
                       DType dtype = DType::kFloat32);

// True with probability p (jax.random.bernoulli): bool[shape]. A Tensor `p` (float) broadcasts
// to `shape`, whose default is p's shape.
Tensor bernoulli(const Tensor& key, double p = 0.5, const Shape& shape = {});
Tensor bernoulli(const Tensor& key, const Tensor& p,
                 const std::optional<Shape>& shape = std::nullopt);
Array bernoulli(const Array& key, double p = 0.5, const Shape& shape = {});

// Integers uniform on [minval, maxval) (jax.random.randint): int8 … int64, uint8 … uint64. As
// JAX, the bounds are clipped to the dtype's range (maxval to one past it), an empty range gives
// minval, and each value is two draws of the dtype's width taken modulo the span (below 32 bits,
// drawn as int32 and converted).
Tensor randint(const Tensor& key, const Shape& shape, int64_t minval, int64_t maxval,
               DType dtype = DType::kInt32);
Array randint(const Array& key, const Shape& shape, int64_t minval, int64_t maxval,
              DType dtype = DType::kInt32);

// Standard Gumbel (jax.random.gumbel, its default "low" mode): float32.
Tensor gumbel(const Tensor& key, const Shape& shape = {}, DType dtype = DType::kFloat32);
Array gumbel(const Array& key, const Shape& shape = {}, DType dtype = DType::kFloat32);

// Functions of one uniform draw u each, as jax.random computes them: float32 (the default),
// float16 or bfloat16, bit for bit with JAX (XLA's log, log1p and exp, kernels/xla_math.h; the C
// library's tanf, as XLA's CPU code calls it):
// - exponential: -log1p(-u), u on [0, 1) (jax.random.exponential);
// - laplace: sign(u) log1p(-|u|), u on [-1 + epsneg, 1) (jax.random.laplace);
// - logistic: log(u) - log1p(-u), u on [tiny, 1) (jax.random.logistic);
// - cauchy: tan(pi (u - 1/2)), u on [eps, 1) (jax.random.cauchy);
// - lognormal: exp(normal · sigma), sigma a scalar (jax.random.lognormal; an array sigma is
//   normal(key, shape) · sigma through numpy::exp, within an ulp of JAX's).
Tensor exponential(const Tensor& key, const Shape& shape = {}, DType dtype = DType::kFloat32);
Array exponential(const Array& key, const Shape& shape = {}, DType dtype = DType::kFloat32);
Tensor laplace(const Tensor& key, const Shape& shape = {}, DType dtype = DType::kFloat32);
Array laplace(const Array& key, const Shape& shape = {}, DType dtype = DType::kFloat32);
Tensor logistic(const Tensor& key, const Shape& shape = {}, DType dtype = DType::kFloat32);
Array logistic(const Array& key, const Shape& shape = {}, DType dtype = DType::kFloat32);
Tensor cauchy(const Tensor& key, const Shape& shape = {}, DType dtype = DType::kFloat32);
Array cauchy(const Array& key, const Shape& shape = {}, DType dtype = DType::kFloat32);
Tensor lognormal(const Tensor& key, double sigma = 1.0, const Shape& shape = {},
                 DType dtype = DType::kFloat32);
Array lognormal(const Array& key, double sigma = 1.0, const Shape& shape = {},
                DType dtype = DType::kFloat32);

// Indices drawn from softmax(logits) along `axis` (jax.random.categorical, with replacement):
// int32 of `shape`, whose default is logits' shape without `axis`; a given shape ends with that.
Tensor categorical(const Tensor& key, const Tensor& logits, int axis = -1,
                   const std::optional<Shape>& shape = std::nullopt);
Array categorical(const Array& key, const Array& logits, int axis = -1);

// Gamma(a, 1) samples (jax.random.gamma), float32 of a's shape (a float32; broadcast it to the
// sample's shape first), or with log_space their logarithms (jax.random.loggamma), which keep
// precision for small a. Each element is JAX's Marsaglia-Tsang loop from its own key of
// split(key, a.size): the draws and the values are JAX's bit for bit (XLA's logarithms, its
// rsqrt, which depends on the CPU as JAX's does, and the C library's powf;
// kernels/random_samplers.h). Whole on every device; no derivative yet (JAX's has one in a).
Tensor gamma(const Tensor& key, const Tensor& a, bool log_space = false);
Array gamma(const Array& key, const Array& a, bool log_space = false);

// Poisson samples of rates `lam` (jax.random.poisson), int32 of lam's shape (lam float32;
// broadcast it to the sample's shape first): JAX's algorithms over the whole array, the uniforms
// JAX's bit for bit (kernels/random_samplers.h says where the values can part). Whole on every
// device.
Tensor poisson(const Tensor& key, const Tensor& lam);
Array poisson(const Array& key, const Array& lam);

// A random permutation of arange(n), int32 (jax.random.permutation(key, n)), or of `x` along
// `axis`, every slice reordered alike (independent=False, JAX's default).
Tensor permutation(const Tensor& key, int64_t n);
Tensor permutation(const Tensor& key, const Tensor& x, int axis = 0);
Array permutation(const Array& key, int64_t n);
Array permutation(const Array& key, const Array& x, int axis = 0);

// `shape` draws from arange(n) (jax.random.choice(key, n, shape, replace)), int32: with
// replacement, randint's; without, the first draws of permutation(key, n).
Tensor choice(const Tensor& key, int64_t n, const Shape& shape = {}, bool replace = true);
Array choice(const Array& key, int64_t n, const Shape& shape = {}, bool replace = true);
// The same with probabilities `p` (n weights, float32, float64 or integer, scaled by their sum),
// as JAX draws them: with replacement, the first index whose running sum of p (jnp.cumsum's,
// in XLA's order) reaches sum(p) * (1 - uniform); without, the indices of the largest
// gumbel + log(p) (the Gumbel top-k trick). Bit for bit with JAX either way (log(p) is spmd's
// element-wise log, XLA's own for float32).
Tensor choice(const Tensor& key, int64_t n, const Shape& shape, bool replace, const Tensor& p);
Array choice(const Array& key, int64_t n, const Shape& shape, bool replace, const Array& p);
// Draws of `a`'s slices along `axis` (jax.random.choice(key, a, shape, replace, p, axis)): the
// result's shape is a's with that dimension replaced by `shape`. Without p and replacement, the
// first slices of permutation(key, a, axis).
Tensor choice(const Tensor& key, const Tensor& a, const Shape& shape, bool replace,
              const std::optional<Tensor>& p = std::nullopt, int axis = 0);
Array choice(const Array& key, const Array& a, const Shape& shape, bool replace,
             const std::optional<Array>& p = std::nullopt, int axis = 0);

// --- JAX's compositions of the samplers above (lib/random/compositions.cc), step for step as
// jax.random composes them, so each value is JAX's where its steps' are. float32 samples from
// raw keys (uint32[2]); parameters already broadcast to the sample's shape where said.

// Log-normal samples with an array of sigmas (jax.random.lognormal with a traced sigma), sigma
// (in dtype) broadcasting to `shape`: exp(erf_inv(u) (sqrt(2) sigma)), the factor folded as
// XLA's CPU backend folds it (in bfloat16 it keeps JAX's exp(normal sigma)), so JAX's values bit
// for bit, as with one sigma.
Tensor lognormal(const Tensor& key, const Tensor& sigma, const Shape& shape,
                 DType dtype = DType::kFloat32);
Array lognormal(const Array& key, const Array& sigma, const Shape& shape,
                DType dtype = DType::kFloat32);
// ±1 with equal probability, in `dtype`: 2 * bernoulli(key, 0.5) - 1 (jax.random.rademacher).
Tensor rademacher(const Tensor& key, const Shape& shape = {}, DType dtype = DType::kInt32);
Array rademacher(const Array& key, const Shape& shape = {}, DType dtype = DType::kInt32);
// Beta(a, b), a and b float32 of the sample's shape: the log-gammas la, lb of a and b from the
// two keys of split(key), then exp(la - m) / (exp(la - m) + exp(lb - m)), m = max(la, lb).
Tensor beta(const Tensor& key, const Tensor& a, const Tensor& b);
Array beta(const Array& key, const Array& a, const Array& b);
// Dirichlet(alpha), alpha float32 of the sample's shape (…, k): the softmax of alpha's
// log-gammas along the last axis.
Tensor dirichlet(const Tensor& key, const Tensor& alpha);
Array dirichlet(const Array& key, const Array& alpha);
// The generalized normal of shape p: r * g ** (1 / p), g = gamma(1 / p) from split(key)[0] and
// r = rademacher from split(key)[1], 1 / p rounded to float32 as a float32 division.
Tensor generalized_normal(const Tensor& key, double p, const Shape& shape = {});
Array generalized_normal(const Array& key, double p, const Shape& shape = {});
// Points uniform in the d-dimensional unit p-ball, of shape (…shape, d): generalized normals g
// (split(key)[0]) over (sum(|g| ** p, -1) + e) ** (1 / p), e exponential (split(key)[1]).
Tensor ball(const Tensor& key, int64_t d, double p = 2, const Shape& shape = {});
Array ball(const Array& key, int64_t d, double p = 2, const Shape& shape = {});
// Matrices n × m (…shape, n, m) with orthonormal columns (n ≥ m) or rows: the Q of the reduced
// QR of a normal (max(n, m) × min(n, m)) matrix, each column's sign set by R's diagonal, and
// transposed where n < m. Q is Eigen's Householder QR's (linalg.h), within a few ulps of
// JAX's LAPACK one, not bit for bit.
Tensor orthogonal(const Tensor& key, int64_t n, int64_t m, const Shape& shape = {});
Array orthogonal(const Array& key, int64_t n, int64_t m, const Shape& shape = {});
// mean + L z, L the lower Cholesky factor of cov (…, k, k) and z standard normal of
// (…shape, k), mean (…, k) and cov float32, their batch dimensions broadcasting with `shape`
// (JAX's default method, "cholesky"; L as linalg.h's Cholesky gives it).
Tensor multivariate_normal(const Tensor& key, const Tensor& mean, const Tensor& cov,
                           const Shape& shape);
Array multivariate_normal(const Array& key, const Array& mean, const Array& cov,
                          const Shape& shape);

// --- The samplers on typed keys (random_key.h): the values of the same sampler on the key's
// data. Each takes a single key (shape ()), else InvalidArgument.

template <typename D>
D bits(const KeyArray<D>& key, const Shape& shape = {}, DType dtype = DType::kUInt32) {
  return bits(single_key("bits", key), shape, dtype);
}
template <typename D>
D uniform(const KeyArray<D>& key, const Shape& shape = {}, DType dtype = DType::kFloat32,
          double minval = 0.0, double maxval = 1.0) {
  return uniform(single_key("uniform", key), shape, dtype, minval, maxval);
}
template <typename D>
D normal(const KeyArray<D>& key, const Shape& shape = {}, DType dtype = DType::kFloat32) {
  return normal(single_key("normal", key), shape, dtype);
}
template <typename D>
D truncated_normal(const KeyArray<D>& key, double lower, double upper, const Shape& shape = {},
                   DType dtype = DType::kFloat32) {
  return truncated_normal(single_key("truncated_normal", key), lower, upper, shape, dtype);
}
template <typename D>
D bernoulli(const KeyArray<D>& key, double p = 0.5, const Shape& shape = {}) {
  return bernoulli(single_key("bernoulli", key), p, shape);
}
inline Tensor bernoulli(const KeyTensor& key, const Tensor& p,
                        const std::optional<Shape>& shape = std::nullopt) {
  return bernoulli(single_key("bernoulli", key), p, shape);
}
template <typename D>
D randint(const KeyArray<D>& key, const Shape& shape, int64_t minval, int64_t maxval,
          DType dtype = DType::kInt32) {
  return randint(single_key("randint", key), shape, minval, maxval, dtype);
}
template <typename D>
D gumbel(const KeyArray<D>& key, const Shape& shape = {}, DType dtype = DType::kFloat32) {
  return gumbel(single_key("gumbel", key), shape, dtype);
}
template <typename D>
D exponential(const KeyArray<D>& key, const Shape& shape = {}, DType dtype = DType::kFloat32) {
  return exponential(single_key("exponential", key), shape, dtype);
}
template <typename D>
D laplace(const KeyArray<D>& key, const Shape& shape = {}, DType dtype = DType::kFloat32) {
  return laplace(single_key("laplace", key), shape, dtype);
}
template <typename D>
D logistic(const KeyArray<D>& key, const Shape& shape = {}, DType dtype = DType::kFloat32) {
  return logistic(single_key("logistic", key), shape, dtype);
}
template <typename D>
D cauchy(const KeyArray<D>& key, const Shape& shape = {}, DType dtype = DType::kFloat32) {
  return cauchy(single_key("cauchy", key), shape, dtype);
}
template <typename D>
D lognormal(const KeyArray<D>& key, double sigma = 1.0, const Shape& shape = {},
            DType dtype = DType::kFloat32) {
  return lognormal(single_key("lognormal", key), sigma, shape, dtype);
}
inline Tensor categorical(const KeyTensor& key, const Tensor& logits, int axis = -1,
                          const std::optional<Shape>& shape = std::nullopt) {
  return categorical(single_key("categorical", key), logits, axis, shape);
}
inline Array categorical(const Key& key, const Array& logits, int axis = -1) {
  return categorical(single_key("categorical", key), logits, axis);
}
template <typename D>
D permutation(const KeyArray<D>& key, int64_t n) {
  return permutation(single_key("permutation", key), n);
}
template <typename D>
D permutation(const KeyArray<D>& key, const D& x, int axis = 0) {
  return permutation(single_key("permutation", key), x, axis);
}
template <typename D>
D choice(const KeyArray<D>& key, int64_t n, const Shape& shape = {}, bool replace = true) {
  return choice(single_key("choice", key), n, shape, replace);
}
template <typename D>
D choice(const KeyArray<D>& key, int64_t n, const Shape& shape, bool replace, const D& p) {
  return choice(single_key("choice", key), n, shape, replace, p);
}
template <typename D>
D choice(const KeyArray<D>& key, const D& a, const Shape& shape, bool replace,
         const std::optional<D>& p = std::nullopt, int axis = 0) {
  return choice(single_key("choice", key), a, shape, replace, p, axis);
}

}  // namespace spmd::random
