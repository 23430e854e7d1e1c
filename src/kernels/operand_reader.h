// An element-wise kernel's operand (elementwise.h's Input: n elements, or one for every element)
// read element by element in a plain loop, so that the compiler vectorises the loop: a buffer is
// a Stream, a scalar a Repeated value, and with_reader calls the loop's body with whichever the
// operand is, one instantiation per pair. Internal to kernels/ (mask_ops.cc, float_arithmetic.cc).
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/elementwise.h"

namespace spmd::kernels {

template <class T>
struct Stream {
  const T* data;
  T operator[](int64_t i) const { return data[i]; }
};

template <class T>
struct Repeated {
  T value;
  T operator[](int64_t /*i*/) const { return value; }
};

// Calls f with a reader of `in` as T: a Stream where it has n elements, else its first element
// Repeated.
template <class T, class F>
void with_reader(Input in, int64_t n, F&& f) {
  if (in.elements == n) {
    f(Stream<T>{reinterpret_cast<const T*>(in.data)});
  } else {
    T value;
    std::memcpy(&value, in.data, sizeof value);
    f(Repeated<T>{value});
  }
}

}  // namespace spmd::kernels
