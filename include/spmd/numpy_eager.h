// spmd::numpy on spmd::Arrays outside jit: each call runs at once, as a one-operation program
// compiled and cached by spmd::jit (jit.h) per operation, attributes and input signature, as
// jax.numpy does on concrete arrays. The result has the propagated sharding; everything jit.h
// says of collectives holds (every process of the inputs' mesh makes the same calls in the same
// order). Inputs on one device (SingleDeviceSharding) are taken as a one-device mesh.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "spmd/array.h"
#include "spmd/numpy.h"

namespace spmd::numpy {

namespace detail {
// Runs `op` over `inputs` as a cached one-operation jit program; `key` names the operation and
// its attributes (the cache key, with the inputs' signature).
Array eager(const std::string& key, std::initializer_list<const Array*> inputs,
            const std::function<Tensor(const std::vector<Tensor>&)>& op);
}  // namespace detail

Array add(const Array& a, const Array& b);
Array subtract(const Array& a, const Array& b);
Array multiply(const Array& a, const Array& b);
Array divide(const Array& a, const Array& b);
Array maximum(const Array& a, const Array& b);
Array minimum(const Array& a, const Array& b);
Array power(const Array& a, const Array& b);
Array equal(const Array& a, const Array& b);
Array less(const Array& a, const Array& b);
Array greater(const Array& a, const Array& b);
Array where(const Array& cond, const Array& a, const Array& b);
Array negative(const Array& a);
Array exp(const Array& a);
Array log(const Array& a);
Array tanh(const Array& a);
Array sqrt(const Array& a);
Array abs(const Array& a);
Array relu(const Array& a);
Array astype(const Array& a, DType dtype);
Array sum(const Array& a, const AxisList& axes = {}, bool keepdims = false);
Array mean(const Array& a, const AxisList& axes = {}, bool keepdims = false);
Array max(const Array& a, const AxisList& axes = {}, bool keepdims = false);
Array min(const Array& a, const AxisList& axes = {}, bool keepdims = false);
Array argmax(const Array& a, int axis);
Array matmul(const Array& a, const Array& b);
Array reshape(const Array& a, const Shape& shape);
Array transpose(const Array& a, const std::vector<int>& axes = {});
Array softmax(const Array& a, int axis = -1);
Array rsqrt(const Array& a);
Array sign(const Array& a);
Array not_equal(const Array& a, const Array& b);
Array less_equal(const Array& a, const Array& b);
Array greater_equal(const Array& a, const Array& b);
Array dot(const Array& a, const Array& b);
Array einsum(const std::string& subscripts, const Array& a);
Array einsum(const std::string& subscripts, const Array& a, const Array& b);
Array broadcast_to(const Array& a, const Shape& shape);
Array expand_dims(const Array& a, int axis);
Array squeeze(const Array& a, const AxisList& axes = {});
Array slice(const Array& a, const std::vector<int64_t>& start, const std::vector<int64_t>& stop);
Array concatenate(const std::vector<Array>& parts, int axis = 0);
Array logsumexp(const Array& a, const AxisList& axes = {}, bool keepdims = false);

}  // namespace spmd::numpy

namespace spmd {

Array operator+(const Array& a, const Array& b);
Array operator-(const Array& a, const Array& b);
Array operator*(const Array& a, const Array& b);
Array operator/(const Array& a, const Array& b);
Array operator-(const Array& a);

}  // namespace spmd
