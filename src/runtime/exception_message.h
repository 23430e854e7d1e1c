// The text of a caught exception, for errors that report another thread's or step's failure
// ("device 3 failed: …"). Header-only; thread-safe.
#pragma once

#include <exception>
#include <string>

namespace spmd {

// what() of the exception `error` holds, or a placeholder for one not derived from
// std::exception.
inline std::string exception_message(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "a non-standard exception";
  }
}

}  // namespace spmd
