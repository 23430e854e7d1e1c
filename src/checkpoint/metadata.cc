// Encoding and validating spmd_checkpoint.json, and writing .zarray.
#include "checkpoint/metadata.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "checkpoint/names.h"
#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

using json = nlohmann::json;

// Shapes beyond this many elements per dimension are not a checkpoint this library wrote.
constexpr int64_t kMaxExtent = int64_t{1} << 48;
constexpr size_t kMaxRank = 32;

const char* compression_name(Compression c) { return c == Compression::kZstd ? "zstd" : "none"; }

[[noreturn]] void malformed(const std::string& file, const std::string& what) {
  throw Error(fmt::format("checkpoint: {} is malformed: {}", file, what));
}

const json& field(const json& object, const char* key, const std::string& file,
                  const std::string& where) {
  if (!object.is_object() || !object.contains(key)) {
    malformed(file, fmt::format("{} has no \"{}\"", where, key));
  }
  return object.at(key);
}

Shape shape_field(const json& j, const std::string& file, const std::string& where,
                  int64_t minimum) {
  if (!j.is_array() || j.size() > kMaxRank) {
    malformed(file, where + " is not a list of at most 32 integers");
  }
  Shape out;
  for (const auto& v : j) {
    if (!v.is_number_integer() || v.get<int64_t>() < minimum || v.get<int64_t>() > kMaxExtent) {
      malformed(file,
                fmt::format("{} holds {}, not an integer in [{}, 2^48]", where, v.dump(), minimum));
    }
    out.push_back(v.get<int64_t>());
  }
  return out;
}

}  // namespace

std::vector<int64_t> chunk_grid(const ArrayRecord& array) {
  std::vector<int64_t> grid;
  for (size_t d = 0; d < array.shape.size(); ++d) {
    grid.push_back((array.shape[d] + array.chunks[d] - 1) / array.chunks[d]);
  }
  return grid;
}

std::string encode_record(const CheckpointRecord& record) {
  json arrays = json::object();
  for (const auto& [name, a] : record.arrays) {
    arrays[name] = {{"dtype", std::string(dtype_name(a.dtype))},
                    {"shape", a.shape},
                    {"chunks", a.chunks},
                    {"compressor", compression_name(a.compression)},
                    {"sharding", a.sharding},
                    {"checksums", a.checksums}};
  }
  json meta = {{"metrics", record.metadata.metrics}, {"user", record.metadata.user}};
  if (record.metadata.step) meta["step"] = *record.metadata.step;
  const json doc = {
      {"format", "spmd-checkpoint"}, {"version", 1}, {"arrays", arrays}, {"metadata", meta}};
  return doc.dump(1);
}

CheckpointRecord decode_record(const std::string& text, const std::string& file) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) malformed(file, "not JSON");
  const json& format = field(doc, "format", file, "the document");
  if (format != "spmd-checkpoint") malformed(file, "\"format\" is not \"spmd-checkpoint\"");
  const json& version = field(doc, "version", file, "the document");
  if (version != 1) malformed(file, fmt::format("version {} is not 1", version.dump()));
  CheckpointRecord out;
  const json& arrays = field(doc, "arrays", file, "the document");
  if (!arrays.is_object()) malformed(file, "\"arrays\" is not an object");
  for (const auto& [name, a] : arrays.items()) {
    try {
      name_components(name);
    } catch (const InvalidArgument& e) {
      malformed(file, e.what());
    }
    const std::string where = "array \"" + name + "\"";
    ArrayRecord r;
    const json& dtype = field(a, "dtype", file, where);
    if (!dtype.is_string()) malformed(file, where + ": dtype is not a string");
    try {
      r.dtype = dtype_from_name(dtype.get<std::string>());
    } catch (const InvalidArgument& e) {
      malformed(file, where + ": " + e.what());
    }
    r.shape = shape_field(field(a, "shape", file, where), file, where + " shape", 0);
    r.chunks = shape_field(field(a, "chunks", file, where), file, where + " chunks", 1);
    if (r.chunks.size() != r.shape.size())
      malformed(file, where + ": chunks and shape differ in rank");
    const json& compressor = field(a, "compressor", file, where);
    if (compressor == "zstd") {
      r.compression = Compression::kZstd;
    } else if (compressor == "none") {
      r.compression = Compression::kNone;
    } else {
      malformed(file, where + ": compressor is neither \"zstd\" nor \"none\"");
    }
    if (a.contains("sharding") && a.at("sharding").is_string()) r.sharding = a.at("sharding");
    const json& sums = field(a, "checksums", file, where);
    if (!sums.is_object()) malformed(file, where + ": checksums is not an object");
    const auto grid = chunk_grid(r);
    for (const auto& [key, sum] : sums.items()) {
      try {
        parse_chunk_key(key, grid);
      } catch (const InvalidArgument& e) {
        malformed(file, where + ": " + e.what());
      }
      if (!sum.is_string()) malformed(file, where + ": a checksum is not a string");
      r.checksums[key] = sum.get<std::string>();
    }
    out.arrays.emplace(name, std::move(r));
  }
  if (doc.contains("metadata") && doc.at("metadata").is_object()) {
    const json& m = doc.at("metadata");
    if (m.contains("step") && m.at("step").is_number_integer()) {
      out.metadata.step = m.at("step").get<int64_t>();
    }
    if (m.contains("metrics") && m.at("metrics").is_object()) {
      for (const auto& [k, v] : m.at("metrics").items()) {
        if (v.is_number()) out.metadata.metrics[k] = v.get<double>();
      }
    }
    if (m.contains("user") && m.at("user").is_object()) {
      for (const auto& [k, v] : m.at("user").items()) {
        if (v.is_string()) out.metadata.user[k] = v.get<std::string>();
      }
    }
  }
  return out;
}

std::string zarray_json(const ArrayRecord& array) {
  json compressor = nullptr;
  if (array.compression == Compression::kZstd) compressor = {{"id", "zstd"}, {"level", 1}};
  json fill = 0;
  if (array.dtype == DType::kBool) fill = false;
  if (is_floating(array.dtype) && array.dtype != DType::kBFloat16) fill = 0.0;
  const json z = {{"zarr_format", 2},
                  {"shape", array.shape},
                  {"chunks", array.chunks},
                  {"dtype", zarr_dtype(array.dtype)},
                  {"compressor", compressor},
                  {"fill_value", fill},
                  {"order", "C"},
                  {"filters", nullptr},
                  {"dimension_separator", "."}};
  return z.dump(1);
}

std::string zattrs_json(const ArrayRecord& array) {
  const json z = {{"spmd_dtype", std::string(dtype_name(array.dtype))},
                  {"spmd_saved_sharding", array.sharding}};
  return z.dump(1);
}

}  // namespace spmd::checkpoint
