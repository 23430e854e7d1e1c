// An EnvReader over a fixed map, so environment detection is tested without touching the
// process environment.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "cluster/env_reader.h"

namespace spmd::testing {

inline EnvReader env_of(const std::map<std::string, std::string>& vars) {
  return EnvReader([vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

}  // namespace spmd::testing
