// The _spmd extension module (nanobind) behind the `spmd` Python package: one bind_* function
// per part of the C++ API, each a thin layer over it (python/spmd/ holds the Python side).
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "spmd/dtype.h"

namespace spmd::python {

namespace nb = nanobind;

// spmd's error classes as Python exceptions (spmd.errors), and the translation of C++ throws.
void bind_errors(nb::module_& m);
// distributed.initialize/shutdown, Device and the device queries.
void bind_runtime(nb::module_& m);
// PartitionSpec, AxisType, Mesh, NamedSharding, make_mesh, set_mesh.
void bind_sharding(nb::module_& m);
// Array: from and to NumPy arrays, device_put, reshard.
void bind_array(nb::module_& m);
// Tensor (a traced value), spmd::numpy over Tensors, jit's core and vjp.
void bind_trace(nb::module_& m);
// spmd::random on raw keys, Arrays and Tensors.
void bind_random(nb::module_& m);
// spmd::optim's transformations over dicts (spmd.optax).
void bind_optim(nb::module_& m);

// NumPy's name of a dtype ("float32", "bfloat16", …) and back; InvalidArgument for an unknown
// name.
std::string numpy_name(DType dtype);
DType dtype_named(const std::string& name);

}  // namespace spmd::python
