#include "checkpoint/zarr_format.h"

#include <fmt/format.h>
#include <zstd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "array/box_copy.h"
#include "checkpoint/byte_reader.h"
#include "checkpoint/crc32c.h"
#include "checkpoint/names.h"
#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

using json = nlohmann::json;

constexpr uint64_t kMissing = std::numeric_limits<uint64_t>::max();
// The largest chunk read (4 GiB; Orbax's chunks are shards, and it splits larger ones).
constexpr uint64_t kMaxChunkBytes = uint64_t{1} << 32;

[[noreturn]] void refuse(const std::string& file, std::string_view what) {
  throw Error(fmt::format("checkpoint: {} {}", file, what));
}

const json& member(const json& j, const char* key, const std::string& file) {
  if (!j.is_object() || !j.contains(key)) refuse(file, fmt::format("has no \"{}\"", key));
  return j.at(key);
}

Shape extents(const json& j, const char* key, const std::string& file, bool positive) {
  const json& v = member(j, key, file);
  if (!v.is_array() || v.size() > 32) refuse(file, fmt::format("\"{}\" is not a shape", key));
  Shape out;
  for (const json& e : v) {
    if (!e.is_number_integer() || e.get<int64_t>() < (positive ? 1 : 0)) {
      refuse(file, fmt::format("\"{}\" holds {}, not a {} integer", key, e.dump(),
                               positive ? "positive" : "non-negative"));
    }
    out.push_back(e.get<int64_t>());
  }
  return out;
}

// `value` as an integer of type T in `out`; false when it is not one T holds exactly (a fraction,
// or out of T's range: Zarr's readers refuse those too, and a cast would be undefined).
template <class T>
bool put_integer(const json& value, std::vector<char>& out) {
  T x{};
  if (value.is_boolean()) {
    x = static_cast<T>(value.get<bool>());
  } else if (value.is_number_unsigned()) {
    const auto u = value.get<uint64_t>();
    if (!std::in_range<T>(u)) return false;
    x = static_cast<T>(u);
  } else if (value.is_number_integer()) {
    const auto i = value.get<int64_t>();
    if (!std::in_range<T>(i)) return false;
    x = static_cast<T>(i);
  } else if (value.is_number_float()) {
    const double d = value.get<double>();
    // Integral and within int64 or uint64 first, then within T.
    if (d != std::trunc(d) || d < -0x1p63 || d >= 0x1p64) return false;
    if (d < 0) {
      if (!std::in_range<T>(static_cast<int64_t>(d))) return false;
      x = static_cast<T>(static_cast<int64_t>(d));
    } else {
      if (!std::in_range<T>(static_cast<uint64_t>(d))) return false;
      x = static_cast<T>(static_cast<uint64_t>(d));
    }
  } else {
    return false;
  }
  std::memcpy(out.data(), &x, sizeof(x));
  return true;
}

// `value` as a floating-point number: a JSON number, or Zarr's "NaN", "Infinity", "-Infinity".
std::optional<double> float_value(const json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_boolean()) return value.get<bool>() ? 1.0 : 0.0;
  if (value == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (value == "Infinity") return HUGE_VAL;
  if (value == "-Infinity") return -HUGE_VAL;
  return std::nullopt;
}

// One element of `dtype` holding `value` (null: zero).
std::vector<char> fill_bytes(DType dtype, const json& value, const std::string& file) {
  std::vector<char> out(dtype_size(dtype), 0);
  if (value.is_null()) return out;
  bool ok = true;
  auto put = [&](auto x) { std::memcpy(out.data(), &x, sizeof(x)); };
  const std::optional<double> v = float_value(value);
  switch (dtype) {
    case DType::kBool:
      ok = value.is_boolean() || (value.is_number() && (*v == 0 || *v == 1));
      if (ok) put(*v != 0);
      break;
    case DType::kInt8:
      ok = put_integer<int8_t>(value, out);
      break;
    case DType::kInt16:
      ok = put_integer<int16_t>(value, out);
      break;
    case DType::kInt32:
      ok = put_integer<int32_t>(value, out);
      break;
    case DType::kInt64:
      ok = put_integer<int64_t>(value, out);
      break;
    case DType::kUInt8:
      ok = put_integer<uint8_t>(value, out);
      break;
    case DType::kUInt16:
      ok = put_integer<uint16_t>(value, out);
      break;
    case DType::kUInt32:
      ok = put_integer<uint32_t>(value, out);
      break;
    case DType::kUInt64:
      ok = put_integer<uint64_t>(value, out);
      break;
    case DType::kFloat16:
      if ((ok = v.has_value())) put(to_float16(static_cast<float>(*v)));
      break;
    case DType::kBFloat16:
      if ((ok = v.has_value())) put(to_bfloat16(static_cast<float>(*v)));
      break;
    case DType::kFloat32:
      if ((ok = v.has_value())) put(static_cast<float>(*v));
      break;
    case DType::kFloat64:
      if ((ok = v.has_value())) put(*v);
      break;
  }
  if (!ok) {
    refuse(file, fmt::format("has a fill_value {} that {} cannot hold exactly", value.dump(),
                             dtype_name(dtype)));
  }
  return out;
}

ZarrArray parse_v2(const json& j, const std::string& file) {
  ZarrArray a;
  a.format = 2;
  if (member(j, "zarr_format", file) != 2) refuse(file, "is not Zarr v2 (zarr_format is not 2)");
  const json& dtype = member(j, "dtype", file);
  if (!dtype.is_string()) refuse(file, "has a \"dtype\" that is not one string");
  try {
    a.dtype = dtype_from_zarr(dtype.get<std::string>());
  } catch (const InvalidArgument&) {
    refuse(file, fmt::format("has dtype {}, which spmd does not read (it reads little-endian "
                             "bool, integers, float16, bfloat16, float32 and float64)",
                             dtype.dump()));
  }
  a.shape = extents(j, "shape", file, false);
  a.chunks = extents(j, "chunks", file, true);
  if (a.chunks.size() != a.shape.size()) refuse(file, "has chunks of another rank than its shape");
  if (member(j, "order", file) != "C") refuse(file, "is not in C order (only \"C\" is read)");
  if (j.contains("filters") && !j["filters"].is_null()) {
    refuse(file, fmt::format("has filters {}, which spmd does not apply", j["filters"].dump()));
  }
  const json& compressor = member(j, "compressor", file);
  if (!compressor.is_null()) {
    if (!compressor.is_object() || compressor.value("id", "") != "zstd") {
      refuse(file, fmt::format("has compressor {}; spmd reads zstd or none", compressor.dump()));
    }
    a.zstd = true;
  }
  const std::string sep = j.value("dimension_separator", ".");
  if (sep != "." && sep != "/") refuse(file, "has a dimension_separator other than \".\" or \"/\"");
  a.separator = sep[0];
  a.fill = fill_bytes(a.dtype, j.value("fill_value", json()), file);
  return a;
}

DType v3_dtype(const json& j, const std::string& file) {
  const json& name = member(j, "data_type", file);
  if (name.is_string()) {
    for (int i = 0; i <= static_cast<int>(DType::kFloat64); ++i) {
      if (dtype_name(static_cast<DType>(i)) == name.get<std::string>())
        return static_cast<DType>(i);
    }
  }
  refuse(file, fmt::format("has data_type {}, which spmd does not read", name.dump()));
}

// A codec list [bytes, zstd?]: whether zstd follows. `chunk` names the level in errors.
bool array_to_bytes(const json& codecs, const std::string& file, const char* chunk) {
  if (!codecs.is_array() || codecs.empty() || codecs.size() > 2) {
    refuse(file, fmt::format("has {} codecs {}; spmd reads [bytes] or [bytes, zstd]", chunk,
                             codecs.dump()));
  }
  const json& bytes = codecs[0];
  if (!bytes.is_object() || bytes.value("name", "") != "bytes") {
    refuse(file,
           fmt::format("has {} codec {} first; spmd reads \"bytes\" there", chunk, bytes.dump()));
  }
  if (bytes.contains("configuration") &&
      bytes["configuration"].value("endian", "little") != "little") {
    refuse(file, "stores big-endian values; spmd reads little-endian ones");
  }
  if (codecs.size() == 1) return false;
  if (!codecs[1].is_object() || codecs[1].value("name", "") != "zstd") {
    refuse(file, fmt::format("has {} codec {}; spmd reads zstd or none after \"bytes\"", chunk,
                             codecs[1].dump()));
  }
  return true;
}

void parse_sharding(const json& codec, ZarrArray& a, const std::string& file) {
  const json& config = member(codec, "configuration", file);
  a.sharded = true;
  a.inner_chunks = extents(config, "chunk_shape", file, true);
  if (a.inner_chunks.size() != a.chunks.size()) refuse(file, "has inner chunks of another rank");
  for (size_t d = 0; d < a.chunks.size(); ++d) {
    if (a.chunks[d] % a.inner_chunks[d] != 0) {
      refuse(file, "has a shard shape that its inner chunk shape does not divide");
    }
  }
  a.zstd = array_to_bytes(member(config, "codecs", file), file, "inner chunk");
  const json& index = member(config, "index_codecs", file);
  const bool two = index.is_array() && index.size() == 2;
  if (!index.is_array() || index.empty() || index.size() > 2 ||
      index[0].value("name", "") != "bytes" || (two && index[1].value("name", "") != "crc32c")) {
    refuse(file,
           fmt::format("has index codecs {}; spmd reads [bytes] or [bytes, crc32c]", index.dump()));
  }
  a.index_crc32c = two;
  const std::string location = config.value("index_location", "end");
  if (location != "end" && location != "start") refuse(file, "has an unknown index_location");
  a.index_at_end = location == "end";
}

ZarrArray parse_v3(const json& j, const std::string& file) {
  ZarrArray a;
  a.format = 3;
  if (member(j, "zarr_format", file) != 3) refuse(file, "is not Zarr v3 (zarr_format is not 3)");
  if (member(j, "node_type", file) != "array") refuse(file, "is not an array's zarr.json");
  a.dtype = v3_dtype(j, file);
  a.shape = extents(j, "shape", file, false);
  const json& grid = member(j, "chunk_grid", file);
  if (grid.value("name", "") != "regular") refuse(file, "has a chunk grid that is not regular");
  a.chunks = extents(member(grid, "configuration", file), "chunk_shape", file, true);
  if (a.chunks.size() != a.shape.size()) refuse(file, "has chunks of another rank than its shape");
  const json& encoding = member(j, "chunk_key_encoding", file);
  const std::string kind = encoding.value("name", "");
  if (kind != "default" && kind != "v2") refuse(file, "has an unknown chunk_key_encoding");
  a.c_prefix = kind == "default";
  std::string sep = a.c_prefix ? "/" : ".";
  if (encoding.contains("configuration")) sep = encoding["configuration"].value("separator", sep);
  if (sep != "." && sep != "/") refuse(file, "has a chunk key separator other than \".\" or \"/\"");
  a.separator = sep[0];
  const json& codecs = member(j, "codecs", file);
  if (codecs.is_array() && codecs.size() == 1 &&
      codecs[0].value("name", "") == "sharding_indexed") {
    parse_sharding(codecs[0], a, file);
  } else {
    a.zstd = array_to_bytes(codecs, file, "chunk");
  }
  a.fill = fill_bytes(a.dtype, j.value("fill_value", json()), file);
  return a;
}

// The bytes of a chunk (or inner chunk) of `extent`, decoded from `stored` into `out`.
void decode_plain(const ZarrArray& a, std::span<const char> stored, std::span<char> out,
                  const std::string& where) {
  if (a.zstd) {
    decode_chunk(stored, Compression::kZstd, out, where);
  } else if (stored.size() != out.size()) {
    throw Error(fmt::format("checkpoint: {} holds {} bytes; a raw chunk of it holds {}", where,
                            stored.size(), out.size()));
  } else {
    std::memcpy(out.data(), stored.data(), out.size());
  }
}

void fill(const ZarrArray& a, std::span<char> out) {
  const size_t elem = a.fill.size();
  for (size_t at = 0; at + elem <= out.size(); at += elem) {
    std::memcpy(out.data() + at, a.fill.data(), elem);
  }
}

// A v3 shard: its index, then each inner chunk into its place in `out`.
void decode_shard(const ZarrArray& a, std::span<const char> shard, std::span<char> out,
                  const std::string& where) {
  std::vector<int64_t> per(a.chunks.size());
  int64_t n = 1;
  for (size_t d = 0; d < per.size(); ++d) n *= (per[d] = a.chunks[d] / a.inner_chunks[d]);
  const uint64_t index_bytes = static_cast<uint64_t>(n) * 16 + (a.index_crc32c ? 4 : 0);
  if (shard.size() < index_bytes) {
    throw Error(fmt::format("checkpoint: {} holds {} bytes, fewer than its shard index's {}", where,
                            shard.size(), index_bytes));
  }
  const auto index = a.index_at_end ? shard.last(index_bytes) : shard.first(index_bytes);
  ByteReader r(index, where + " (its shard index)");
  if (a.index_crc32c) {
    ByteReader c(index.last(4), where);
    if (c.u32le("index checksum") != crc32c(index.first(index_bytes - 4))) {
      r.fail("the shard index's CRC-32C does not match: the shard is corrupted");
    }
  }
  const size_t elem = dtype_size(a.dtype);
  const size_t inner_bytes = static_cast<size_t>(shape_size(a.inner_chunks)) * elem;
  const bool whole = per == std::vector<int64_t>(per.size(), 1);
  Buffer inner(whole ? 0 : inner_bytes);
  std::vector<int64_t> at(per.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t offset = r.u64le("inner chunk offset");
    const uint64_t length = r.u64le("inner chunk length");
    const std::span<char> target = whole ? out : std::span<char>(inner);
    if (offset == kMissing && length == kMissing) {
      fill(a, target);
    } else if (offset > shard.size() || length > shard.size() - offset) {
      r.fail(fmt::format("inner chunk {} lies at [{}, {}), past the shard's {} bytes", k, offset,
                         offset + length, shard.size()));
    } else {
      decode_plain(a, shard.subspan(offset, length), target,
                   fmt::format("inner chunk {} of {}", k, where));
    }
    if (!whole) {
      std::vector<int64_t> dst(per.size());
      for (size_t d = 0; d < per.size(); ++d) dst[d] = at[d] * a.inner_chunks[d];
      copy_box(reinterpret_cast<const std::byte*>(inner.data()), a.inner_chunks,
               std::vector<int64_t>(per.size(), 0), reinterpret_cast<std::byte*>(out.data()),
               a.chunks, dst, a.inner_chunks, elem);
    }
    for (size_t d = per.size(); d > 0; --d) {
      if (++at[d - 1] < per[d - 1]) break;
      at[d - 1] = 0;
    }
  }
}

}  // namespace

ZarrArray parse_zarr_metadata(std::string_view text, int format, const std::string& file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    refuse(file, fmt::format("is not JSON: {}", e.what()));
  }
  ZarrArray a;
  try {
    a = format == 2 ? parse_v2(j, file) : parse_v3(j, file);
  } catch (const json::exception& e) {
    refuse(file, fmt::format("has a field of the wrong type: {}", e.what()));
  }
  // A chunk is allocated whole when read: its bytes must be a number a restore can hold.
  uint64_t bytes = dtype_size(a.dtype);
  for (int64_t c : a.chunks) {
    if (bytes > kMaxChunkBytes / static_cast<uint64_t>(c)) {
      refuse(file, fmt::format("has chunks of more than {} bytes", kMaxChunkBytes));
    }
    bytes *= static_cast<uint64_t>(c);
  }
  return a;
}

std::string zarr_chunk_key(const ZarrArray& a, const std::vector<int64_t>& coords) {
  std::string key = a.c_prefix ? "c" : "";
  if (coords.empty()) return a.c_prefix ? key : "0";
  for (size_t d = 0; d < coords.size(); ++d) {
    if (d > 0 || a.c_prefix) key += a.separator;
    key += std::to_string(coords[d]);
  }
  return key;
}

uint64_t zarr_max_stored_bytes(const ZarrArray& a) {
  const uint64_t elem = dtype_size(a.dtype);
  if (!a.sharded) {
    const uint64_t raw = static_cast<uint64_t>(shape_size(a.chunks)) * elem;
    return a.zstd ? ZSTD_compressBound(raw) : raw;
  }
  const uint64_t inner = static_cast<uint64_t>(shape_size(a.inner_chunks)) * elem;
  const uint64_t n = static_cast<uint64_t>(shape_size(a.chunks) / shape_size(a.inner_chunks));
  return n * ((a.zstd ? ZSTD_compressBound(inner) : inner) + 16) + 4;
}

void decode_zarr_chunk(const ZarrArray& a, const std::optional<Buffer>& stored, std::span<char> out,
                       const std::string& where) {
  if (!stored) {
    fill(a, out);
  } else if (a.sharded) {
    decode_shard(a, *stored, out, where);
  } else {
    decode_plain(a, *stored, out, where);
  }
}

}  // namespace spmd::checkpoint
