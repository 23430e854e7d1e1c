// Reading and validating environment variables. Every parse error names the variable, its value
// and what was expected. The lookup function is injectable so detection is testable without
// touching the process environment. Thread-safe as long as the lookup is.
#pragma once

#include <chrono>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace spmd {

// The widest upper bound for get_int and require_int: any non-negative int.
inline constexpr int kMaxInt = std::numeric_limits<int>::max();

class EnvReader {
 public:
  using Lookup = std::function<std::optional<std::string>(const std::string& name)>;

  // Reads the real process environment.
  EnvReader();
  explicit EnvReader(Lookup lookup) : lookup_(std::move(lookup)) {}

  // The variable's value; nullopt when unset. An empty value counts as set.
  std::optional<std::string> get(const std::string& name) const;
  bool has(const std::string& name) const { return get(name).has_value(); }

  // An integer in [min, max]; throws InvalidArgument otherwise.
  std::optional<int> get_int(const std::string& name, int min, int max) const;
  // Like get_int, but the variable must be set: otherwise InvalidArgument saying
  // "`context`: NAME is not set" (context names the launcher and what to do).
  int require_int(const std::string& name, int min, int max, const std::string& context) const;
  // Comma-separated integers, each in [min, max], e.g. "0,2,3".
  std::optional<std::vector<int>> get_int_list(const std::string& name, int min, int max) const;
  // A duration in seconds, fractions allowed ("2", "0.5"), positive.
  std::optional<std::chrono::milliseconds> get_seconds(const std::string& name) const;
  // "1", "true", "yes" or "0", "false", "no" (any case).
  std::optional<bool> get_bool(const std::string& name) const;

 private:
  Lookup lookup_;
};

// Parses a decimal integer in [min, max]; throws InvalidArgument naming `what` and `text`.
int parse_int(const std::string& text, const std::string& what, int min, int max);

}  // namespace spmd
