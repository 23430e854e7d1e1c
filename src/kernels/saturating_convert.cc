// Saturating float-to-integer conversions in vector lanes.
#include "kernels/saturating_convert.h"

#include <limits>
#include <type_traits>

#include "kernels/dispatch.h"

namespace spmd::kernels {
namespace {

// The value made NaN-free and clamped into [lowest, the largest F below 2^digits] before the
// cast, so that the cast is defined for every input, then the top of the range put back where
// clamping fell short of U's maximum (2^31 - 128 as a float32 is the largest below 2^31). Every
// step is a select or a min/max, which GCC vectorises.
template <class F, class U>
void saturating_casts(const F* in, U* out, int64_t n) {
  constexpr U kHalfWay = std::numeric_limits<U>::max() / 2 + 1;  // 2^(digits - 1), exact
  constexpr F kAbove = static_cast<F>(kHalfWay) * F(2);          // 2^digits
  constexpr F kLowest = static_cast<F>(std::numeric_limits<U>::lowest());
  constexpr F kTop = kAbove - kAbove * (std::numeric_limits<F>::epsilon() / 2);
  for (int64_t i = 0; i < n; ++i) {
    const F v = in[i];
    F c = v == v ? v : F(0);
    c = c < kLowest ? kLowest : c;
    c = c > kTop ? kTop : c;
    const U r = static_cast<U>(c);
    out[i] = v >= kAbove ? std::numeric_limits<U>::max() : r;
  }
}

template <class F>
bool casts_from(DType to, const std::byte* in, std::byte* out, int64_t n) {
  return visit_integer(to, [&](auto zero) {
    using U = decltype(zero);
    saturating_casts<F, U>(reinterpret_cast<const F*>(in), reinterpret_cast<U*>(out), n);
    return true;
  });
}

}  // namespace

// Built for x86-64-v4, x86-64-v3 and the baseline, picked at load time, the loops inlined into
// each (direct calls only: mask_ops.cc says why).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), flatten))
#endif
bool saturating_convert(DType from, DType to, const std::byte* in, std::byte* out, int64_t n) {
  if (from == DType::kFloat32) return casts_from<float>(to, in, out, n);
  if (from == DType::kFloat64) return casts_from<double>(to, in, out, n);
  return false;
}

}  // namespace spmd::kernels
