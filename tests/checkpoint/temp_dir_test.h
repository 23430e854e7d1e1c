// What the checkpoint tests of one process share: a fresh directory per test, removed after it,
// and the message of the exception a call is expected to throw.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/error_of.h"

namespace spmd::checkpoint {

// A test with root_, an empty directory of its own (named for the process and the test).
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    root_ = std::filesystem::temp_directory_path() /
            ("spmd-ckpt-" + std::to_string(::getpid()) + "-" + test);
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::filesystem::path root_;
};

using spmd::testing::error_of;

}  // namespace spmd::checkpoint
