// The UCX transport's entry points in a build without UCX (ucx_transport.h).
#include "comm/ucx_transport.h"
#include "spmd/error.h"

namespace spmd {

bool ucx_built() { return false; }

std::string ucx_summary() { return "UCX absent from this build"; }

std::string ucx_settings(UcxReach /*reach*/) { return ""; }

bool ucx_has_fabric() { return false; }

std::shared_ptr<UcxWorker> open_ucx_worker(UcxReach /*reach*/) {
  throw FailedPrecondition(
      "this build of spmd has no UCX transport (libucx-dev was not found when it was built): "
      "install libucx-dev and rebuild, or use SPMD_TRANSPORT=auto or tcp");
}

}  // namespace spmd
