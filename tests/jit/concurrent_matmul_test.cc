// The matrix product kernel is right when 4 threads call it at once from the first call of a
// process: 300 fresh processes of concurrent_matmul_probe. With Debian 12's sequential OpenBLAS
// called unguarded, 20 of 300 probes got a wrong product (kernels/matmul.cc), so the chance that
// all 300 pass with that fault is about 1e-9. Checked both against the threaded OpenBLAS this
// build links and, with LD_LIBRARY_PATH, against the sequential one.
#include <gtest/gtest.h>

#include <string>

#include "support/test_process.h"

namespace {

using namespace std::chrono_literals;

TEST(ConcurrentMatmul, FourThreadsMultiplyingAtOnceFromTheFirstCallAreRight) {
  int wrong = 0;
  std::string first_failure;
  for (int run = 0; run < 300; ++run) {
    spmd::testing::TestProcess probe({SPMD_TEST_MATMUL_PROBE});
    const auto status = probe.wait(60s);
    ASSERT_TRUE(status) << "the probe did not finish: " << probe.output();
    if (status->code != 0) {
      ++wrong;
      if (first_failure.empty()) first_failure = probe.output();
    }
  }
  EXPECT_EQ(wrong, 0) << "of 300 runs; the first: " << first_failure;
}

}  // namespace
