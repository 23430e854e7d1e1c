// Encoding and validating spmd_checkpoint.json, and writing .zarray.
#include "checkpoint/metadata.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "checkpoint/json_text.h"
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
  try {
    shape_size(out);  // the product too: 2^48 x 2^48 elements is no array
  } catch (const InvalidArgument& e) {
    malformed(file, fmt::format("{}: {}", where, e.what()));
  }
  return out;
}

// A metric as JSON: a number, or for what JSON has no number for, the spelling Python's json
// module writes and reads ("NaN", "Infinity", "-Infinity").
json metric_json(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

std::optional<double> metric_from(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (j == "Infinity") return std::numeric_limits<double>::infinity();
  if (j == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

// a * b, or nullopt past int64.
std::optional<int64_t> times(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// Checks what decode_record cannot check field by field: the sizes fit in int64 (in bytes), each
// chunk lies within the array, and the checksums list every chunk of the grid (a save covers
// every chunk; one missing would restore as fill values).
void check_sizes(const ArrayRecord& r, const std::string& file, const std::string& where) {
  std::optional<int64_t> bytes = static_cast<int64_t>(dtype_size(r.dtype));
  std::optional<int64_t> chunk_bytes = bytes;
  std::optional<int64_t> chunks = 1;
  for (size_t d = 0; d < r.shape.size(); ++d) {
    if (r.chunks[d] > std::max<int64_t>(r.shape[d], 1)) {
      malformed(file, fmt::format("{}: chunk extent {} exceeds the array's extent {}", where,
                                  r.chunks[d], r.shape[d]));
    }
    if (bytes) bytes = times(*bytes, r.shape[d]);
    if (chunk_bytes) chunk_bytes = times(*chunk_bytes, r.chunks[d]);
    if (chunks) chunks = times(*chunks, (r.shape[d] + r.chunks[d] - 1) / r.chunks[d]);
  }
  if (!bytes || !chunk_bytes || !chunks) {
    malformed(file, where + ": its size in bytes does not fit in 64 bits");
  }
  if (static_cast<int64_t>(r.checksums.size()) != *chunks) {
    malformed(file, fmt::format("{}: lists {} chunk checksums, but its grid has {} chunks", where,
                                r.checksums.size(), *chunks));
  }
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
  json metrics = json::object();
  for (const auto& [k, v] : record.metadata.metrics) metrics[k] = metric_json(v);
  json meta = {{"metrics", metrics}, {"user", record.metadata.user}};
  if (record.metadata.step) meta["step"] = *record.metadata.step;
  json doc = {
      {"format", "spmd-checkpoint"}, {"version", 1}, {"arrays", arrays}, {"metadata", meta}};
  if (record.format == Format::kOrbax) doc["layout"] = "orbax";
  return json_text(doc, 1);
}

CheckpointRecord decode_record(const std::string& text, const std::string& file) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) malformed(file, "not JSON");
  const json& format = field(doc, "format", file, "the document");
  if (format != "spmd-checkpoint") malformed(file, "\"format\" is not \"spmd-checkpoint\"");
  const json& version = field(doc, "version", file, "the document");
  if (version != 1) malformed(file, fmt::format("version {} is not 1", version.dump()));
  CheckpointRecord out;
  if (doc.contains("layout")) {
    if (doc.at("layout") != "orbax") malformed(file, "\"layout\" is not \"orbax\"");
    out.format = Format::kOrbax;
  }
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
    check_sizes(r, file, where);
    out.arrays.emplace(name, std::move(r));
  }
  if (doc.contains("metadata") && doc.at("metadata").is_object()) {
    const json& m = doc.at("metadata");
    if (m.contains("step")) {
      const json& step = m.at("step");
      if (!step.is_number_integer() ||
          (step.is_number_unsigned() &&
           step.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
        malformed(file, fmt::format("the step {} is not an int64", step.dump()));
      }
      out.metadata.step = step.get<int64_t>();
    }
    if (m.contains("metrics") && m.at("metrics").is_object()) {
      for (const auto& [k, v] : m.at("metrics").items()) {
        const auto value = metric_from(v);
        if (!value)
          malformed(file, fmt::format("the metric \"{}\" is {}, not a number", k, v.dump()));
        out.metadata.metrics[k] = *value;
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
  return json_text(z, 1);
}

void check_zarray(const std::string& text, const ArrayRecord& array, const std::string& file) {
  const json got = json::parse(text, nullptr, false);
  const json want = json::parse(zarray_json(array));
  if (!got.is_object()) malformed(file, "not a JSON object");
  for (const char* key : {"zarr_format", "shape", "chunks", "dtype", "order"}) {
    if (!got.contains(key) || got.at(key) != want.at(key)) {
      malformed(file, fmt::format("its \"{}\" is {}, but {} says {}", key,
                                  got.contains(key) ? got.at(key).dump() : "absent", kMetadataFile,
                                  want.at(key).dump()));
    }
  }
  const bool compressed = got.contains("compressor") && !got.at("compressor").is_null();
  if (compressed != (array.compression == Compression::kZstd) ||
      (compressed && got.at("compressor").value("id", "") != "zstd")) {
    malformed(file, fmt::format("its compressor is {}, but {} says {}",
                                got.contains("compressor") ? got.at("compressor").dump() : "absent",
                                kMetadataFile, want.at("compressor").dump()));
  }
}

std::string zattrs_json(const ArrayRecord& array) {
  const json z = {{"spmd_dtype", std::string(dtype_name(array.dtype))},
                  {"spmd_saved_sharding", array.sharding}};
  return json_text(z, 1);
}

}  // namespace spmd::checkpoint
