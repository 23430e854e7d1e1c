// spmd.Array and device_put, over spmd/array.h. Data crosses as bytes: NumPy's side views them
// with its dtype (python/spmd/_array.py), so every dtype, bfloat16 (ml_dtypes) included, takes
// one path. Into spmd: one copy into a host array, then device_put's placement. Out: the
// gathered host array itself, owned by the NumPy array that views it (no second copy).
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "bindings.h"
#include "spmd/array.h"
#include "spmd/error.h"
#include "spmd/multihost.h"

namespace spmd::python {
namespace {

using Bytes = nb::ndarray<nb::numpy, const uint8_t, nb::ndim<1>, nb::c_contig>;

HostArray host_of(const Bytes& bytes, const Shape& shape, const std::string& dtype) {
  HostArray host = HostArray::uninitialized(dtype_named(dtype), shape);
  if (host.nbytes() != bytes.size()) {
    throw InvalidArgument("device_put: " + std::to_string(bytes.size()) + " bytes for " +
                          std::to_string(host.nbytes()) + " of " + dtype);
  }
  if (host.nbytes() > 0) std::memcpy(host.mutable_bytes().data(), bytes.data(), host.nbytes());
  return host;
}

// The host array's bytes as a NumPy uint8 array that owns it.
nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>> owned_bytes(HostArray host) {
  auto* owned = new HostArray(std::move(host));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<HostArray*>(p); });
  return {owned->mutable_bytes().data(), {owned->nbytes()}, owner};
}

nb::object sharding_object(const Array& a) {
  if (const auto* named = dynamic_cast<const NamedSharding*>(&a.sharding())) {
    return nb::cast(*named);
  }
  return nb::str(a.sharding().to_string().c_str());
}

}  // namespace

void bind_array(nb::module_& m) {
  nb::class_<Array>(m, "Array")
      .def_prop_ro("shape", [](const Array& a) { return a.shape(); })
      .def_prop_ro("_dtype", [](const Array& a) { return numpy_name(a.dtype()); })
      .def_prop_ro("sharding", &sharding_object)
      .def_prop_ro("is_fully_addressable", &Array::is_fully_addressable)
      .def_prop_ro("is_fully_replicated", &Array::is_fully_replicated)
      .def("_host_bytes",
           [](const Array& a) {
             HostArray host;
             {
               nb::gil_scoped_release release;
               host = a.to_host();
             }
             return owned_bytes(std::move(host));
           })
      .def("_replica_bytes",
           [](const Array& a) {
             if (a.addressable_shards().empty()) {
               throw InvalidArgument("spmd.Array: this process holds no shard of it");
             }
             return owned_bytes(a.addressable_data(0));
           })
      .def("_gathered_bytes",
           [](const Array& a) {
             HostArray host;
             {
               nb::gil_scoped_release release;
               host = multihost::process_allgather(a);
             }
             return owned_bytes(std::move(host));
           })
      .def("__repr__", &Array::to_string);

  m.def("_device_put_bytes", [](const Bytes& bytes, const Shape& shape, const std::string& dtype,
                                const NamedSharding& sharding) {
    const HostArray host = host_of(bytes, shape, dtype);
    nb::gil_scoped_release release;
    return device_put(host, sharding);
  });
  m.def(
      "_make_from_process_local_bytes",
      [](const NamedSharding& sharding, const Bytes& bytes, const Shape& local_shape,
         const std::string& dtype, const std::optional<Shape>& global_shape) {
        const HostArray local = host_of(bytes, local_shape, dtype);
        nb::gil_scoped_release release;
        return make_array_from_process_local_data(sharding, local, global_shape);
      },
      nb::arg("sharding"), nb::arg("bytes"), nb::arg("local_shape"), nb::arg("dtype"),
      nb::arg("global_shape").none());
  // The callback takes an index as [(start, stop), …] and returns (bytes, shape, dtype).
  m.def(
      "_make_from_callback",
      [](const Shape& shape, const NamedSharding& sharding, const std::optional<std::string>& dtype,
         const std::function<nb::tuple(std::vector<std::pair<int64_t, int64_t>>)>& callback) {
        return make_array_from_callback(
            shape, sharding,
            [&](const Index& index) {
              std::vector<std::pair<int64_t, int64_t>> bounds;
              for (const Slice& s : index) bounds.emplace_back(s.start, s.stop);
              const nb::tuple block = callback(bounds);
              return host_of(nb::cast<Bytes>(block[0]), nb::cast<Shape>(block[1]),
                             nb::cast<std::string>(block[2]));
            },
            dtype ? std::optional<DType>(dtype_named(*dtype)) : std::nullopt);
      },
      nb::arg("shape"), nb::arg("sharding"), nb::arg("dtype").none(), nb::arg("callback"));
  m.def("_device_put_array", [](const Array& x, const NamedSharding& sharding) {
    nb::gil_scoped_release release;
    return device_put(x, sharding);
  });
}

}  // namespace spmd::python
