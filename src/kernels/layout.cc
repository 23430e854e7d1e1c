#include "kernels/layout.h"

#include <fmt/format.h>

#include <cstring>
#include <type_traits>
#include <unsupported/Eigen/CXX11/Tensor>
#include <utility>

#include "spmd/error.h"

namespace spmd::kernels {
namespace {

template <int N>
using Dims = Eigen::array<Eigen::Index, N>;

template <int N>
Dims<N> dims_of(const Shape& shape) {
  Dims<N> d;
  for (int i = 0; i < N; ++i) d[i] = shape[static_cast<size_t>(i)];
  return d;
}

template <class E, int N>
auto in_map(const std::byte* p, const Shape& shape) {
  return Eigen::TensorMap<Eigen::Tensor<const E, N, Eigen::RowMajor>>(reinterpret_cast<const E*>(p),
                                                                      dims_of<N>(shape));
}

template <class E, int N>
auto out_map(std::byte* p, const Shape& shape) {
  return Eigen::TensorMap<Eigen::Tensor<E, N, Eigen::RowMajor>>(reinterpret_cast<E*>(p),
                                                                dims_of<N>(shape));
}

// Calls f(E{}, std::integral_constant<int, N>{}) for the element type of `element_size` bytes and
// rank N in 1..kMaxRank.
template <class F>
void visit_layout(size_t element_size, size_t rank, F&& f) {
  if (rank < 1 || rank > kMaxRank) {
    throw InvalidArgument(
        fmt::format("arrays of rank {} are not supported (1 to {})", rank, kMaxRank));
  }
  auto by_rank = [&](auto zero) {
    switch (rank) {
      case 1:
        return f(zero, std::integral_constant<int, 1>{});
      case 2:
        return f(zero, std::integral_constant<int, 2>{});
      case 3:
        return f(zero, std::integral_constant<int, 3>{});
      case 4:
        return f(zero, std::integral_constant<int, 4>{});
      case 5:
        return f(zero, std::integral_constant<int, 5>{});
      default:
        return f(zero, std::integral_constant<int, 6>{});
    }
  };
  switch (element_size) {
    case 1:
      return by_rank(uint8_t{});
    case 2:
      return by_rank(uint16_t{});
    case 4:
      return by_rank(uint32_t{});
    default:
      return by_rank(uint64_t{});
  }
}

}  // namespace

void broadcast(size_t element_size, const std::byte* in, const Shape& from, std::byte* out,
               const Shape& to) {
  if (to.empty()) {
    std::memcpy(out, in, element_size);
    return;
  }
  Shape padded(to.size() - from.size(), 1);
  padded.insert(padded.end(), from.begin(), from.end());
  visit_layout(element_size, to.size(), [&](auto zero, auto rank) {
    using E = decltype(zero);
    constexpr int N = decltype(rank)::value;
    Dims<N> factors;
    for (int i = 0; i < N; ++i) factors[i] = padded[i] == to[i] ? 1 : to[i];
    out_map<E, N>(out, to) = in_map<E, N>(in, padded).broadcast(factors);
  });
}

void transpose(size_t element_size, const std::byte* in, const Shape& shape,
               std::span<const int> perm, std::byte* out) {
  if (shape.empty()) {
    std::memcpy(out, in, element_size);
    return;
  }
  Shape to(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) to[i] = shape[static_cast<size_t>(perm[i])];
  visit_layout(element_size, shape.size(), [&](auto zero, auto rank) {
    using E = decltype(zero);
    constexpr int N = decltype(rank)::value;
    Dims<N> p;
    for (int i = 0; i < N; ++i) p[i] = perm[static_cast<size_t>(i)];
    out_map<E, N>(out, to) = in_map<E, N>(in, shape).shuffle(p);
  });
}

void slice(size_t element_size, const std::byte* in, const Shape& shape,
           std::span<const int64_t> start, const Shape& extent, std::byte* out) {
  if (shape.empty() || shape_size(extent) == 0) {
    if (shape.empty()) std::memcpy(out, in, element_size);
    return;
  }
  visit_layout(element_size, shape.size(), [&](auto zero, auto rank) {
    using E = decltype(zero);
    constexpr int N = decltype(rank)::value;
    Dims<N> offsets;
    for (int i = 0; i < N; ++i) offsets[i] = start[static_cast<size_t>(i)];
    out_map<E, N>(out, extent) = in_map<E, N>(in, shape).slice(offsets, dims_of<N>(extent));
  });
}

void concatenate(size_t element_size, std::span<const std::byte* const> in,
                 std::span<const Shape> shapes, int axis, std::byte* out) {
  Shape total = shapes[0];
  total[static_cast<size_t>(axis)] = 0;
  for (const Shape& s : shapes) total[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
  visit_layout(element_size, total.size(), [&](auto zero, auto rank) {
    using E = decltype(zero);
    constexpr int N = decltype(rank)::value;
    auto y = out_map<E, N>(out, total);
    Dims<N> offsets{};
    for (size_t k = 0; k < in.size(); ++k) {
      if (shape_size(shapes[k]) == 0) continue;
      y.slice(offsets, dims_of<N>(shapes[k])) = in_map<E, N>(in[k], shapes[k]);
      offsets[axis] += shapes[k][static_cast<size_t>(axis)];
    }
  });
}

}  // namespace spmd::kernels
