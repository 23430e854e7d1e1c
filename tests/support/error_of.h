// The message of the exception of type E (spmd::Error unless named) that f throws, or "no error"
// when it throws none: what a test compares with the error a user would read.
#pragma once

#include <string>
#include <utility>

#include "spmd/error.h"

namespace spmd::testing {

template <class E = Error, class F>
std::string error_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace spmd::testing
