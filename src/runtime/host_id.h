// Identifying the machine a process runs on. Processes with equal host ids share memory.
#pragma once

#include <string>

#include "cluster/env_reader.h"

namespace spmd {

// The machine's hostname ("unknown-host" if it cannot be read), as UTF-8: bytes that are not are
// escaped (\xff), since the coordination protocol carries it as text.
std::string local_hostname();

// SPMD_HOST_ID when set (lets processes of one machine act as separate hosts), else the
// hostname plus the kernel's boot id, so that two containers with one hostname on different
// machines, or one machine rebooted, never look alike. InvalidArgument for an SPMD_HOST_ID that is
// not valid UTF-8.
std::string local_host_id(const EnvReader& env);

}  // namespace spmd
