// Comparing a presented auth token with the job's.
#pragma once

#include <string>

namespace spmd {

// Constant time in the common length, so the comparison leaks nothing but the length.
bool tokens_equal(const std::string& a, const std::string& b);

}  // namespace spmd
