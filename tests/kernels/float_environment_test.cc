// kernels::FlushSubnormalsScope (kernels/float_environment.h): inside, a subnormal reads as zero
// and a subnormal result is zero; after, the thread's own mode is back.
#include "kernels/float_environment.h"

#include <gtest/gtest.h>

#include <limits>

namespace {

using spmd::kernels::FlushSubnormalsScope;

// Through volatile, so the compiler cannot fold the arithmetic at compile time.
float product(float a, float b) {
  volatile float x = a;
  volatile float y = b;
  return x * y;
}

TEST(FloatEnvironment, SubnormalsFlushInsideTheScopeAndNotAfter) {
#if defined(__x86_64__) || defined(__aarch64__)
  const float tiny = std::numeric_limits<float>::min();
  const float subnormal = std::numeric_limits<float>::denorm_min();
  ASSERT_GT(product(tiny, 0.5f), 0.0f) << "the thread already flushes subnormals";
  {
    const FlushSubnormalsScope flush;
    EXPECT_EQ(product(tiny, 0.5f), 0.0f);       // a subnormal result is zero
    EXPECT_EQ(product(subnormal, 2.0f), 0.0f);  // a subnormal operand reads as zero
    {
      const FlushSubnormalsScope nested;  // already set: leaves it so on exit
    }
    EXPECT_EQ(product(tiny, 0.5f), 0.0f);
  }
  EXPECT_GT(product(tiny, 0.5f), 0.0f);
  EXPECT_GT(product(subnormal, 2.0f), 0.0f);
#else
  GTEST_SKIP() << "no flush-to-zero control on this processor";
#endif
}

}  // namespace
