// spmd.sharding: PartitionSpec, AxisType, Mesh, the shardings (Sharding and its NamedSharding,
// SingleDeviceSharding and PositionalSharding), make_mesh and set_mesh, over
// spmd/partition_spec.h, mesh.h, sharding.h and mesh_context.h.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "spmd/mesh.h"
#include "spmd/mesh_context.h"
#include "spmd/sharding.h"

namespace spmd::python {
namespace {

nb::object entry_object(const AxisEntry& e) {
  if (e.axes().empty()) return nb::none();
  if (e.axes().size() == 1) return nb::str(e.axes().front().c_str());
  nb::list axes;
  for (const std::string& a : e.axes()) axes.append(nb::str(a.c_str()));
  return nb::tuple(axes);
}

}  // namespace

void bind_sharding(nb::module_& m) {
  nb::class_<PartitionSpec>(m, "PartitionSpec")
      .def("__init__",
           [](PartitionSpec* self, const nb::args& entries) {
             std::vector<AxisEntry> e;
             for (nb::handle h : entries) e.push_back(axis_entry(h, "PartitionSpec", true));
             new (self) PartitionSpec(PartitionSpec::from_entries(std::move(e)));
           })
      .def("__len__", &PartitionSpec::size)
      // As a tuple of its entries, as JAX's PartitionSpec: negative indices, slices, and
      // Python's own IndexError and TypeError.
      .def("__getitem__",
           [](const PartitionSpec& p, nb::handle index) {
             nb::list entries;
             for (const AxisEntry& e : p.entries()) entries.append(entry_object(e));
             return nb::tuple(entries).attr("__getitem__")(index);
           })
      .def(
          "__eq__", [](const PartitionSpec& a, const PartitionSpec& b) { return a == b; },
          nb::is_operator())
      .def("__repr__", &PartitionSpec::to_string);

  nb::enum_<AxisType>(m, "AxisType")
      .value("Auto", AxisType::kAuto)
      .value("Explicit", AxisType::kExplicit)
      .value("Manual", AxisType::kManual);

  nb::class_<Mesh>(m, "Mesh")
      .def(nb::init<std::vector<Device>, std::vector<int64_t>, std::vector<std::string>,
                    std::vector<AxisType>>(),
           nb::arg("devices"), nb::arg("shape"), nb::arg("axis_names"), nb::arg("axis_types"))
      .def_prop_ro("axis_names", &Mesh::axis_names)
      .def_prop_ro("axis_types", &Mesh::axis_types)
      .def_prop_ro("axis_sizes", &Mesh::axis_sizes)
      .def_prop_ro("devices", &Mesh::devices)
      .def(
          "__eq__", [](const Mesh& a, const Mesh& b) { return a == b; }, nb::is_operator())
      .def("__repr__", &Mesh::to_string);

  // What every sharding answers (jax.sharding.Sharding's interface).
  nb::class_<Sharding>(m, "Sharding")
      .def("devices_indices_map",
           [](const Sharding& s, const Shape& shape) {
             nb::dict out;
             for (const DeviceIndex& d : s.devices_indices_map(shape)) {
               out[nb::cast(d.device)] = index_tuple(d.index, shape);
             }
             return out;
           })
      .def("shard_shape",
           [](const Sharding& s, const Shape& shape) { return shape_tuple(s.shard_shape(shape)); })
      .def_prop_ro("_device_assignment", &Sharding::device_assignment)
      .def_prop_ro("addressable_devices", [](const Sharding& s) { return s.addressable_devices(); })
      .def_prop_ro("is_fully_addressable",
                   [](const Sharding& s) { return s.is_fully_addressable(); })
      .def_prop_ro("is_fully_replicated", &Sharding::is_fully_replicated)
      .def_prop_ro("num_devices", &Sharding::num_devices)
      .def("__repr__", &Sharding::to_string);

  nb::class_<NamedSharding, Sharding>(m, "NamedSharding")
      .def(nb::init<Mesh, PartitionSpec>(), nb::arg("mesh"), nb::arg("spec"))
      .def_prop_ro("mesh", &NamedSharding::mesh)
      .def_prop_ro("spec", &NamedSharding::spec)
      .def(
          "__eq__",
          [](const NamedSharding& a, const NamedSharding& b) {
            return a.mesh() == b.mesh() && a.spec() == b.spec();
          },
          nb::is_operator());

  nb::class_<SingleDeviceSharding, Sharding>(m, "SingleDeviceSharding")
      .def(nb::init<Device>(), nb::arg("device"))
      .def(
          "__eq__",
          [](const SingleDeviceSharding& a, const SingleDeviceSharding& b) {
            return a.device_assignment() == b.device_assignment();
          },
          nb::is_operator());

  nb::class_<PositionalSharding, Sharding>(m, "PositionalSharding")
      .def(nb::init<std::vector<Device>, Shape>(), nb::arg("devices"), nb::arg("shape"))
      .def_prop_ro("shape", [](const PositionalSharding& s) { return shape_tuple(s.shape()); })
      .def("reshape", &PositionalSharding::reshape, nb::arg("shape"))
      .def("replicate", &PositionalSharding::replicate, nb::arg("axis"))
      .def(
          "__eq__",
          [](const PositionalSharding& a, const PositionalSharding& b) {
            const size_t rank = a.shape().size();
            return a.device_assignment() == b.device_assignment() && a.shape() == b.shape() &&
                   a.shard_counts(rank) == b.shard_counts(rank);
          },
          nb::is_operator());

  m.def(
      "make_mesh",
      [](const std::vector<int64_t>& shape, std::vector<std::string> names,
         const std::optional<std::vector<AxisType>>& types,
         const std::optional<std::vector<Device>>& devices) {
        std::vector<AxisType> axis_types = types.value_or(std::vector<AxisType>{});
        if (devices) return make_mesh(shape, std::move(names), std::move(axis_types), *devices);
        return make_mesh(shape, std::move(names), std::move(axis_types));
      },
      nb::arg("axis_shapes"), nb::arg("axis_names"), nb::arg("axis_types") = nb::none(),
      nb::kw_only(), nb::arg("devices") = nb::none());
  m.def(
      "_set_mesh", [](std::optional<Mesh> mesh) { set_mesh(std::move(mesh)); },
      nb::arg("mesh").none());
  m.def("get_mesh", &get_mesh);
}

}  // namespace spmd::python
