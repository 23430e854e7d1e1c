// spmd::Tensor — a value inside a function traced by spmd::jit (jit.h): a global shape and a
// dtype, and the operations of spmd::numpy (numpy.h) and the operators below recorded on it
// instead of run. The operators broadcast and promote as jax.numpy's functions of the same name
// (add, subtract, multiply, divide, negative, the comparisons) do.
//
// A Tensor has no elements. jit calls the user's function once per new signature with one Tensor
// per argument; every operation on Tensors appends to that trace's program and returns the Tensor
// of its result. Using a Tensor once the jit call that made it has returned, or together with a
// Tensor of another trace, throws InvalidArgument. Scalars mix in as JAX's "weak" Python scalars:
// `x * 2.0f` keeps a floating x's dtype, `i + 1` an integer i's; a floating scalar with an
// integer or bool Tensor gives the default float (float32, float64 under x64: config.h), an
// integer scalar with a bool Tensor the default int. An integer scalar is exact to the bit in a
// 64-bit integer result (int64 + 9007199254740993).
//
// Not thread-safe: a trace runs on the thread that called the jitted function.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "spmd/dtype.h"
#include "spmd/sharding.h"

namespace spmd {

namespace compiler {
class Trace;
}

class Tensor {
 public:
  // An invalid Tensor: every use throws InvalidArgument.
  Tensor() = default;

  // By value: the program grows as operations are recorded, so no reference into it lasts.
  Shape shape() const;
  DType dtype() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  int64_t size() const;
  // The sharding in its type (JAX's `typeof(x).sharding`): on the jit's mesh, one entry per
  // dimension naming the Explicit axes that split it (DESIGN.md, "Sharding in types"). Every
  // operation's result has the one JAX's rules give it, and the compiled program holds the value
  // to it. Auto axes are never in a type: on a mesh of Auto axes every entry is None.
  NamedSharding sharding() const;
  // "Tensor(f32[8,4], %3)"; "Tensor(f32[8@x,4], %3)" where the type splits it.
  std::string to_string() const;

  // The trace and the value it names (for the tracing API: jit/lax.h and the libraries on it).
  Tensor(std::shared_ptr<compiler::Trace> trace, int value)
      : trace_(std::move(trace)), value_(value) {}
  const std::shared_ptr<compiler::Trace>& trace() const { return trace_; }
  int value() const { return value_; }

 private:
  std::shared_ptr<compiler::Trace> trace_;
  int value_ = -1;
};

// A scalar as an operand: Python's weak-typed number.
struct Scalar {
  Scalar(double v) : value(v), floating(true) {}            // NOLINT(google-explicit-constructor)
  Scalar(float v) : value(v), floating(true) {}             // NOLINT(google-explicit-constructor)
  Scalar(int v) : value(v), integer(v), floating(false) {}  // NOLINT(google-explicit-constructor)
  Scalar(int64_t v) : value(static_cast<double>(v)), integer(v), floating(false) {}  // NOLINT
  Scalar(bool v)
      : value(v ? 1 : 0), integer(v ? 1 : 0), floating(false), boolean(true) {}  // NOLINT
  double value;
  int64_t integer = 0;  // an integer scalar's exact value (`value` rounds beyond 2^53)
  bool floating;
  bool boolean = false;
};

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator>(const Tensor& a, Scalar b);

}  // namespace spmd
