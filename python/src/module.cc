// NB_MODULE(_spmd): the extension module's entry, calling each part's bind_* (bindings.h).
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

}  // namespace spmd::python

NB_MODULE(_spmd, m) {
  using namespace spmd::python;
  bind_errors(m);
  bind_runtime(m);
  bind_sharding(m);
  bind_array(m);
  bind_trace(m);
  bind_random(m);
  bind_optim(m);
}
