// The shuffle's rounds: random keys, a stable sort of the order by them, CUB's radix sort.
#include <cmath>
#include <cub/device/device_radix_sort.cuh>
#include <limits>
#include <utility>

#include "kernels/cuda/fill.h"
#include "kernels/cuda/layout.h"
#include "kernels/cuda/random_bits.h"
#include "kernels/cuda/random_permute.h"
#include "kernels/cuda/status.h"
#include "kernels/random_bits.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {

void random_permute(GpuContext& gpu, std::array<uint32_t, 2> key, size_t element_size,
                    const std::byte* in, const Shape& shape, int axis, std::byte* out) {
  const int64_t n = shape[static_cast<size_t>(axis)];
  if (n >= int64_t{1} << 31) {
    throw InvalidArgument("jax.random.permutation on a GPU: an axis of 2^31 elements or more");
  }
  if (shape_size(shape) == 0) return;
  const double uint32_max = std::numeric_limits<uint32_t>::max();
  const auto rounds = static_cast<int>(std::ceil(
      3.0 * std::log(std::max<double>(1.0, static_cast<double>(n))) / std::log(uint32_max)));
  const auto count = static_cast<size_t>(n);
  DeviceBuffer keys(gpu, count * 4), sorted_keys(gpu, count * 4);
  DeviceBuffer order(gpu, count * 4), next_order(gpu, count * 4);
  iota(gpu, DType::kInt32, order.data(), n);
  size_t scratch_bytes = 0;
  check_cuda(
      cub::DeviceRadixSort::SortPairs(
          nullptr, scratch_bytes, reinterpret_cast<uint32_t*>(keys.data()),
          reinterpret_cast<uint32_t*>(sorted_keys.data()), reinterpret_cast<int32_t*>(order.data()),
          reinterpret_cast<int32_t*>(next_order.data()), n, 0, 32, gpu.stream()),
      "cub::DeviceRadixSort::SortPairs (size query)", gpu.ordinal());
  DeviceBuffer scratch(gpu, scratch_bytes);
  for (int r = 0; r < rounds; ++r) {
    const std::array<uint32_t, 2> subkey = threefry_2x32(key, {0, 1});
    key = threefry_2x32(key, {0, 0});
    random_bits(gpu, RandomBits::k32, {subkey, {n}, {0}, {n}, 0}, keys.data());
    check_cuda(cub::DeviceRadixSort::SortPairs(
                   scratch.data(), scratch_bytes, reinterpret_cast<uint32_t*>(keys.data()),
                   reinterpret_cast<uint32_t*>(sorted_keys.data()),
                   reinterpret_cast<int32_t*>(order.data()),
                   reinterpret_cast<int32_t*>(next_order.data()), n, 0, 32, gpu.stream()),
               "cub::DeviceRadixSort::SortPairs", gpu.ordinal());
    std::swap(order, next_order);
  }
  take(gpu, element_size, in, shape, axis, reinterpret_cast<const int32_t*>(order.data()), n, out);
}

}  // namespace spmd::kernels::cuda
