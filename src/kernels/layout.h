// Layout kernels: moving elements without arithmetic, over Eigen 3.4's Tensor module. They
// depend only on the element size, so one instantiation serves every dtype of that size. Arrays
// are row-major; ranks up to kMaxRank (a larger rank throws InvalidArgument). Shapes are checked
// by the caller (spmd::numpy at trace time); here they are trusted. The calling thread's team
// (thread_team.h) copies slabs of the result's leading dimension; the bytes are the same on any
// team. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "spmd/dtype.h"
#include "spmd/shape.h"

namespace spmd::kernels {

inline constexpr int kMaxRank = 6;

// NumPy broadcasting of `in` (shape `from`) to `to`: `from` aligned at the right, each of its
// dimensions equal to `to`'s or 1.
void broadcast(size_t element_size, const std::byte* in, const Shape& from, std::byte* out,
               const Shape& to);
// out = in with dimensions permuted: out dimension i is in dimension perm[i].
void transpose(size_t element_size, const std::byte* in, const Shape& shape,
               std::span<const int> perm, std::byte* out);
// out = in[start[0]:start[0]+extent[0], …].
void slice(size_t element_size, const std::byte* in, const Shape& shape,
           std::span<const int64_t> start, const Shape& extent, std::byte* out);
// out = the box of `extent` elements whose element (i_0, i_1, …) is in[start[0] + i_0 * step[0],
// start[1] + i_1 * step[1], …]: a step is any nonzero integer, negative ones reading backwards
// from start (lax.rev, x[::-1]), larger ones every |step|-th element (x[::2]); start and
// start + (extent - 1) * step lie inside `shape` (trusted). Any rank (not kMaxRank's limit). Each
// line along the last dimension is one loop (a copy, a reversal or a strided read); the team
// takes pieces of the lines, so a single long line is split too. Where the indices were a take's
// constant (the way these were before), a 2^20-element flip read a 4 MiB index array and took
// 0.76 ms against JAX's 0.10.
void strided_slice(size_t element_size, const std::byte* in, const Shape& shape,
                   std::span<const int64_t> start, std::span<const int64_t> step,
                   const Shape& extent, std::byte* out);
// out = the inputs (shapes `shapes`, equal except along `axis`) one after another along `axis`.
void concatenate(size_t element_size, std::span<const std::byte* const> in,
                 std::span<const Shape> shapes, int axis, std::byte* out);
// out = in, `bytes` of them (not overlapping): a copy before an update in place (a scatter's
// operand, still read elsewhere), which one thread's memcpy leaves at one core's bandwidth.
void copy_bytes(const std::byte* in, size_t bytes, std::byte* out);
// out = n copies of the element_size bytes at `element` (jnp.full's fill, its value converted
// once), split over the team as copy_bytes is. Converting the value again for every element
// took a float16 fill of 4 Mi elements 1.6 ms.
void fill_elements(size_t element_size, const std::byte* element, int64_t n, std::byte* out);

}  // namespace spmd::kernels
