#include "kernels/elementwise.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/dispatch.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using ConstMap = Eigen::Map<const Vec<T>>;
template <class T>
using Map = Eigen::Map<Vec<T>>;

// Calls f with an Eigen expression of n elements: the buffer, or its one element repeated.
template <class T, class F>
void with_operand(const T* data, int64_t elements, int64_t n, F&& f) {
  if (elements == n) {
    f(ConstMap<T>(data, n));
  } else {
    f(Vec<T>::Constant(n, data[0]));
  }
}

// A typed view of an input, widened to float32 for the half types (kept alive by `storage`).
template <class T>
const T* typed(DType dtype, Input in, std::vector<float>& storage) {
  if constexpr (std::is_same_v<T, float>) {
    if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) {
      storage = to_wide(dtype, in.data, in.elements);
      return storage.data();
    }
  }
  return reinterpret_cast<const T*>(in.data);
}

template <class T>
void unary_typed(Unary op, const ConstMap<T>& x, Map<T> y) {
  if constexpr (std::is_same_v<T, bool>) {
    if (op == Unary::kNot) {
      y = !x;
      return;
    }
    if (op == Unary::kAbs) {
      y = x;
      return;
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case Unary::kNeg:
        y = -x;
        return;
      case Unary::kExp:
        y = x.exp();
        return;
      case Unary::kLog:
        y = x.log();
        return;
      case Unary::kTanh:
        y = x.tanh();
        return;
      case Unary::kSqrt:
        y = x.sqrt();
        return;
      case Unary::kRsqrt:
        y = x.rsqrt();
        return;
      case Unary::kAbs:
        y = x.abs();
        return;
      case Unary::kSign:
        y = x.sign();
        return;
      case Unary::kNot:
        break;
    }
  } else {
    switch (op) {
      case Unary::kNeg:
        y = T(0) - x;
        return;  // wraps for unsigned, as NumPy's
      case Unary::kAbs:
        if constexpr (std::is_signed_v<T>) {
          y = x.abs();
        } else {
          y = x;
        }
        return;
      case Unary::kSign:
        y = (x > T(0)).template cast<T>() - (x < T(0)).template cast<T>();
        return;
      default:
        break;
    }
  }
  throw InvalidArgument(
      fmt::format("kernels::unary: {} is not defined on {}", name(op), dtype_name(dtype_of<T>())));
}

// Integer power by squaring; a negative exponent gives 0 (1 for a base of 1, ±1 for -1), as
// XLA's integer pow does.
template <class T>
T integer_pow(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) return base == 1 ? 1 : base == -1 ? (exponent % 2 ? -1 : 1) : 0;
  }
  T result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = static_cast<T>(result * base);
    base = static_cast<T>(base * base);
    exponent = static_cast<T>(exponent >> 1);
  }
  return result;
}

template <class T, class X, class Y>
void arithmetic(Binary op, const X& x, const Y& y, Map<T> out) {
  if constexpr (std::is_same_v<T, bool>) {
    // NumPy on bools: + and max are "or", * and min are "and".
    switch (op) {
      case Binary::kAdd:
      case Binary::kMax:
      case Binary::kOr:
        out = x || y;
        return;
      case Binary::kMul:
      case Binary::kMin:
      case Binary::kAnd:
        out = x && y;
        return;
      default:
        break;
    }
  } else {
    switch (op) {
      case Binary::kAdd:
        out = x + y;
        return;
      case Binary::kSub:
        out = x - y;
        return;
      case Binary::kMul:
        out = x * y;
        return;
      case Binary::kMax:
      case Binary::kMin:
        if constexpr (std::is_floating_point_v<T>) {
          // NaN wins, as jnp.maximum's: Eigen's own max leaves it to the instruction.
          const auto m = op == Binary::kMax ? x.max(y).eval() : x.min(y).eval();
          out = (x != x).select(x, (y != y).select(y, m));
        } else {
          out = op == Binary::kMax ? x.max(y).eval() : x.min(y).eval();
        }
        return;
      default:
        break;
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (op == Binary::kDiv) {
        out = x / y;
        return;
      }
      if (op == Binary::kPow) {
        out = x.pow(y);
        return;
      }
    } else {
      if (op == Binary::kPow) {
        out = x.binaryExpr(y, [](T b, T e) { return integer_pow(b, e); });
        return;
      }
    }
  }
  throw InvalidArgument(
      fmt::format("kernels::binary: {} is not defined on {}", name(op), dtype_name(dtype_of<T>())));
}

template <class T, class X, class Y>
void comparison(Binary op, const X& x, const Y& y, Map<bool> out) {
  switch (op) {
    case Binary::kEq:
      out = x == y;
      return;
    case Binary::kNe:
      out = x != y;
      return;
    case Binary::kLt:
      out = x < y;
      return;
    case Binary::kLe:
      out = x <= y;
      return;
    case Binary::kGt:
      out = x > y;
      return;
    case Binary::kGe:
      out = x >= y;
      return;
    default:
      break;
  }
}

// Truncating integer division; a zero divisor anywhere throws before anything is written.
void integer_divide(DType dtype, Input a, Input b, std::byte* out, int64_t n) {
  visit_compute_type(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const ConstMap<T> divisor(reinterpret_cast<const T*>(b.data), b.elements);
      if ((divisor == T(0)).any()) throw InvalidArgument("div: integer division by zero");
      with_operand(reinterpret_cast<const T*>(a.data), a.elements, n, [&](const auto& x) {
        with_operand(reinterpret_cast<const T*>(b.data), b.elements, n,
                     [&](const auto& y) { Map<T>(reinterpret_cast<T*>(out), n) = x / y; });
      });
    } else {
      throw InvalidArgument(
          fmt::format("kernels::binary: div is not defined on {}", dtype_name(dtype)));
    }
  });
}

}  // namespace

std::string_view name(Unary op) {
  constexpr std::string_view names[] = {"neg",   "exp", "log",  "tanh", "sqrt",
                                        "rsqrt", "abs", "sign", "not"};
  return names[static_cast<int>(op)];
}

std::string_view name(Binary op) {
  constexpr std::string_view names[] = {"add", "sub", "mul", "div", "pow", "max", "min", "and",
                                        "or",  "eq",  "ne",  "lt",  "le",  "gt",  "ge"};
  return names[static_cast<int>(op)];
}

void unary(Unary op, DType dtype, Input a, std::byte* out, int64_t n) {
  visit_compute_type(dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<float> wide_in, wide_out;
    const T* x = typed<T>(dtype, a, wide_in);
    Vec<T> full;
    if (a.elements != n) {
      full = Vec<T>::Constant(n, x[0]);
      x = full.data();
    }
    const bool half = is_half_dtype(dtype);
    if (half) wide_out.resize(static_cast<size_t>(n));
    T* target = half ? reinterpret_cast<T*>(wide_out.data()) : reinterpret_cast<T*>(out);
    unary_typed<T>(op, ConstMap<T>(x, n), Map<T>(target, n));
    if (half) from_wide(dtype, wide_out, out);
  });
}

void binary(Binary op, DType dtype, Input a, Input b, std::byte* out, int64_t n) {
  if (op == Binary::kDiv && !is_floating(dtype)) {
    integer_divide(dtype, a, b, out, n);
    return;
  }
  visit_compute_type(dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<float> wide_a, wide_b, wide_out;
    const T* x = typed<T>(dtype, a, wide_a);
    const T* y = typed<T>(dtype, b, wide_b);
    const bool half = is_half_dtype(dtype);
    if (half && !is_comparison(op)) wide_out.resize(static_cast<size_t>(n));
    with_operand(x, a.elements, n, [&](const auto& xe) {
      with_operand(y, b.elements, n, [&](const auto& ye) {
        if (is_comparison(op)) {
          comparison<T>(op, xe, ye, Map<bool>(reinterpret_cast<bool*>(out), n));
        } else {
          T* target = half ? reinterpret_cast<T*>(wide_out.data()) : reinterpret_cast<T*>(out);
          arithmetic<T>(op, xe, ye, Map<T>(target, n));
        }
      });
    });
    if (!wide_out.empty()) from_wide(dtype, wide_out, out);
  });
}

void select(DType dtype, Input cond, Input a, Input b, std::byte* out, int64_t n) {
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const auto* c = reinterpret_cast<const bool*>(cond.data);
    const auto* x = reinterpret_cast<const T*>(a.data);
    const auto* y = reinterpret_cast<const T*>(b.data);
    with_operand(c, cond.elements, n, [&](const auto& ce) {
      with_operand(x, a.elements, n, [&](const auto& xe) {
        with_operand(y, b.elements, n, [&](const auto& ye) {
          Map<T>(reinterpret_cast<T*>(out), n) = ce.select(xe, ye);
        });
      });
    });
  });
}

void convert(DType from, DType to, Input a, std::byte* out, int64_t n) {
  std::vector<float> wide_in, wide_out;
  visit_compute_type(from, [&](auto zero_from) {
    using F = decltype(zero_from);
    const F* x = typed<F>(from, a, wide_in);
    visit_compute_type(to, [&](auto zero_to) {
      using U = decltype(zero_to);
      const bool half_out = is_half_dtype(to);
      if (half_out) wide_out.resize(static_cast<size_t>(n));
      U* target = half_out ? reinterpret_cast<U*>(wide_out.data()) : reinterpret_cast<U*>(out);
      with_operand(x, a.elements, n, [&](const auto& xe) {
        if constexpr (std::is_same_v<U, bool>) {
          Map<bool>(target, n) = xe != F(0);
        } else {
          Map<U>(target, n) = xe.template cast<U>();
        }
      });
    });
  });
  if (!wide_out.empty()) from_wide(to, wide_out, out);
}

}  // namespace spmd::kernels
