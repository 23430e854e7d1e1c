// What every Source shares: its record size, and reading many records at once through read()
// and prefetch() (sources with cheaper access override read_many).
#include <fmt/format.h>

#include "data/gather.h"
#include "spmd/data_source.h"
#include "spmd/error.h"

namespace spmd::data {

size_t Source::record_bytes() const {
  return static_cast<size_t>(shape_size(record_shape())) * dtype_size(dtype());
}

void Source::check_many(std::span<const int64_t> indices, std::span<std::byte> out) const {
  if (out.size() != indices.size() * record_bytes()) {
    throw InvalidArgument(fmt::format("data: {} bytes for {} records of {} bytes", out.size(),
                                      indices.size(), record_bytes()));
  }
  for (const int64_t index : indices) {
    if (index < -1 || index >= size()) {
      throw InvalidArgument(fmt::format("data: record {} of a source of {}", index, size()));
    }
  }
}

void Source::read_many(std::span<const int64_t> indices, std::span<std::byte> out) const {
  check_many(indices, out);
  gather_rows(
      indices, out, record_bytes(), [this](int64_t i, std::span<std::byte> row) { read(i, row); },
      [this](int64_t i) { prefetch(i); });
}

}  // namespace spmd::data
