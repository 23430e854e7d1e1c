// spmd::numpy's stack, swapaxes and moveaxis: reshapes, concatenations and transposes under
// jax.numpy's names.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "jit/trace.h"
#include "lib/numpy/internal.h"
#include "spmd/error.h"
#include "spmd/numpy.h"

namespace spmd::numpy {

using internal::normalize_axis;

Tensor stack(const std::vector<Tensor>& parts, int axis) {
  if (parts.empty()) throw InvalidArgument("stack: no arrays to stack");
  const Shape& shape = parts[0].shape();
  Shape longer = shape;
  longer.push_back(1);
  const int ax = normalize_axis("stack", axis, longer);
  std::vector<Tensor> expanded;
  for (const Tensor& p : parts) {
    compiler::trace_of("stack", {&parts[0], &p});
    if (p.shape() != shape) {
      throw InvalidArgument(
          fmt::format("stack: all input arrays must have the same shape: ({}) "
                      "and ({})",
                      fmt::join(shape, ", "), fmt::join(p.shape(), ", ")));
    }
    expanded.push_back(expand_dims(p, ax));
  }
  return concatenate(expanded, ax);
}

Tensor swapaxes(const Tensor& a, int axis1, int axis2) {
  compiler::trace_of("swapaxes", {&a});
  const int i = normalize_axis("swapaxes", axis1, a.shape());
  const int j = normalize_axis("swapaxes", axis2, a.shape());
  std::vector<int> perm(a.shape().size());
  for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int>(k);
  std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
  return transpose(a, perm);
}

Tensor moveaxis(const Tensor& a, int source, int destination) {
  compiler::trace_of("moveaxis", {&a});
  const int from = normalize_axis("moveaxis", source, a.shape());
  const int to = normalize_axis("moveaxis", destination, a.shape());
  std::vector<int> perm;
  for (int k = 0; k < static_cast<int>(a.shape().size()); ++k) {
    if (k != from) perm.push_back(k);
  }
  perm.insert(perm.begin() + to, from);
  return transpose(a, perm);
}

}  // namespace spmd::numpy
