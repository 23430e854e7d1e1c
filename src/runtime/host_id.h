// Identifying the machine a process runs on. Processes with equal host ids share memory.
#pragma once

#include <string>

#include "cluster/env_reader.h"

namespace spmd {

// The machine's hostname ("unknown-host" if it cannot be read).
std::string local_hostname();

// SPMD_HOST_ID when set (lets processes of one machine act as separate hosts), else the
// hostname plus the kernel's boot id, so that two containers with one hostname on different
// machines, or one machine rebooted, never look alike.
std::string local_host_id(const EnvReader& env);

}  // namespace spmd
