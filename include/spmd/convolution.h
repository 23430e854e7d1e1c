// lax.conv_general_dilated: an N-dimensional convolution (a cross-correlation, as XLA's), with
// strides, padding, input and kernel dilation and feature groups, composed of spmd::numpy's
// operations (slices, concatenations, one matmul), so it traces, partitions and differentiates
// as they do. Values are the sums of the same products as JAX's, added in a matmul's order: within
// a few units in the last place of XLA's convolution.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spmd/tensor.h"

namespace spmd::lax {

// Each operand's dimensions by letter, as JAX's string dimension numbers: the input's and the
// output's batch 'N' and feature 'C', the kernel's output feature 'O' and input feature 'I', and
// one letter per spatial dimension, the same in all three; the spatial dimensions are taken in
// the kernel's order. JAX's default: {"NCHW", "OIHW", "NCHW"} (any rank).
struct ConvDimensions {
  std::string lhs;
  std::string rhs;
  std::string out;
};

struct ConvOptions {
  std::vector<int64_t> window_strides;               // per spatial dimension; empty: ones
  std::vector<std::pair<int64_t, int64_t>> padding;  // (low, high), negative crops; empty: 0
  std::vector<int64_t> lhs_dilation;                 // zeros between inputs; empty: ones
  std::vector<int64_t> rhs_dilation;                 // gaps in the kernel; empty: ones
  std::optional<ConvDimensions> dimensions;          // none: N, C, spatial… for all three
  int64_t feature_group_count = 1;                   // the input's features in groups
};

// The convolution of `lhs` (the input) by `rhs` (the kernel), both of one dtype and rank. Output
// size per spatial dimension: floor((padded - dilated window) / stride) + 1, at least 0. With G
// feature groups, lhs's features and rhs's output features split into G (group-major), and
// rhs's input features number lhs's / G. InvalidArgument for letters, sizes or groups that do not
// fit, naming what.
Tensor conv_general_dilated(const Tensor& lhs, const Tensor& rhs, const ConvOptions& options = {});

// JAX's lax.padtype_to_pads: the explicit (low, high) padding "SAME" (the output ceil(in /
// stride), the excess low half rounded down), "SAME_LOWER" (rounded up) or "VALID" (none) gives
// inputs of `in` spatial sizes, a (dilated) window of `window` and `strides`.
std::vector<std::pair<int64_t, int64_t>> padtype_to_pads(const std::vector<int64_t>& in,
                                                         const std::vector<int64_t>& window,
                                                         const std::vector<int64_t>& strides,
                                                         std::string_view padding);

}  // namespace spmd::lax
