// The SIGBUS guard (runtime/bus_error_guard.h) over a real file truncated under its mapping.
#include "runtime/bus_error_guard.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stdexcept>

namespace spmd {
namespace {

// A two-page shared mapping of a memfd, truncated to nothing: reading it raises SIGBUS.
class TruncatedMapping {
 public:
  TruncatedMapping() {
    fd_ = ::memfd_create("bus-error-guard-test", MFD_CLOEXEC);
    EXPECT_EQ(::ftruncate(fd_, 8192), 0);
    p_ = static_cast<volatile char*>(
        ::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0));
    EXPECT_EQ(::ftruncate(fd_, 0), 0);
  }
  ~TruncatedMapping() {
    ::munmap(const_cast<char*>(p_), 8192);
    ::close(fd_);
  }
  char read() const { return p_[4096]; }

 private:
  int fd_ = -1;
  volatile char* p_ = nullptr;
};

TEST(BusErrorGuard, ASigbusInsideIsAFalseReturnAndTheThreadGoesOn) {
  TruncatedMapping gone;
  int reached = 0;
  EXPECT_FALSE(catching_bus_errors([&] {
    reached = 1;
    (void)gone.read();
    reached = 2;
  }));
  EXPECT_EQ(reached, 1);
  EXPECT_TRUE(catching_bus_errors([&] { reached = 3; }));
  EXPECT_EQ(reached, 3);
}

TEST(BusErrorGuard, GuardsNestAndTheInnerOneCatchesItsOwn) {
  TruncatedMapping gone;
  bool inner = true;
  const bool outer =
      catching_bus_errors([&] { inner = catching_bus_errors([&] { (void)gone.read(); }); });
  EXPECT_TRUE(outer);
  EXPECT_FALSE(inner);
  EXPECT_FALSE(catching_bus_errors([&] { (void)gone.read(); }));
}

TEST(BusErrorGuard, AnExceptionPassesThroughAndLeavesTheOuterGuardInCharge) {
  EXPECT_THROW(catching_bus_errors([] { throw std::runtime_error("through"); }),
               std::runtime_error);
  // Had the inner guard stayed set after its exception, the SIGBUS would resume in its dead
  // frame instead of returning false from the outer one.
  TruncatedMapping gone;
  bool caught = false;
  bool after = false;
  const bool outer = catching_bus_errors([&] {
    try {
      catching_bus_errors([] { throw std::runtime_error("inner"); });
    } catch (const std::runtime_error&) {
      caught = true;
    }
    (void)gone.read();
    after = true;
  });
  EXPECT_FALSE(outer);
  EXPECT_TRUE(caught);
  EXPECT_FALSE(after);
}

}  // namespace
}  // namespace spmd
