// comm/gpu/nccl_status.h: each NCCL status as the spmd error its cause calls for, naming the
// call, the GPU and the process. Runs on the CPU (NCCL's error strings need no GPU).
#include "comm/gpu/nccl_status.h"

#include <gtest/gtest.h>
#include <nccl.h>

#include <string>

#include "comm/gpu/nccl_communicator.h"
#include "spmd/error.h"

namespace spmd {
namespace {

template <class E>
std::string thrown(ncclResult_t code) {
  try {
    check_nccl(code, "ncclAllReduce (rank 1 of 4)", 2, "peer 3 closed the connection");
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong class for status " << code << ": " << e.what();
    return "";
  }
  ADD_FAILURE() << "nothing thrown for status " << code;
  return "";
}

TEST(NcclStatus, EachStatusIsTheErrorItsCauseCallsFor) {
  const std::string remote = thrown<PeerFailure>(ncclRemoteError);
  EXPECT_NE(remote.find("ncclAllReduce (rank 1 of 4) failed on GPU 2 of pid "), std::string::npos)
      << remote;
  EXPECT_NE(remote.find("peer 3 closed the connection"), std::string::npos) << remote;
  EXPECT_NE(remote.find("restart the job from its last checkpoint"), std::string::npos) << remote;
  thrown<PeerFailure>(ncclSystemError);
  thrown<InvalidArgument>(ncclInvalidArgument);
  thrown<InvalidArgument>(ncclInvalidUsage);
  const std::string internal = thrown<Error>(ncclInternalError);
  EXPECT_NE(internal.find("NCCL_DEBUG=WARN"), std::string::npos) << internal;
  EXPECT_NO_THROW(check_nccl(ncclSuccess, "ncclAllReduce", 0));
  EXPECT_NO_THROW(check_nccl(ncclInProgress, "ncclCommInitRankConfig", 0));
}

TEST(NcclStatus, TheLoadedNcclIsTheOneBuiltAgainst) {
  EXPECT_EQ(nccl_version(), std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." +
                                std::to_string(NCCL_PATCH));
}

}  // namespace
}  // namespace spmd
