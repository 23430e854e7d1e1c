// Array names, Zarr dtypes and chunk keys.
#include "checkpoint/names.h"

#include <fmt/format.h>

#include "spmd/error.h"

namespace spmd::checkpoint {

std::vector<std::string> name_components(std::string_view name) {
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
          name));
    }
    out.emplace_back(c);
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
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
