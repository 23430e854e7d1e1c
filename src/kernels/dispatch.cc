#include "kernels/dispatch.h"

#include <cstring>

namespace spmd::kernels {

std::vector<float> to_wide(DType t, const std::byte* data, int64_t n) {
  std::vector<float> wide(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, data + i * 2, 2);
    wide[i] = t == DType::kFloat16 ? to_float(float16{bits}) : to_float(bfloat16{bits});
  }
  return wide;
}

void from_wide(DType t, std::span<const float> wide, std::byte* out) {
  for (size_t i = 0; i < wide.size(); ++i) {
    const uint16_t bits =
        t == DType::kFloat16 ? to_float16(wide[i]).bits : to_bfloat16(wide[i]).bits;
    std::memcpy(out + i * 2, &bits, 2);
  }
}

}  // namespace spmd::kernels
