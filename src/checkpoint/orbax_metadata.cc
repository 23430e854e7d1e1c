#include "checkpoint/orbax_metadata.h"

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "checkpoint/json_text.h"
#include "checkpoint/names.h"

namespace spmd::checkpoint {
namespace {

using json = nlohmann::json;

constexpr const char* kHandler =
    "orbax.checkpoint._src.handlers.standard_checkpoint_handler.StandardCheckpointHandler";
constexpr int kSequenceKey = 1;
constexpr int kDictKey = 2;

std::string base64(const std::string& bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kDigits[(v >> s) & 63];
  }
  if (i < bytes.size()) {
    const bool two = i + 1 < bytes.size();
    const uint32_t v = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (two ? static_cast<uint8_t>(bytes[i + 1]) << 8 : 0);
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += two ? kDigits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// A key path as Python prints the tuple Orbax keys _METADATA's entries by: ('layers', 'w').
std::string python_tuple(const std::vector<std::string>& keys) {
  std::string out = "(";
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out += ", ";
    out += '\'';
    for (char c : keys[i]) {
      if (c == '\'' || c == '\\') out += '\\';
      out += c;
    }
    out += '\'';
  }
  return out + (keys.size() == 1 ? ",)" : ")");
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string orbax_sharding(const Sharding& sharding) {
  const auto* named = dynamic_cast<const NamedSharding*>(&sharding);
  if (named == nullptr) return "";
  json spec = json::array();
  for (const auto& entry : named->spec().entries()) {
    const auto& axes = entry.axes();
    if (axes.empty()) {
      spec.push_back(nullptr);
    } else if (axes.size() == 1) {
      spec.push_back(axes[0]);
    } else {
      spec.push_back(axes);
    }
  }
  const json j = {{"sharding_type", "NamedSharding"},
                  {"shape", named->mesh().axis_sizes()},
                  {"axis_names", named->mesh().axis_names()},
                  {"partition_spec", spec}};
  return json_text(j);
}

std::string orbax_tree_metadata(const CheckpointRecord& record) {
  json tree = json::object();
  for (const auto& [name, array] : record.arrays) {
    const auto keys = name_components(name);
    json key_metadata = json::array();
    std::string parent;
    for (const auto& k : keys) {
      const bool sequence = record.sequence_nodes.count(parent) > 0;
      key_metadata.push_back({{"key", k}, {"key_type", sequence ? kSequenceKey : kDictKey}});
      if (!parent.empty()) parent += '/';
      parent += k;
    }
    tree[python_tuple(keys)] = {{"key_metadata", key_metadata},
                                {"value_metadata",
                                 {{"value_type", "jax.Array"},
                                  {"skip_deserialize", false},
                                  {"write_shape", array.chunks}}}};
  }
  const json j = {{"tree_metadata", tree},
                  {"use_ocdbt", false},
                  {"use_zarr3", false},
                  {"store_array_data_equal_to_fill_value", true},
                  {"custom_metadata", nullptr}};
  return json_text(j);
}

std::string orbax_sharding_file(const CheckpointRecord& record) {
  json j = json::object();
  for (const auto& [name, array] : record.arrays) {
    if (!array.orbax_sharding.empty()) {
      j[base64(array_path(name, Format::kOrbax)[0])] = array.orbax_sharding;
    }
  }
  return json_text(j);
}

std::string orbax_step_metadata(const CheckpointRecord& record) {
  json metrics = json::object();
  for (const auto& [k, v] : record.metadata.metrics) {
    if (std::isfinite(v)) metrics[k] = v;
  }
  const int64_t now = now_ns();
  const json j = {{"item_handlers", kHandler},
                  {"metrics", metrics},
                  {"performance_metrics", json::object()},
                  {"init_timestamp_nsecs", now},
                  {"commit_timestamp_nsecs", now},
                  {"custom_metadata", record.metadata.user}};
  return json_text(j);
}

std::string orbax_commit_text(const std::string& final_path) {
  return "Checkpoint commit was successful to " + final_path;
}

}  // namespace spmd::checkpoint
