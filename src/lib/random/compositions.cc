// spmd::random's samplers that JAX composes of others (jax/_src/random: rademacher, beta,
// dirichlet, generalized_normal, ball, orthogonal, multivariate_normal), composed here the same
// way, step for step, so their values are JAX's where the steps' are. Written once, on Tensors;
// the Array forms run them through an eager jit, and Python binds the Tensor forms.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "jit/lax.h"
#include "jit/program.h"
#include "jit/trace.h"
#include "lib/random/gamma_form.h"
#include "lib/random/ops.h"
#include "spmd/error.h"
#include "spmd/grad.h"
#include "spmd/linalg.h"
#include "spmd/numpy.h"
#include "spmd/numpy_eager.h"
#include "spmd/random.h"

namespace spmd::random {
namespace {

// Key i of a split: keys[i], a raw key (uint32[2]).
Tensor key_at(const Tensor& keys, int64_t i) {
  return numpy::reshape(numpy::slice(keys, {i, 0}, {i + 1, 2}), {2});
}

// A float32 constant, 0-d, in the trace `like` belongs to (as jnp.asarray(p, float32) is).
Tensor float32_of(const Tensor& like, float value) {
  return compiler::lax::full(like.trace(), Shape{}, DType::kFloat32, value);
}

void check_float32(std::string_view what, const Tensor& x, std::string_view name) {
  if (x.dtype() != DType::kFloat32) {
    throw InvalidArgument(fmt::format("random.{}: samples float32 only; {} is {}", what, name,
                                      compiler::type_text(x.dtype(), x.shape())));
  }
}

std::string bracketed_shape(const Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

}  // namespace

Tensor rademacher(const Tensor& key, const Shape& shape, DType dtype) {
  const Tensor b = numpy::astype(bernoulli(key, 0.5, shape), dtype);
  return numpy::astype(2 * b - 1, dtype);
}

Array rademacher(const Array& key, const Shape& shape, DType dtype) {
  return numpy::detail::eager(
      fmt::format("random.rademacher{}{}", bracketed_shape(shape), dtype_name(dtype)), {&key},
      [=](const std::vector<Tensor>& t) { return rademacher(t[0], shape, dtype); });
}

Tensor beta(const Tensor& key, const Tensor& a, const Tensor& b) {
  check_float32("beta", a, "a");
  check_float32("beta", b, "b");
  if (a.shape() != b.shape()) {
    throw InvalidArgument(fmt::format("random.beta: a {} and b {} must have the sample's shape",
                                      bracketed_shape(a.shape()), bracketed_shape(b.shape())));
  }
  const Tensor keys = split(key);
  const Tensor log_a = gamma(key_at(keys, 0), a, true);
  const Tensor log_b = gamma(key_at(keys, 1), b, true);
  const Tensor top = numpy::maximum(log_a, log_b);
  const Tensor scaled_a = numpy::exp(log_a - top);
  const Tensor scaled_b = numpy::exp(log_b - top);
  return scaled_a / (scaled_a + scaled_b);
}

Array beta(const Array& key, const Array& a, const Array& b) {
  return numpy::detail::eager("random.beta", {&key, &a, &b},
                              [](const std::vector<Tensor>& t) { return beta(t[0], t[1], t[2]); });
}

namespace {

// XLA's CPU program (JAX 0.10.2's jit) sums a row of up to kSequentialRow elements element by
// element; a longer one its TreeReductionRewriter cuts into windows of kWindow, the row padded
// with zeros to a multiple of kWindow (half the padding, rounded down, before it), each window
// summed in order, then the windows' sums the same way. Measured against jax.random.dirichlet's
// optimised program (XLA_FLAGS=--xla_dump_to) and its values. A reduction whose input holds
// kYnnElements or more goes to YNNPACK instead (XLA's IsInstructionPreferredByYnn), with the
// element-wise work fused around it: there the YNN ops (kernels/ynn_reduce.h) compute it.
constexpr int64_t kSequentialRow = 31;
constexpr int64_t kWindow = 32;
constexpr int64_t kYnnElements = 4096;

bool reduced_by_ynn(const Shape& shape) { return shape_size(shape) >= kYnnElements; }

// x[..., j:j + 1].
Tensor last_axis_column(const Tensor& x, int64_t j) {
  const Shape shape = x.shape();
  std::vector<int64_t> start(shape.size(), 0), stop(shape.begin(), shape.end());
  start.back() = j;
  stop.back() = j + 1;
  return numpy::slice(x, start, stop);
}

// The sum of x's last axis, element by element, kept as an axis of 1.
Tensor sequential_sum(const Tensor& x) {
  Tensor total = last_axis_column(x, 0);
  for (int64_t j = 1; j < x.shape().back(); ++j) total = total + last_axis_column(x, j);
  return total;
}

// The sum of x's last axis (kept as an axis of 1 with `keepdims`) in XLA's order, above.
Tensor in_order_sum(const Tensor& x, bool keepdims = false) {
  const Shape shape = x.shape();
  const int64_t k = shape.back();
  if (k == 0) return numpy::sum(x, {-1}, keepdims);
  Tensor total;
  if (k <= kSequentialRow) {
    total = sequential_sum(x);
  } else {
    const int64_t windows = (k + kWindow - 1) / kWindow, pad = windows * kWindow - k;
    Shape low = shape, high = shape, split = shape;
    low.back() = pad / 2;
    high.back() = pad - pad / 2;
    split.back() = windows;
    split.push_back(kWindow);
    const Tensor padded =
        numpy::concatenate({numpy::zeros(low, x.dtype()), x, numpy::zeros(high, x.dtype())}, -1);
    // Each window in order ([..., windows, 1] squeezed to [..., windows]), then the windows.
    const Tensor sums = numpy::squeeze(sequential_sum(numpy::reshape(padded, split)), {-1});
    total = in_order_sum(sums, true);
  }
  return keepdims ? total : numpy::squeeze(total, {-1});
}

// jax.random's _softmax along the last axis as JAX's jit computes it: exp(x - max), its sum in
// XLA's order, and the division turned into a product by the sum's reciprocal (XLA's
// simplifier rewrites A / broadcast(B) so), where jnp.softmax's divide and pairwise sum were
// up to 8 ulps away.
Tensor softmax_as_jax_random(const Tensor& x) {
  if (x.shape().back() == 0) return numpy::softmax(x, -1);
  const Tensor u = numpy::exp(x - spmd::lax::stop_gradient(numpy::max(x, {-1}, true)));
  return u * numpy::broadcast_to(1 / in_order_sum(u, true), x.shape());
}

}  // namespace

Tensor dirichlet(const Tensor& key, const Tensor& alpha) {
  check_float32("dirichlet", alpha, "alpha");
  if (alpha.shape().empty()) {
    throw InvalidArgument("random.dirichlet: alpha must have at least one dimension");
  }
  // From kYnnElements, YNNPACK takes the gamma samples' logarithms as well as the softmax: XLA
  // fuses them into the reduction's program.
  if (reduced_by_ynn(alpha.shape()) && alpha.shape().back() > 0) {
    const Tensor log_samples = gamma_in_form(key, alpha, kernels::GammaForm::kLogAsYnn);
    return compiler::lax::bind(compiler::make_operation<compiler::YnnSoftmaxOp>(), {log_samples});
  }
  return softmax_as_jax_random(gamma(key, alpha, true));
}

Array dirichlet(const Array& key, const Array& alpha) {
  return numpy::detail::eager("random.dirichlet", {&key, &alpha},
                              [](const std::vector<Tensor>& t) { return dirichlet(t[0], t[1]); });
}

Tensor generalized_normal(const Tensor& key, double p, const Shape& shape) {
  const Tensor keys = split(key);
  const Tensor inverse = float32_of(keys, 1.0f / static_cast<float>(p));
  const Tensor g = gamma(key_at(keys, 0), numpy::broadcast_to(inverse, shape), false);
  const Tensor r = rademacher(key_at(keys, 1), shape, DType::kFloat32);
  return r * numpy::power(g, inverse);
}

Array generalized_normal(const Array& key, double p, const Shape& shape) {
  return numpy::detail::eager(
      fmt::format("random.generalized_normal{}[{}]", bracketed_shape(shape), p), {&key},
      [=](const std::vector<Tensor>& t) { return generalized_normal(t[0], p, shape); });
}

Tensor ball(const Tensor& key, int64_t d, double p, const Shape& shape) {
  if (d < 0) throw InvalidArgument(fmt::format("random.ball: d must be >= 0, not {}", d));
  const Tensor keys = split(key);
  Shape points = shape;
  points.push_back(d);
  const Tensor g = generalized_normal(key_at(keys, 0), p, points);
  const Tensor e = exponential(key_at(keys, 1), shape, DType::kFloat32);
  const Tensor power = float32_of(keys, static_cast<float>(p));
  // g / (sum |g|^p + e)^(1/p) as XLA computes it (its optimised program): the sum in order for
  // up to kSequentialRow coordinates, and the division a product by (sum + e)^(-(1/p)).
  const Tensor negated_inverse = float32_of(keys, -(1.0f / static_cast<float>(p)));
  const Tensor sum =
      reduced_by_ynn(points) && d > 0
          ? compiler::lax::bind(compiler::make_operation<compiler::YnnPowerSumOp>(), {g, power})
          : in_order_sum(numpy::power(numpy::abs(g), power));
  const Tensor total = sum + e;
  return g * numpy::expand_dims(numpy::power(total, negated_inverse), -1);
}

Array ball(const Array& key, int64_t d, double p, const Shape& shape) {
  return numpy::detail::eager(
      fmt::format("random.ball{}[{},{}]", bracketed_shape(shape), d, p), {&key},
      [=](const std::vector<Tensor>& t) { return ball(t[0], d, p, shape); });
}

Tensor orthogonal(const Tensor& key, int64_t n, int64_t m, const Shape& shape) {
  if (n < 0 || m < 0) {
    throw InvalidArgument(fmt::format("random.orthogonal: n and m must be >= 0, not {}, {}", n, m));
  }
  Shape drawn = shape;
  drawn.push_back(std::max(n, m));
  drawn.push_back(std::min(n, m));
  const auto [q, r] = numpy::linalg::qr(normal(key, drawn, DType::kFloat32));
  // R's diagonal: each square matrix flattened, every (k + 1)th element.
  const int64_t k = std::min(n, m);
  Shape flat = r.shape();
  flat.pop_back();
  flat.back() = k * k;
  const Tensor at = compiler::lax::iota(r.trace(), {DType::kInt32, Shape{k}}) * (k + 1);
  const Tensor diagonal = numpy::take(numpy::reshape(r, flat), at, -1);
  const Tensor x = q * numpy::expand_dims(numpy::sign(diagonal), -2);
  return n < m ? numpy::swapaxes(x, -1, -2) : x;
}

Array orthogonal(const Array& key, int64_t n, int64_t m, const Shape& shape) {
  return numpy::detail::eager(
      fmt::format("random.orthogonal{}[{},{}]", bracketed_shape(shape), n, m), {&key},
      [=](const std::vector<Tensor>& t) { return orthogonal(t[0], n, m, shape); });
}

namespace {

// JAX's einsum("...ij,...j->...i", factor, z), contracted as its dot_general is, so that the sums
// run as XLA's do: factor's batch dimensions are z's last ones, and z's leading ones are draws
// of the same factor. One draw per factor is a matrix-vector product per factor, summed in XLA's
// order (kernels/xla_matvec.h); several are one product (draws × n) · (n × n)ᵀ per factor, whose
// order in JAX is YNNPACK's (within 2 ulps of it here). Letters, not reshapes, name the
// dimensions, so a split draw or batch dimension stays split. A factor broadcast along a
// dimension of size 1 is multiplied draw by draw instead (the same values to a sum's order).
Tensor factor_times_draws(const Tensor& factor, const Tensor& z) {
  const Shape& f = factor.shape();
  const Shape& d = z.shape();
  const size_t factor_batch = f.size() - 2, z_batch = d.size() - 1;
  bool aligned = factor_batch <= z_batch && z_batch <= 12;
  for (size_t i = 0; aligned && i < factor_batch; ++i) {
    aligned = f[i] == d[z_batch - factor_batch + i];
  }
  if (!aligned) return numpy::squeeze(numpy::matmul(factor, numpy::expand_dims(z, -1)), {-1});
  const std::string batch = std::string("abcdefghklmn").substr(0, factor_batch);
  const std::string draws = std::string("opqrstuvwxyz").substr(0, z_batch - factor_batch);
  if (draws.empty()) return numpy::einsum(batch + "ij," + batch + "j->" + batch + "i", factor, z);
  return numpy::einsum(draws + batch + "j," + batch + "ij->" + draws + batch + "i", z, factor);
}

}  // namespace

Tensor multivariate_normal(const Tensor& key, const Tensor& mean, const Tensor& cov,
                           const Shape& shape) {
  check_float32("multivariate_normal", mean, "mean");
  check_float32("multivariate_normal", cov, "cov");
  if (mean.shape().empty() || cov.shape().size() < 2) {
    throw InvalidArgument(fmt::format(
        "random.multivariate_normal: mean needs at least one dimension and cov two; got {} and {}",
        bracketed_shape(mean.shape()), bracketed_shape(cov.shape())));
  }
  const int64_t k = mean.shape().back();
  const Shape& c = cov.shape();
  if (c[c.size() - 1] != k || c[c.size() - 2] != k) {
    throw InvalidArgument(fmt::format(
        "random.multivariate_normal: cov must be (..., {}, {}) for a mean of {} values, not {}", k,
        k, k, bracketed_shape(c)));
  }
  const Tensor factor = numpy::linalg::cholesky(cov);
  Shape drawn = shape;
  drawn.push_back(k);
  const Tensor z = normal(key, drawn, DType::kFloat32);
  return mean + factor_times_draws(factor, z);
}

Array multivariate_normal(const Array& key, const Array& mean, const Array& cov,
                          const Shape& shape) {
  return numpy::detail::eager(
      fmt::format("random.multivariate_normal{}", bracketed_shape(shape)), {&key, &mean, &cov},
      [=](const std::vector<Tensor>& t) { return multivariate_normal(t[0], t[1], t[2], shape); });
}

}  // namespace spmd::random
