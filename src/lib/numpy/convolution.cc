// lax.conv_general_dilated (spmd/convolution.h) as im2col: the input moved to N, spatial…, C,
// dilated and padded with zeros, then for each kernel position the strided window of inputs it
// meets, stacked beside the features; one matmul with the kernel as a (positions × features, O)
// matrix (a batched one per feature group) gives every output.
#include "spmd/convolution.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/numpy.h"

namespace spmd::lax {
namespace {

namespace np = spmd::numpy;

// The letters of each operand, checked: lhs and out hold N, C and the spatial letters, rhs O, I
// and the same spatial letters (taken in rhs's order), once each.
struct Letters {
  ConvDimensions specs;
  std::string spatial;
};

Letters letters_of(const ConvOptions& options, size_t rank) {
  ConvDimensions d = options.dimensions.value_or(ConvDimensions{});
  if (!options.dimensions) {
    std::string spatial;
    for (size_t k = 0; k + 2 < rank; ++k) spatial.push_back(static_cast<char>('a' + k));
    d = {"NC" + spatial, "OI" + spatial, "NC" + spatial};
  }
  std::string spatial;
  for (char c : d.rhs) {
    if (c != 'O' && c != 'I') spatial.push_back(c);
  }
  const auto holds = [](const std::string& spec, const std::string& letters) {
    std::string a = spec, b = letters;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b && std::adjacent_find(a.begin(), a.end()) == a.end();
  };
  if (d.lhs.size() != rank || d.rhs.size() != rank || d.out.size() != rank ||
      !holds(d.lhs, "NC" + spatial) || !holds(d.rhs, "OI" + spatial) ||
      !holds(d.out, "NC" + spatial)) {
    throw InvalidArgument(fmt::format(
        "conv_general_dilated: dimension numbers ('{}', '{}', '{}') for operands of rank {}: each "
        "names every dimension once, N and C (input, output), O and I (kernel) and the same "
        "spatial letters",
        d.lhs, d.rhs, d.out, rank));
  }
  return {d, spatial};
}

int64_t at(const std::string& spec, char c) { return static_cast<int64_t>(spec.find(c)); }

// `values` with one entry per spatial dimension (`fill` everywhere when empty).
std::vector<int64_t> per_dimension(const char* what, std::vector<int64_t> values, size_t k,
                                   int64_t fill) {
  if (values.empty()) values.assign(k, fill);
  if (values.size() != k ||
      std::any_of(values.begin(), values.end(), [](int64_t v) { return v < 1; })) {
    throw InvalidArgument(fmt::format(
        "conv_general_dilated: {} ({}) must hold {} positive entries, one per spatial dimension",
        what, fmt::join(values, ", "), k));
  }
  return values;
}

// `x` with `count` zeros along `axis` appended after (or, `before`, inserted before) it.
Tensor with_zeros(const Tensor& x, int axis, int64_t count, bool before) {
  if (count <= 0) return x;
  Shape shape = x.shape();
  shape[static_cast<size_t>(axis)] = count;
  const Tensor zeros = np::zeros(shape, x.dtype());
  return before ? np::concatenate({zeros, x}, axis) : np::concatenate({x, zeros}, axis);
}

// x[..., start : stop, ...] along `axis` (clipped as Python's slices are).
Tensor slice_along(const Tensor& x, int axis, int64_t start, int64_t stop) {
  const Shape shape = x.shape();  // (returned by value)
  std::vector<int64_t> begin(shape.size(), 0);
  std::vector<int64_t> end(shape.begin(), shape.end());
  begin[static_cast<size_t>(axis)] = start;
  end[static_cast<size_t>(axis)] = stop;
  return np::slice(x, begin, end);
}

// (dilation - 1) zeros between neighbours along `axis`.
Tensor dilated(const Tensor& x, int axis, int64_t dilation) {
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  if (dilation == 1 || n == 0) return x;
  const Tensor spread = with_zeros(np::expand_dims(x, axis + 1), axis + 1, dilation - 1, false);
  Shape shape = x.shape();
  shape[static_cast<size_t>(axis)] = n * dilation;
  return slice_along(np::reshape(spread, shape), axis, 0, (n - 1) * dilation + 1);
}

// `count` elements along `axis` from `start`, `step` apart.
Tensor strided(const Tensor& x, int axis, int64_t start, int64_t count, int64_t step) {
  if (step == 1) return slice_along(x, axis, start, start + count);
  const Tensor indices =
      np::arange(count, DType::kInt32) * Scalar(static_cast<int64_t>(step)) + Scalar(start);
  return np::take(x, indices, axis);
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> padtype_to_pads(const std::vector<int64_t>& in,
                                                         const std::vector<int64_t>& window,
                                                         const std::vector<int64_t>& strides,
                                                         std::string_view padding) {
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (size_t d = 0; d < in.size(); ++d) {
    if (padding == "VALID") {
      pads.emplace_back(0, 0);
      continue;
    }
    if (padding != "SAME" && padding != "SAME_LOWER") {
      throw InvalidArgument(fmt::format(
          "conv: padding '{}' is none of 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs",
          padding));
    }
    const int64_t out = (in[d] + strides[d] - 1) / strides[d];
    const int64_t total = std::max<int64_t>((out - 1) * strides[d] + window[d] - in[d], 0);
    const int64_t low = padding == "SAME" ? total / 2 : (total + 1) / 2;
    pads.emplace_back(low, total - low);
  }
  return pads;
}

Tensor conv_general_dilated(const Tensor& lhs, const Tensor& rhs, const ConvOptions& options) {
  compiler::trace_of("conv_general_dilated", {&lhs, &rhs});
  const size_t rank = lhs.shape().size();
  if (rank < 2 || rhs.shape().size() != rank || lhs.dtype() != rhs.dtype()) {
    throw InvalidArgument(fmt::format(
        "conv_general_dilated: wants an input and a kernel of one dtype and one rank (2 or "
        "more), not {}{} and {}{}",
        dtype_name(lhs.dtype()), lhs.shape(), dtype_name(rhs.dtype()), rhs.shape()));
  }
  const auto [specs, spatial] = letters_of(options, rank);
  const size_t k = spatial.size();
  const auto strides = per_dimension("window_strides", options.window_strides, k, 1);
  const auto lhs_dilation = per_dimension("lhs_dilation", options.lhs_dilation, k, 1);
  const auto rhs_dilation = per_dimension("rhs_dilation", options.rhs_dilation, k, 1);
  auto padding = options.padding;
  if (padding.empty()) padding.assign(k, {0, 0});
  const int64_t groups = options.feature_group_count;

  // The input as N, spatial…, C; the kernel as spatial…, I, O.
  std::vector<int> lhs_perm{static_cast<int>(at(specs.lhs, 'N'))};
  std::vector<int> rhs_perm;
  for (char c : spatial) {
    lhs_perm.push_back(static_cast<int>(at(specs.lhs, c)));
    rhs_perm.push_back(static_cast<int>(at(specs.rhs, c)));
  }
  lhs_perm.push_back(static_cast<int>(at(specs.lhs, 'C')));
  rhs_perm.push_back(static_cast<int>(at(specs.rhs, 'I')));
  rhs_perm.push_back(static_cast<int>(at(specs.rhs, 'O')));
  Tensor x = np::transpose(lhs, lhs_perm);
  const Tensor w = np::transpose(rhs, rhs_perm);
  const Shape ws = w.shape();
  const int64_t features = x.shape()[k + 1], in_features = ws[k], out_features = ws[k + 1];
  if (padding.size() != k || groups < 1 || features != in_features * groups ||
      out_features % groups != 0) {
    throw InvalidArgument(fmt::format(
        "conv_general_dilated: {} padding pairs for {} spatial dimensions; {} input features "
        "must be the kernel's {} times feature_group_count {}, and its {} output features a "
        "multiple of it",
        padding.size(), k, features, in_features, groups, out_features));
  }

  // Dilate, pad (crop where negative), then gather each kernel position's windows.
  std::vector<int64_t> out_size;
  for (size_t d = 0; d < k; ++d) {
    const int axis = static_cast<int>(d) + 1;
    x = dilated(x, axis, lhs_dilation[d]);
    const auto [low, high] = padding[d];
    x = with_zeros(with_zeros(x, axis, low, true), axis, high, false);
    const int64_t n = x.shape()[d + 1];
    x = slice_along(x, axis, std::max<int64_t>(-low, 0), n - std::max<int64_t>(-high, 0));
    const int64_t window = (ws[d] - 1) * rhs_dilation[d] + 1;
    const int64_t padded = x.shape()[d + 1];
    out_size.push_back(padded < window ? 0 : (padded - window) / strides[d] + 1);
  }
  for (size_t d = 0; d < k; ++d) {
    std::vector<Tensor> taps;
    for (int64_t t = 0; t < ws[d]; ++t) {
      taps.push_back(
          strided(x, static_cast<int>(d) + 1, t * rhs_dilation[d], out_size[d], strides[d]));
    }
    x = np::stack(taps, static_cast<int>(x.shape().size()) - 1);  // before the features
  }
  // x: N, out…, taps…, C. One row per output position, one column per (tap, feature).
  const int64_t batch = lhs.shape()[static_cast<size_t>(at(specs.lhs, 'N'))];
  const int64_t rows =
      std::accumulate(out_size.begin(), out_size.end(), batch, std::multiplies<>());
  const int64_t taps = std::accumulate(ws.begin(), ws.begin() + static_cast<int64_t>(k), int64_t{1},
                                       std::multiplies<>());
  const int64_t per_group = out_features / groups;
  Tensor y;
  if (groups == 1 && out_features == 1) {
    // One output feature: each output the dot product of its window with the kernel, a
    // (1 × K) · (rows × K)ᵀ product, which sums as XLA's convolution does (JAX's values for
    // windows of 4 to 33 taps); as (rows × K) · (K × 1) it would be a matrix-vector product,
    // which sums in XLA's order for a dot instead (kernels/xla_matvec.h).
    y = np::reshape(np::einsum("ok,rk->or", np::reshape(w, {1, taps * in_features}),
                               np::reshape(x, {rows, taps * features})),
                    {rows, 1});
  } else if (groups == 1) {
    y = np::matmul(np::reshape(x, {rows, taps * features}),
                   np::reshape(w, {taps * in_features, out_features}));
  } else {
    const Tensor xg =
        np::transpose(np::reshape(x, {rows, taps, groups, in_features}), {2, 0, 1, 3});
    const Tensor wg =
        np::transpose(np::reshape(w, {taps, in_features, groups, per_group}), {2, 0, 1, 3});
    y = np::matmul(np::reshape(xg, {groups, rows, taps * in_features}),
                   np::reshape(wg, {groups, taps * in_features, per_group}));
    y = np::reshape(np::transpose(y, {1, 0, 2}), {rows, out_features});
  }
  Shape out_shape{batch};
  out_shape.insert(out_shape.end(), out_size.begin(), out_size.end());
  out_shape.push_back(out_features);
  y = np::reshape(y, out_shape);
  // To the output's letters.
  std::vector<int> out_perm;
  for (char c : specs.out) {
    out_perm.push_back(c == 'N'   ? 0
                       : c == 'C' ? static_cast<int>(k) + 1
                                  : static_cast<int>(spatial.find(c)) + 1);
  }
  return np::transpose(y, out_perm);
}

}  // namespace spmd::lax
