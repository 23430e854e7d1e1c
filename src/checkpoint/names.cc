// Array names, Zarr dtypes and chunk keys.
#include "checkpoint/names.h"

#include <fmt/format.h>

#include "spmd/error.h"

namespace spmd::checkpoint {

bool is_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > text.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

std::string printable(std::string_view text) {
  std::string out;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F) {
      out += ch;
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

std::vector<std::string> name_components(std::string_view name) {
  if (!is_utf8(name)) {
    throw InvalidArgument(fmt::format(
        "checkpoint: the array name \"{}\" is not UTF-8; names are stored in JSON metadata",
        printable(name)));
  }
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t slash = name.find('/', start);
    const std::string_view c = name.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    const bool bad = c.empty() || c == "." || c == ".." || c.front() == '.' ||
                     c.find('\\') != std::string_view::npos ||
                     c.find('\0') != std::string_view::npos;
    if (bad) {
      throw InvalidArgument(fmt::format(
          "checkpoint: the array name \"{}\" is not allowed: each '/'-separated part must be "
          "non-empty, not start with '.', and hold no '\\\\' or NUL",
          printable(name)));
    }
    if (out.empty() && (c == "COMMIT" || c == "spmd_checkpoint.json")) {
      throw InvalidArgument(fmt::format(
          "checkpoint: the array name \"{}\" is reserved: the checkpoint's own {} file lives "
          "there; rename the array",
          name, c));
    }
    out.emplace_back(c);
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

std::vector<std::string> array_path(std::string_view name, Format format) {
  std::vector<std::string> parts = name_components(name);
  if (format == Format::kSpmd) return parts;
  std::string joined = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) joined += "." + parts[i];
  for (const char* reserved : {"_METADATA", "_sharding", "_CHECKPOINT_METADATA",
                               "commit_success.txt", "array_metadatas"}) {
    if (joined == reserved) {
      throw InvalidArgument(fmt::format(
          "checkpoint: the name \"{}\" is one of Orbax's own files in an Orbax-format checkpoint",
          printable(name)));
    }
  }
  return {joined};
}

std::string zarr_dtype(DType t) { return std::string(dtype_typestr(t)); }

DType dtype_from_zarr(std::string_view zarr) {
  for (int i = 0; i <= static_cast<int>(DType::kFloat64); ++i) {
    if (zarr_dtype(static_cast<DType>(i)) == zarr) return static_cast<DType>(i);
  }
  throw InvalidArgument(fmt::format("checkpoint: unknown Zarr dtype \"{}\"", zarr));
}

std::string chunk_key(const std::vector<int64_t>& coords) {
  if (coords.empty()) return "0";
  std::string key;
  for (size_t i = 0; i < coords.size(); ++i) {
    if (i > 0) key += '.';
    key += std::to_string(coords[i]);
  }
  return key;
}

std::vector<int64_t> parse_chunk_key(std::string_view key, const std::vector<int64_t>& grid) {
  auto bad = [&] {
    return InvalidArgument(fmt::format(
        "checkpoint: \"{}\" is not a chunk key of a grid of {} dimensions", key, grid.size()));
  };
  if (grid.empty()) {
    if (key != "0") throw bad();
    return {};
  }
  std::vector<int64_t> coords;
  size_t start = 0;
  for (size_t d = 0; d < grid.size(); ++d) {
    const size_t dot = key.find('.', start);
    const bool last = d + 1 == grid.size();
    if (last != (dot == std::string_view::npos)) throw bad();
    const std::string_view part = key.substr(start, last ? std::string_view::npos : dot - start);
    if (part.empty() || part.size() > 18) throw bad();
    int64_t v = 0;
    for (char ch : part) {
      if (ch < '0' || ch > '9') throw bad();
      v = v * 10 + (ch - '0');
    }
    if (v >= grid[d]) throw bad();
    coords.push_back(v);
    start = dot + 1;
  }
  return coords;
}

}  // namespace spmd::checkpoint
