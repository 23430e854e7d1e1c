// spmd: JAX's multi-process, multi-host programming model in C++20. Include this one header.
#pragma once

#include "spmd/array.h"
#include "spmd/communicator.h"
#include "spmd/coordination_client.h"
#include "spmd/device.h"
#include "spmd/distributed.h"
#include "spmd/dtype.h"
#include "spmd/error.h"
#include "spmd/host_array.h"
#include "spmd/mesh.h"
#include "spmd/mesh_utils.h"
#include "spmd/multihost.h"
#include "spmd/partition_spec.h"
#include "spmd/sharding.h"
