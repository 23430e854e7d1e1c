// JSON text for what checkpoints write and send: bytes that are not UTF-8 (in a path, a message,
// a name) are replaced, never thrown on; and the record that says which save of which process
// wrote a marker or holds a lock.
#pragma once

#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/host_id.h"

namespace spmd::checkpoint {

// `j` as compact text (`indent` as nlohmann's dump), never throwing on invalid UTF-8.
inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// {"spmd_save": id, "host", "pid", "since_unix"}: save `save_id` of this process, from now.
inline nlohmann::json saver_record(const std::string& save_id) {
  const auto since = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  return {{"spmd_save", save_id},
          {"host", local_hostname()},
          {"pid", ::getpid()},
          {"since_unix", since}};
}

}  // namespace spmd::checkpoint
