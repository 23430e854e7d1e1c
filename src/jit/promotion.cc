#include "jit/promotion.h"

#include <algorithm>

#include "spmd/config.h"

namespace spmd::compiler {
namespace {

bool is_unsigned(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}

DType signed_of_size(size_t bytes) {
  switch (bytes) {
    case 1:
      return DType::kInt8;
    case 2:
      return DType::kInt16;
    case 4:
      return DType::kInt32;
    default:
      return DType::kInt64;
  }
}

// The lattice's join of two dtypes (jnp.promote_types with x64 on).
DType lattice_join(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;  // an integer meets a floating type at that type
  if (fa) {
    const bool half_pair = (a == DType::kFloat16 && b == DType::kBFloat16) ||
                           (a == DType::kBFloat16 && b == DType::kFloat16);
    if (half_pair) return DType::kFloat32;
    return dtype_size(a) >= dtype_size(b) ? a : b;
  }
  if (is_unsigned(a) == is_unsigned(b)) return dtype_size(a) >= dtype_size(b) ? a : b;
  const DType u = is_unsigned(a) ? a : b;
  const DType s = is_unsigned(a) ? b : a;
  if (dtype_size(u) < dtype_size(s)) return s;
  if (u == DType::kUInt64) return DType::kFloat64;
  return signed_of_size(std::max(dtype_size(s), dtype_size(u) * 2));
}

}  // namespace

DType promote(DType a, DType b) {
  const DType joined = lattice_join(a, b);
  // An operand's own dtype stays; one the lattice creates is canonical (config.h).
  return joined == a || joined == b ? joined : config::canonical_dtype(joined);
}

DType promote_with_scalar(DType t, const Scalar& s) {
  if (s.floating) return is_floating(t) ? t : config::default_float_dtype();
  if (s.boolean) return t;
  return t == DType::kBool ? config::default_int_dtype() : t;
}

DType floating_of(DType t) {
  if (is_floating(t)) return t;
  const bool wide = t == DType::kInt64 || t == DType::kUInt64;
  return wide ? config::canonical_dtype(DType::kFloat64) : DType::kFloat32;
}

}  // namespace spmd::compiler
