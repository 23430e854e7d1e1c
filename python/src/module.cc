// NB_MODULE(_spmd): the extension module's entry, calling each part's bind_* (bindings.h).
#include <nanobind/stl/string.h>

#include <cstring>

#include "bindings.h"
#include "spmd/error.h"

namespace spmd::python {

std::string numpy_name(DType dtype) { return std::string(dtype_name(dtype)); }

DType dtype_named(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(DType::kFloat64); ++i) {
    if (dtype_name(static_cast<DType>(i)) == name) return static_cast<DType>(i);
  }
  throw InvalidArgument("spmd: no dtype is named '" + name + "'");
}

HostArray host_of(const HostBytes& bytes, const Shape& shape, const std::string& dtype) {
  HostArray host = HostArray::uninitialized(dtype_named(dtype), shape);
  if (host.nbytes() != bytes.size()) {
    throw InvalidArgument("spmd: " + std::to_string(bytes.size()) + " bytes for " +
                          std::to_string(host.nbytes()) + " of " + dtype);
  }
  if (host.nbytes() > 0) std::memcpy(host.mutable_bytes().data(), bytes.data(), host.nbytes());
  return host;
}

namespace {

[[noreturn]] void throw_axis_type_error(const nb::handle& h, const char* what, bool none_ok) {
  std::string repr = nb::cast<std::string>(nb::repr(h));
  if (repr.size() > 80) repr = repr.substr(0, 77) + "...";
  throw nb::type_error((std::string(what) + ": " + (none_ok ? "None, " : "") +
                        "a mesh axis name (a str) or a tuple of them expected, got " + repr)
                           .c_str());
}

}  // namespace

AxisEntry axis_entry(const nb::handle& h, const char* what, bool none_ok) {
  if (none_ok && h.is_none()) return AxisEntry();
  if (nb::isinstance<nb::str>(h)) return AxisEntry(nb::cast<std::string>(h));
  if (!nb::isinstance<nb::tuple>(h) && !nb::isinstance<nb::list>(h)) {
    throw_axis_type_error(h, what, none_ok);
  }
  std::vector<std::string> axes;
  for (nb::handle a : h) {
    if (!nb::isinstance<nb::str>(a)) throw_axis_type_error(h, what, none_ok);
    axes.push_back(nb::cast<std::string>(a));
  }
  return AxisEntry(std::move(axes));
}

nb::tuple shape_tuple(const Shape& shape) {
  // Built in place: `shape` is read on every jit call, for its cache key.
  nb::object t = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(shape.size())));
  if (!t.is_valid()) throw nb::python_error();
  for (size_t i = 0; i < shape.size(); ++i) {
    PyTuple_SET_ITEM(t.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromLongLong(shape[i]));
  }
  return nb::borrow<nb::tuple>(t);
}

nb::tuple index_tuple(const Index& index, const Shape& shape) {
  nb::list slices;
  for (size_t d = 0; d < index.size(); ++d) {
    const Slice& s = index[d];
    if (s.start == 0 && s.stop == shape[d]) {
      slices.append(nb::slice(nb::none(), nb::none(), nb::none()));
    } else {
      slices.append(nb::slice(nb::int_(s.start), nb::int_(s.stop), nb::none()));
    }
  }
  return nb::tuple(slices);
}

}  // namespace spmd::python

NB_MODULE(_spmd, m) {
  using namespace spmd::python;
  bind_errors(m);
  bind_runtime(m);
  bind_sharding(m);
  bind_array(m);
  bind_trace(m);
  bind_callbacks(m);
  bind_random(m);
  bind_optim(m);
  bind_checkpoint(m);
  bind_data(m);
  bind_interrupt(m);  // last: its translator is tried before the others
}
