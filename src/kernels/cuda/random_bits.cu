// The random-bits kernel: element j hashes its flat index under the key, as random_bits.cc.
#include <Random123/threefry.h>

#include "kernels/cuda/random_bits_launch.h"

namespace spmd::kernels::cuda {
namespace {

struct Key {
  uint32_t k0, k1;
};

template <RandomBits kKind>
__global__ void __launch_bounds__(256)
    random_bits_kernel(Key key, const __grid_constant__ StridedCopy plan, std::byte* out) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  r123::Threefry2x32 rng;
  const r123::Threefry2x32::key_type k = {{key.k0, key.k1}};
  for (int64_t j = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; j < plan.count; j += stride) {
    int64_t flat = 0, unused = 0;
    strided_offsets(plan, j, &flat, &unused);
    const auto i = static_cast<uint64_t>(flat);
    const r123::Threefry2x32::ctr_type c = {
        {static_cast<uint32_t>(i >> 32), static_cast<uint32_t>(i)}};
    const r123::Threefry2x32::ctr_type y = rng(c, k);
    if constexpr (kKind == RandomBits::k8) {
      reinterpret_cast<uint8_t*>(out)[j] = static_cast<uint8_t>(y.v[0] ^ y.v[1]);
    } else if constexpr (kKind == RandomBits::k16) {
      reinterpret_cast<uint16_t*>(out)[j] = static_cast<uint16_t>(y.v[0] ^ y.v[1]);
    } else if constexpr (kKind == RandomBits::k32) {
      reinterpret_cast<uint32_t*>(out)[j] = y.v[0] ^ y.v[1];
    } else if constexpr (kKind == RandomBits::k64) {
      reinterpret_cast<uint64_t*>(out)[j] = uint64_t{y.v[0]} << 32 | y.v[1];
    } else {
      reinterpret_cast<uint32_t*>(out)[2 * j] = y.v[0];
      reinterpret_cast<uint32_t*>(out)[2 * j + 1] = y.v[1];
    }
  }
}

template <RandomBits kKind>
void launch(Key key, const StridedCopy& plan, std::byte* out, int blocks, cudaStream_t stream) {
  random_bits_kernel<kKind><<<blocks, 256, 0, stream>>>(key, plan, out);
}

}  // namespace

cudaError_t launch_random_bits(RandomBits kind, std::array<uint32_t, 2> key,
                               const StridedCopy& indices, std::byte* out, int blocks,
                               cudaStream_t stream) {
  const Key k{key[0], key[1]};
  switch (kind) {
    case RandomBits::k8:
      launch<RandomBits::k8>(k, indices, out, blocks, stream);
      break;
    case RandomBits::k16:
      launch<RandomBits::k16>(k, indices, out, blocks, stream);
      break;
    case RandomBits::k32:
      launch<RandomBits::k32>(k, indices, out, blocks, stream);
      break;
    case RandomBits::k64:
      launch<RandomBits::k64>(k, indices, out, blocks, stream);
      break;
    case RandomBits::kKeys:
      launch<RandomBits::kKeys>(k, indices, out, blocks, stream);
      break;
  }
  return cudaGetLastError();
}

}  // namespace spmd::kernels::cuda
