// spmd.distributed and the device queries, over spmd/distributed.h and spmd/runtime.h.
#include <fmt/format.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>

#include "bindings.h"
#include "spmd/config.h"
#include "spmd/coordination_client.h"
#include "spmd/distributed.h"
#include "spmd/runtime.h"

namespace spmd::python {
namespace {

// `s` seconds as milliseconds; InvalidArgument naming `what` for NaN, an infinity or more
// milliseconds than int64 holds (a cast of those was undefined: NaN read as -2^63 ms).
std::chrono::milliseconds seconds(const char* what, double s) {
  constexpr double kLimit = 9.2e18;  // below 2^63 - 1 milliseconds
  if (!std::isfinite(s) || std::abs(s * 1000) >= kLimit) {
    throw InvalidArgument(fmt::format("{} must be a finite number of seconds, got {}", what, s));
  }
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
}

// jax.distributed.initialize's keywords (and spmd's num_cpu_devices and
// cpu_threads_per_device); the GIL is released while
// the processes meet.
void initialize(std::optional<std::string> coordinator_address, std::optional<int> num_processes,
                std::optional<int> process_id, std::optional<std::vector<int>> local_device_ids,
                std::optional<std::string> cluster_detection_method, double initialization_timeout,
                std::optional<int> num_cpu_devices, std::optional<int> cpu_threads_per_device) {
  distributed::Options o;
  o.coordinator_address = std::move(coordinator_address);
  o.num_processes = num_processes;
  o.process_id = process_id;
  o.local_device_ids = std::move(local_device_ids);
  o.cluster_detection_method = std::move(cluster_detection_method);
  o.initialization_timeout = seconds("initialize: initialization_timeout", initialization_timeout);
  o.num_cpu_devices = num_cpu_devices;
  o.cpu_threads_per_device = cpu_threads_per_device;
  nb::gil_scoped_release release;
  distributed::initialize(o);
}

// jax.distributed's client (JAX's DistributedRuntimeClient names): the key-value store and
// barriers. Every call that waits releases the GIL.
void bind_client(nb::module_& d) {
  using distributed::Client;
  using std::chrono::milliseconds;
  nb::class_<Client>(d, "Client")
      .def("key_value_set", &Client::key_value_set, nb::arg("key"), nb::arg("value"),
           nb::arg("allow_overwrite") = false, nb::call_guard<nb::gil_scoped_release>())
      .def(
          "blocking_key_value_get",
          [](Client& c, const std::string& key, int64_t timeout_in_ms) {
            return c.blocking_key_value_get(key, milliseconds(timeout_in_ms));
          },
          nb::arg("key"), nb::arg("timeout_in_ms"), nb::call_guard<nb::gil_scoped_release>())
      .def("key_value_try_get", &Client::key_value_try_get, nb::arg("key"),
           nb::call_guard<nb::gil_scoped_release>())
      .def("key_value_dir_get", &Client::key_value_dir_get, nb::arg("key"),
           nb::call_guard<nb::gil_scoped_release>())
      .def("key_value_delete", &Client::key_value_delete, nb::arg("key"),
           nb::call_guard<nb::gil_scoped_release>())
      .def("key_value_increment", &Client::key_value_increment, nb::arg("key"),
           nb::arg("increment"), nb::call_guard<nb::gil_scoped_release>())
      .def(
          "wait_at_barrier",
          [](Client& c, const std::string& barrier_id, int64_t timeout_in_ms,
             const std::optional<std::vector<int>>& process_ids) {
            c.wait_at_barrier(barrier_id, milliseconds(timeout_in_ms),
                              process_ids.value_or(std::vector<int>{}));
          },
          nb::arg("barrier_id"), nb::arg("timeout_in_ms"),
          nb::arg("process_ids").none() = nb::none(), nb::call_guard<nb::gil_scoped_release>())
      .def("get_live_nodes", &Client::get_live_processes, nb::call_guard<nb::gil_scoped_release>());
  // A copy sharing the connection: after shutdown() its calls fail instead of dangling.
  d.def("client", [] { return distributed::client(); });
}

}  // namespace

void bind_runtime(nb::module_& m) {
  nb::class_<Device>(m, "Device")
      .def_prop_ro("id", &Device::id)
      .def_prop_ro("process_index", &Device::process_index)
      .def_prop_ro("platform", &Device::platform)
      .def_prop_ro("device_kind", &Device::device_kind)
      .def_prop_ro("local_hardware_id", &Device::local_hardware_id)
      .def(
          "__eq__", [](const Device& a, const Device& b) { return a == b; }, nb::is_operator())
      .def("__hash__", [](const Device& d) { return d.id(); })
      .def("__repr__", &Device::to_string);

  nb::module_ d = m.def_submodule("distributed", "jax.distributed");
  d.def("initialize", &initialize, nb::arg("coordinator_address") = nb::none(),
        nb::arg("num_processes") = nb::none(), nb::arg("process_id") = nb::none(),
        nb::arg("local_device_ids") = nb::none(), nb::arg("cluster_detection_method") = nb::none(),
        nb::arg("initialization_timeout") = 300.0, nb::arg("num_cpu_devices") = nb::none(),
        nb::arg("cpu_threads_per_device") = nb::none());
  d.def("shutdown", [] {
    nb::gil_scoped_release release;
    distributed::shutdown();
  });
  d.def("is_initialized", &distributed::is_initialized);
  bind_client(d);

  m.def("_x64_enabled", &spmd::config::x64_enabled);
  m.def("_set_x64_enabled", &spmd::config::set_x64_enabled);
  m.def("devices", [] { return devices(); });
  m.def("local_devices", [] { return local_devices(); });
  m.def("device_count", &device_count);
  m.def("local_device_count", &local_device_count);
  m.def("process_index", [] { return process_index(); });
  m.def("process_count", &process_count);
}

}  // namespace spmd::python
