// Host callbacks in traced programs (spmd/host_callback.h) for python/spmd/_callbacks.py: a
// Python callable becomes a HostFunction that takes the GIL on the device thread running it
// (jit's calls release it while their devices run) and passes each value as (bytes, shape, dtype
// name), NumPy's uint8 view owning the HostArray; a pure callback's callable returns its results
// the same way. A Python exception becomes an Error with its type and message, which the C++
// side names the callback and the device in.
#include <fmt/format.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "bindings.h"
#include "spmd/host_callback.h"

namespace spmd::python {
namespace {

using Result = std::tuple<HostBytes, Shape, std::string>;

// `fn` as a host function; copies share one reference, released with the GIL.
lax::HostFunction host_function(nb::callable fn) {
  const std::shared_ptr<nb::callable> held(new nb::callable(std::move(fn)), [](nb::callable* f) {
    nb::gil_scoped_acquire gil;
    delete f;
  });
  return [held](std::vector<HostArray> values) {
    nb::gil_scoped_acquire gil;
    try {
      nb::list args;
      for (HostArray& v : values) {
        const Shape shape = v.shape();
        const DType dtype = v.dtype();
        args.append(
            nb::make_tuple(owned_bytes(std::move(v)), shape_tuple(shape), numpy_name(dtype)));
      }
      const nb::object out = (*held)(args);
      std::vector<HostArray> results;
      for (const auto& [bytes, shape, dtype] : nb::cast<std::vector<Result>>(out))
        results.push_back(host_of(bytes, shape, dtype));
      return results;
    } catch (nb::python_error& e) {
      const std::string type = nb::cast<std::string>(e.type().attr("__name__"));
      throw Error(fmt::format("{}: {}", type, nb::cast<std::string>(nb::str(e.value()))));
    }
  };
}

lax::VmapMethod vmap_method_named(const std::string& name) {
  if (name.empty()) return lax::VmapMethod::kNone;
  if (name == "sequential" || name == "sequential_unrolled") return lax::VmapMethod::kSequential;
  if (name == "expand_dims") return lax::VmapMethod::kExpandDims;
  if (name == "broadcast_all") return lax::VmapMethod::kBroadcastAll;
  throw InvalidArgument(fmt::format("pure_callback: no vmap_method named '{}'", name));
}

}  // namespace

void bind_callbacks(nb::module_& m) {
  m.def("tracing", &lax::tracing);
  m.def(
      "debug_callback",
      [](const std::string& name, const std::vector<Tensor>& args, nb::callable fn,
         bool partitioned) {
        lax::debug_callback(name, args, host_function(std::move(fn)), partitioned);
      },
      nb::arg("name"), nb::arg("args"), nb::arg("fn"), nb::arg("partitioned"));
  m.def(
      "pure_callback",
      [](const std::string& name, const std::vector<Tensor>& args,
         const std::vector<std::tuple<Shape, std::string>>& results, nb::callable fn,
         const std::string& vmap_method) {
        std::vector<ShapeDtypeStruct> types;
        for (const auto& [shape, dtype] : results) types.push_back({shape, dtype_named(dtype), {}});
        return lax::pure_callback(name, args, types, host_function(std::move(fn)),
                                  vmap_method_named(vmap_method));
      },
      nb::arg("name"), nb::arg("args"), nb::arg("results"), nb::arg("fn"), nb::arg("vmap_method"));
}

}  // namespace spmd::python
