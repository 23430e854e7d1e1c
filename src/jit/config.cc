// The process-wide switches (config.h).
#include "spmd/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <string>

namespace spmd::config {
namespace {

std::atomic<bool> x64{false};
std::once_flag from_environment;

// JAX's reading of a boolean environment variable.
bool parse_flag(const char* name, const char* text) {
  std::string v(text);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* yes : {"1", "true", "yes", "on", "t", "y"}) {
    if (v == yes) return true;
  }
  for (const char* no : {"0", "false", "no", "off", "f", "n", ""}) {
    if (v == no) return false;
  }
  throw InvalidArgument(fmt::format(
      "{}='{}' is not a boolean: use 1, true, yes or on to enable x64, 0, false, no or off to "
      "leave it off",
      name, text));
}

void read_environment() {
  std::call_once(from_environment, [] {
    for (const char* name : {"JAX_ENABLE_X64", "SPMD_ENABLE_X64"}) {
      if (const char* v = std::getenv(name)) x64 = parse_flag(name, v);
    }
  });
}

}  // namespace

bool x64_enabled() {
  read_environment();
  return x64.load(std::memory_order_relaxed);
}

void set_x64_enabled(bool on) {
  read_environment();  // a later first read must not overwrite the value set here
  x64 = on;
}

DType canonical_dtype(DType t) {
  if (x64_enabled()) return t;
  switch (t) {
    case DType::kInt64:
      return DType::kInt32;
    case DType::kUInt64:
      return DType::kUInt32;
    case DType::kFloat64:
      return DType::kFloat32;
    default:
      return t;
  }
}

DType default_float_dtype() { return canonical_dtype(DType::kFloat64); }
DType default_int_dtype() { return canonical_dtype(DType::kInt64); }

}  // namespace spmd::config
