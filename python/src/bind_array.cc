// spmd.Array and device_put, over spmd/array.h. Data crosses as bytes: NumPy's side views them
// with its dtype (python/spmd/_core.py), so every dtype, bfloat16 (ml_dtypes) included, takes
// one path. Into spmd: the NumPy array's memory itself where the shards are whole rows of it
// (HostArray::borrow, as JAX's device_put aliases on CPU), else one copy. Out: a shard viewed in
// place, or the gathered host array itself, owned by the NumPy array that views it.
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <set>

#include "bindings.h"
#include "spmd/array.h"
#include "spmd/error.h"
#include "spmd/multihost.h"
#include "spmd/runtime.h"

namespace spmd::python {

nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>> owned_bytes(HostArray host) {
  auto* owned = new HostArray(std::move(host));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<HostArray*>(p); });
  return {owned->mutable_bytes().data(), {owned->nbytes()}, owner};
}

namespace {

// `collective` (a multihost_utils call every process makes) on the host value of `bytes`, the GIL
// released while the processes meet; its result's bytes as NumPy's.
template <class F>
nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>> host_collective(const HostBytes& bytes,
                                                             const Shape& shape,
                                                             const std::string& dtype,
                                                             F&& collective) {
  const HostArray in = host_view(bytes, shape, dtype);
  HostArray out;
  {
    nb::gil_scoped_release release;
    out = collective(in);
  }
  return owned_bytes(std::move(out));
}

// The array's sharding as its own Python class (NamedSharding, SingleDeviceSharding or
// PositionalSharding), a copy.
nb::object sharding_object(const Array& a) {
  const Sharding& s = a.sharding();
  if (const auto* named = dynamic_cast<const NamedSharding*>(&s)) return nb::cast(*named);
  if (const auto* single = dynamic_cast<const SingleDeviceSharding*>(&s)) return nb::cast(*single);
  if (const auto* positional = dynamic_cast<const PositionalSharding*>(&s)) {
    return nb::cast(*positional);
  }
  return nb::str(s.to_string().c_str());
}

// Shard i's bytes viewed in place, read-only: the NumPy array keeps a copy of the Array (which
// shares its shards) alive, so nothing is copied. An Array never changes, so the view is stable.
nb::ndarray<nb::numpy, const uint8_t, nb::ndim<1>> shard_view(const Array& a, int i) {
  auto* owner = new Array(a);
  nb::capsule keep(owner, [](void* p) noexcept { delete static_cast<Array*>(p); });
  const HostArray& data = owner->addressable_data(i);
  return {reinterpret_cast<const uint8_t*>(data.bytes().data()), {data.nbytes()}, keep};
}

bool spans_every_process(const Sharding& s) {
  std::set<int> processes;
  for (const Device& d : s.device_assignment()) processes.insert(d.process_index());
  return static_cast<int>(processes.size()) == process_count();
}

// jax.Shard: one addressable device's part, its data as a one-device Array.
nb::dict shard_object(const Array& a, size_t i) {
  const Shard& shard = a.addressable_shards()[i];
  const SingleDeviceSharding own(shard.device);
  std::vector<Shard> one{
      {shard.device, own.devices_indices_map(shard.data.shape()).front().index, 0, shard.data}};
  nb::dict out;
  out["device"] = shard.device;
  out["index"] = index_tuple(shard.index, a.shape());
  out["replica_id"] = shard.replica_id;
  out["data"] = Array(shard.data.shape(), a.dtype(), own.clone(), std::move(one), process_index());
  return out;
}

}  // namespace

void bind_array(nb::module_& m) {
  nb::class_<Array>(m, "Array", nb::dynamic_attr())
      .def_prop_ro("shape", [](const Array& a) { return shape_tuple(a.shape()); })
      .def_prop_ro("_dtype", [](const Array& a) { return numpy_name(a.dtype()); })
      .def_prop_ro("sharding", &sharding_object)
      .def_prop_ro("is_fully_addressable", &Array::is_fully_addressable)
      .def_prop_ro("is_fully_replicated", &Array::is_fully_replicated)
      .def("delete", &Array::delete_buffers)
      .def("is_deleted", &Array::is_deleted)
      .def(
          "block_until_ready",
          [](nb::handle self) {
            const Array& a = nb::cast<const Array&>(self);
            {
              nb::gil_scoped_release release;
              a.block_until_ready();
            }
            return nb::borrow(self);
          },
          "jax.Array.block_until_ready: waits until this process's shards are computed (a GPU "
          "call returns with its work queued), and returns the array.")
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
             return shard_view(a, 0);
           })
      .def("_shard", &shard_object)
      .def_prop_ro("_num_shards", [](const Array& a) { return a.addressable_shards().size(); })
      .def("_gathered_bytes",
           [](const Array& a) {
             HostArray host;
             {
               nb::gil_scoped_release release;
               host = multihost::process_allgather(a);
             }
             return owned_bytes(std::move(host));
           })
      .def("_describe", &Array::to_string);

  // As JAX's device_put of a host value onto devices of every process: the value must be the
  // same everywhere, and is checked (multihost::assert_equal) rather than trusted.
  // may_alias: the shards view the NumPy array's memory where they can (whole rows of it).
  m.def(
      "_device_put_bytes", [](const HostBytes& bytes, const Shape& shape, const std::string& dtype,
                              const Sharding& sharding, bool may_alias) {
        const HostArray host =
            may_alias ? host_view(bytes, shape, dtype) : host_of(bytes, shape, dtype);
        check_even_split(shape, sharding);  // JAX's device_put refuses an uneven layout
        nb::gil_scoped_release release;
        if (!sharding.is_fully_addressable() && spans_every_process(sharding)) {
          multihost::assert_equal(host, "device_put of a host value onto " + sharding.to_string());
        }
        return device_put(host, sharding);
      });
  m.def(
      "_make_from_process_local_bytes",
      [](const Sharding& sharding, const HostBytes& bytes, const Shape& local_shape,
         const std::string& dtype, const std::optional<Shape>& global_shape) {
        const HostArray local = host_view(bytes, local_shape, dtype);
        nb::gil_scoped_release release;
        return make_array_from_process_local_data(sharding, local, global_shape);
      },
      nb::arg("sharding"), nb::arg("bytes"), nb::arg("local_shape"), nb::arg("dtype"),
      nb::arg("global_shape").none());
  // The callback takes an index as [(start, stop), …] and returns (bytes, shape, dtype).
  m.def(
      "_make_from_callback",
      [](const Shape& shape, const Sharding& sharding, const std::optional<std::string>& dtype,
         const std::function<nb::tuple(std::vector<std::pair<int64_t, int64_t>>)>& callback) {
        return make_array_from_callback(
            shape, sharding,
            [&](const Index& index) {
              std::vector<std::pair<int64_t, int64_t>> bounds;
              for (const Slice& s : index) bounds.emplace_back(s.start, s.stop);
              const nb::tuple block = callback(bounds);
              return host_view(nb::cast<HostBytes>(block[0]), nb::cast<Shape>(block[1]),
                               nb::cast<std::string>(block[2]));
            },
            dtype ? std::optional<DType>(dtype_named(*dtype)) : std::nullopt);
      },
      nb::arg("shape"), nb::arg("sharding"), nb::arg("dtype").none(), nb::arg("callback"));
  m.def("_device_put_array", [](const Array& x, const Sharding& sharding) {
    check_even_split(x.shape(), sharding);  // JAX's device_put refuses an uneven layout
    nb::gil_scoped_release release;
    return device_put(x, sharding);
  });
  // multihost_utils over host values: each releases the GIL while the processes meet.
  m.def("_broadcast_one_to_all",
        [](const HostBytes& bytes, const Shape& shape, const std::string& dtype, bool is_source) {
          return host_collective(bytes, shape, dtype, [&](const HostArray& in) {
            return multihost::broadcast_one_to_all(in, is_source);
          });
        });
  m.def("_process_allgather_host",
        [](const HostBytes& bytes, const Shape& shape, const std::string& dtype, bool tiled) {
          return host_collective(bytes, shape, dtype, [&](const HostArray& local) {
            return multihost::process_allgather(local, tiled);
          });
        });
  m.def("_assert_equal", [](const HostBytes& bytes, const Shape& shape, const std::string& dtype,
                            const std::string& what) {
    const HostArray value = host_view(bytes, shape, dtype);
    nb::gil_scoped_release release;
    multihost::assert_equal(value, what);
  });
  m.def(
      "sync_global_devices", [](const std::string& name) { multihost::sync_global_devices(name); },
      nb::arg("name"), nb::call_guard<nb::gil_scoped_release>());
  // x's addressable shards, in order, as the blocks of an array of `shape` laid out by
  // `sharding` over this process's devices (pmap's per-process result): one copy of each.
  m.def("_addressable_as", [](const Array& x, const Shape& shape, const Sharding& sharding) {
    std::vector<HostArray> blocks;
    for (const Shard& s : x.addressable_shards()) blocks.push_back(s.data);
    nb::gil_scoped_release release;
    return make_array_from_single_device_arrays(shape, sharding, std::move(blocks), x.dtype());
  });
  // jax.make_array_from_single_device_arrays: one one-device Array per addressable device.
  m.def(
      "make_array_from_single_device_arrays",
      [](const Shape& shape, const Sharding& sharding, const std::vector<Array>& arrays,
         const std::optional<std::string>& dtype) {
        std::vector<HostArray> per_device;
        for (const Array& a : arrays) {
          if (a.addressable_shards().size() != 1) {
            throw InvalidArgument(
                "make_array_from_single_device_arrays: each array must be on "
                "one device of this process; got " +
                a.to_string());
          }
          per_device.push_back(a.addressable_data(0));
        }
        nb::gil_scoped_release release;
        return make_array_from_single_device_arrays(
            shape, sharding, std::move(per_device),
            dtype ? std::optional<DType>(dtype_named(*dtype)) : std::nullopt);
      },
      nb::arg("shape"), nb::arg("sharding"), nb::arg("arrays"),
      nb::arg("dtype").none() = nb::none());
}

}  // namespace spmd::python
