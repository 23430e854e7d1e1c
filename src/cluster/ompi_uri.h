// Reading Open MPI 4's OMPI_MCA_orte_hnp_uri, e.g.
//   "1531576320.0;tcp://10.96.0.1,10.148.0.1:34911"
//   "1314521088.0;tcp6://[fe80::b9b:ac5d:9cf0:b858,2620:10d:c083:150e::3000:2]:43370"
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace spmd {

struct OrteUri {
  uint64_t job_id = 0;  // the part before '.'
  std::string host;     // the launcher's first address; IPv6 without brackets
};

// Throws InvalidArgument naming OMPI_MCA_orte_hnp_uri and its value when it has no job id or no
// tcp:// / tcp6:// address.
OrteUri parse_orte_uri(std::string_view uri);

}  // namespace spmd
