#include "cluster/env_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "spmd/error.h"

namespace spmd {

EnvReader::EnvReader()
    : lookup_([](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        if (v == nullptr) return std::nullopt;
        return std::string(v);
      }) {}

std::optional<std::string> EnvReader::get(const std::string& name) const { return lookup_(name); }

int parse_int(const std::string& text, const std::string& what, int min, int max) {
  long long value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < min || value > max) {
    throw InvalidArgument(fmt::format("{}='{}' is not an integer in {}..{}", what, text, min, max));
  }
  return static_cast<int>(value);
}

std::optional<int> EnvReader::get_int(const std::string& name, int min, int max) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  return parse_int(*v, name, min, max);
}

int EnvReader::require_int(const std::string& name, int min, int max,
                           const std::string& context) const {
  auto v = get_int(name, min, max);
  if (!v) throw InvalidArgument(fmt::format("{}: {} is not set", context, name));
  return *v;
}

std::optional<std::vector<int>> EnvReader::get_int_list(const std::string& name, int min,
                                                        int max) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  std::vector<int> out;
  size_t start = 0;
  while (true) {
    const size_t comma = v->find(',', start);
    const std::string item = v->substr(start, comma == std::string::npos ? comma : comma - start);
    try {
      out.push_back(parse_int(item, name, min, max));
    } catch (const InvalidArgument&) {
      throw InvalidArgument(
          fmt::format("{}='{}' is not a comma-separated list of integers in {}..{} (e.g. '0,1')",
                      name, *v, min, max));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::optional<std::chrono::milliseconds> EnvReader::get_seconds(const std::string& name) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  const double seconds = std::strtod(v->c_str(), &end);
  if (v->empty() || end != v->c_str() + v->size() || !(seconds > 0) || seconds > 1e7) {
    throw InvalidArgument(
        fmt::format("{}='{}' is not a positive number of seconds (e.g. 2 or 0.5)", name, *v));
  }
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

std::optional<bool> EnvReader::get_bool(const std::string& name) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  std::string lower = *v;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (lower == "1" || lower == "true" || lower == "yes") return true;
  if (lower == "0" || lower == "false" || lower == "no" || lower.empty()) return false;
  throw InvalidArgument(fmt::format("{}='{}' is not a boolean (1/0, true/false)", name, *v));
}

}  // namespace spmd
