#include "kernels/dispatch.h"

#include "kernels/half_convert.h"
#include "spmd/error.h"

namespace spmd::kernels {

std::vector<float> to_wide(DType t, const std::byte* data, int64_t n) {
  std::vector<float> wide(static_cast<size_t>(n));
  if (!widen_half(t, data, wide.data(), n)) {
    throw InvalidArgument("to_wide: not a half type");
  }
  return wide;
}

void from_wide(DType t, std::span<const float> wide, std::byte* out) {
  if (!narrow_half(t, wide.data(), out, static_cast<int64_t>(wide.size()))) {
    throw InvalidArgument("from_wide: not a half type");
  }
}

}  // namespace spmd::kernels
