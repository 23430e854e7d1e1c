// spmd.random's raw-key functions over spmd/random.h: on Arrays (eager) and on Tensors (traced).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "spmd/random.h"

namespace spmd::python {
namespace {

// `name` for keys of type K (Array or Tensor).
template <class K>
void samplers(nb::module_& r) {
  r.def("split", [](const K& key, int64_t n) { return random::split(key, n); });
  r.def("fold_in", [](const K& key, uint32_t data) { return random::fold_in(key, data); });
  r.def("normal", [](const K& key, const Shape& shape, const std::string& dtype) {
    return random::normal(key, shape, dtype_named(dtype));
  });
  r.def("uniform", [](const K& key, const Shape& shape, const std::string& dtype, double minval,
                      double maxval) {
    return random::uniform(key, shape, dtype_named(dtype), minval, maxval);
  });
  r.def("randint", [](const K& key, const Shape& shape, int64_t minval, int64_t maxval,
                      const std::string& dtype) {
    return random::randint(key, shape, minval, maxval, dtype_named(dtype));
  });
}

}  // namespace

void bind_random(nb::module_& m) {
  nb::module_ r = m.def_submodule("random", "spmd::random on raw keys");
  r.def("PRNGKey", &random::PRNGKey);
  samplers<Array>(r);
  samplers<Tensor>(r);
}

}  // namespace spmd::python
