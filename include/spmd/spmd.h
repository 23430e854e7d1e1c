// spmd: JAX's multi-process, multi-host programming model in C++20. Include this one header.
#pragma once

#include "spmd/coordination_client.h"
#include "spmd/device.h"
#include "spmd/distributed.h"
#include "spmd/error.h"
