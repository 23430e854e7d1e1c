// spmd::numpy on Arrays: one cached jit per operation and attributes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>
#include <mutex>

#include "runtime/runtime_state.h"
#include "spmd/jit.h"
#include "spmd/numpy_eager.h"

namespace spmd::numpy {
namespace detail {
namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// The one jit per key (operation and attributes), made on first use. A runtime session's object:
// its compiled programs name the session's meshes and devices, so they end with shutdown().
struct EagerCache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<Jitted<Fn>>> jits;
};

std::shared_ptr<Jitted<Fn>> cached(const std::string& key, const Fn& op) {
  const std::shared_ptr<EagerCache> cache = session_object<EagerCache>();
  std::lock_guard lock(cache->mu);
  auto& slot = cache->jits[key];
  if (!slot) slot = std::make_shared<Jitted<Fn>>(op, JitOptions{.name = key});
  return slot;
}

}  // namespace

Array eager(const std::string& key, std::initializer_list<const Array*> inputs, const Fn& op) {
  std::vector<Array> args;
  args.reserve(inputs.size());
  for (const Array* a : inputs) args.push_back(*a);
  return (*cached(key, op))(args);
}

}  // namespace detail

namespace {

Array binary(const char* name, const Array& a, const Array& b,
             Tensor (*f)(const Tensor&, const Tensor&)) {
  return detail::eager(name, {&a, &b}, [f](const std::vector<Tensor>& t) { return f(t[0], t[1]); });
}

Array unary(const char* name, const Array& a, Tensor (*f)(const Tensor&)) {
  return detail::eager(name, {&a}, [f](const std::vector<Tensor>& t) { return f(t[0]); });
}

std::string axes_key(const char* name, const AxisList& axes, bool keepdims) {
  return fmt::format("{}({},{})", name, fmt::join(axes, ","), keepdims);
}

}  // namespace

Array add(const Array& a, const Array& b) { return binary("add", a, b, &add); }
Array subtract(const Array& a, const Array& b) { return binary("subtract", a, b, &subtract); }
Array multiply(const Array& a, const Array& b) { return binary("multiply", a, b, &multiply); }
Array divide(const Array& a, const Array& b) { return binary("divide", a, b, &divide); }
Array maximum(const Array& a, const Array& b) {
  return binary("maximum", a, b, static_cast<Tensor (*)(const Tensor&, const Tensor&)>(&maximum));
}
Array minimum(const Array& a, const Array& b) {
  return binary("minimum", a, b, static_cast<Tensor (*)(const Tensor&, const Tensor&)>(&minimum));
}
Array power(const Array& a, const Array& b) {
  return binary("power", a, b, static_cast<Tensor (*)(const Tensor&, const Tensor&)>(&power));
}
Array equal(const Array& a, const Array& b) { return binary("equal", a, b, &equal); }
Array less(const Array& a, const Array& b) { return binary("less", a, b, &less); }
Array greater(const Array& a, const Array& b) { return binary("greater", a, b, &greater); }
Array where(const Array& cond, const Array& a, const Array& b) {
  return detail::eager("where", {&cond, &a, &b},
                       [](const std::vector<Tensor>& t) { return where(t[0], t[1], t[2]); });
}
Array negative(const Array& a) { return unary("negative", a, &negative); }
Array exp(const Array& a) { return unary("exp", a, &exp); }
Array log(const Array& a) { return unary("log", a, &log); }
Array tanh(const Array& a) { return unary("tanh", a, &tanh); }
Array sqrt(const Array& a) { return unary("sqrt", a, &sqrt); }
Array abs(const Array& a) { return unary("abs", a, &abs); }
Array relu(const Array& a) { return unary("relu", a, &relu); }
Array astype(const Array& a, DType dtype) {
  return detail::eager(fmt::format("astype({})", dtype_name(dtype)), {&a},
                       [dtype](const std::vector<Tensor>& t) { return astype(t[0], dtype); });
}
Array sum(const Array& a, const AxisList& axes, bool keepdims) {
  return detail::eager(axes_key("sum", axes, keepdims), {&a},
                       [=](const std::vector<Tensor>& t) { return sum(t[0], axes, keepdims); });
}
Array mean(const Array& a, const AxisList& axes, bool keepdims) {
  return detail::eager(axes_key("mean", axes, keepdims), {&a},
                       [=](const std::vector<Tensor>& t) { return mean(t[0], axes, keepdims); });
}
Array max(const Array& a, const AxisList& axes, bool keepdims) {
  return detail::eager(axes_key("max", axes, keepdims), {&a},
                       [=](const std::vector<Tensor>& t) { return max(t[0], axes, keepdims); });
}
Array min(const Array& a, const AxisList& axes, bool keepdims) {
  return detail::eager(axes_key("min", axes, keepdims), {&a},
                       [=](const std::vector<Tensor>& t) { return min(t[0], axes, keepdims); });
}
Array argmax(const Array& a, int axis) {
  return detail::eager(fmt::format("argmax({})", axis), {&a},
                       [=](const std::vector<Tensor>& t) { return argmax(t[0], axis); });
}
Array matmul(const Array& a, const Array& b) { return binary("matmul", a, b, &matmul); }
Array reshape(const Array& a, const Shape& shape) {
  return detail::eager(fmt::format("reshape({})", fmt::join(shape, ",")), {&a},
                       [=](const std::vector<Tensor>& t) { return reshape(t[0], shape); });
}
Array transpose(const Array& a, const std::vector<int>& axes) {
  return detail::eager(fmt::format("transpose({})", fmt::join(axes, ",")), {&a},
                       [=](const std::vector<Tensor>& t) { return transpose(t[0], axes); });
}
Array softmax(const Array& a, int axis) {
  return detail::eager(fmt::format("softmax({})", axis), {&a},
                       [=](const std::vector<Tensor>& t) { return softmax(t[0], axis); });
}

Array rsqrt(const Array& a) { return unary("rsqrt", a, &rsqrt); }
Array sign(const Array& a) { return unary("sign", a, &sign); }
Array not_equal(const Array& a, const Array& b) { return binary("not_equal", a, b, &not_equal); }
Array less_equal(const Array& a, const Array& b) { return binary("less_equal", a, b, &less_equal); }
Array greater_equal(const Array& a, const Array& b) {
  return binary("greater_equal", a, b, &greater_equal);
}
Array dot(const Array& a, const Array& b) { return binary("dot", a, b, &dot); }
Array einsum(const std::string& subscripts, const Array& a) {
  return detail::eager("einsum(" + subscripts + ")", {&a},
                       [=](const std::vector<Tensor>& t) { return einsum(subscripts, t[0]); });
}
Array einsum(const std::string& subscripts, const Array& a, const Array& b) {
  return detail::eager("einsum(" + subscripts + ")", {&a, &b}, [=](const std::vector<Tensor>& t) {
    return einsum(subscripts, t[0], t[1]);
  });
}
Array broadcast_to(const Array& a, const Shape& shape) {
  return detail::eager(fmt::format("broadcast_to({})", fmt::join(shape, ",")), {&a},
                       [=](const std::vector<Tensor>& t) { return broadcast_to(t[0], shape); });
}
Array expand_dims(const Array& a, int axis) {
  return detail::eager(fmt::format("expand_dims({})", axis), {&a},
                       [=](const std::vector<Tensor>& t) { return expand_dims(t[0], axis); });
}
Array squeeze(const Array& a, const AxisList& axes) {
  return detail::eager(fmt::format("squeeze({})", fmt::join(axes, ",")), {&a},
                       [=](const std::vector<Tensor>& t) { return squeeze(t[0], axes); });
}
Array slice(const Array& a, const std::vector<int64_t>& start, const std::vector<int64_t>& stop) {
  return detail::eager(fmt::format("slice({};{})", fmt::join(start, ","), fmt::join(stop, ",")),
                       {&a},
                       [=](const std::vector<Tensor>& t) { return slice(t[0], start, stop); });
}
Array concatenate(const std::vector<Array>& parts, int axis) {
  const auto fn =
      detail::cached(fmt::format("concatenate({})", axis),
                     [axis](const std::vector<Tensor>& t) { return concatenate(t, axis); });
  return (*fn)(parts);
}
Array logsumexp(const Array& a, const AxisList& axes, bool keepdims) {
  return detail::eager(
      axes_key("logsumexp", axes, keepdims), {&a},
      [=](const std::vector<Tensor>& t) { return logsumexp(t[0], axes, keepdims); });
}

}  // namespace spmd::numpy

namespace spmd {

Array operator+(const Array& a, const Array& b) { return numpy::add(a, b); }
Array operator-(const Array& a, const Array& b) { return numpy::subtract(a, b); }
Array operator*(const Array& a, const Array& b) { return numpy::multiply(a, b); }
Array operator/(const Array& a, const Array& b) { return numpy::divide(a, b); }
Array operator-(const Array& a) { return numpy::negative(a); }

}  // namespace spmd
