#include "coord/process_set.h"

#include <fmt/format.h>

#include <cstdint>
#include <vector>

namespace spmd {

namespace {

// Each range costs two varints on the wire; a few bytes each for ids of a large cluster.
constexpr size_t kRangeWireBytes = 6;

std::vector<std::pair<int, int>> ranges_of(const std::vector<int>& ids) {
  std::vector<std::pair<int, int>> out;
  for (int id : ids) {
    if (!out.empty() && out.back().first + out.back().second == id) {
      ++out.back().second;
    } else {
      out.emplace_back(id, 1);
    }
  }
  return out;
}

std::variant<std::vector<int>, std::string> decode_ranges(const wire::ProcessSet& set,
                                                          int num_processes) {
  if (set.ranges_size() % 2 != 0) return std::string("a range list of odd length");
  std::vector<int> ids;
  int64_t next_free = 0;  // ranges must start at or after this
  for (int i = 0; i < set.ranges_size(); i += 2) {
    const int64_t first = set.ranges(i);
    const int64_t count = set.ranges(i + 1);
    if (first < next_free || count < 1) {
      return fmt::format("range ({}, {}) is empty, negative, out of order or overlapping", first,
                         count);
    }
    // Checked term by term: first < num_processes and count <= num_processes - first.
    if (first >= num_processes || count > num_processes - first) {
      return fmt::format("range ({}, {}) reaches past process {}", first, count, num_processes - 1);
    }
    for (int64_t p = first; p < first + count; ++p) ids.push_back(static_cast<int>(p));
    next_free = first + count;
  }
  return ids;
}

std::variant<std::vector<int>, std::string> decode_bitmap(const std::string& bitmap,
                                                          int num_processes) {
  if (bitmap.size() > (static_cast<size_t>(num_processes) + 7) / 8) {
    return fmt::format("a bitmap of {} bytes for a cluster of {} processes", bitmap.size(),
                       num_processes);
  }
  std::vector<int> ids;
  for (size_t byte = 0; byte < bitmap.size(); ++byte) {
    const auto bits = static_cast<uint8_t>(bitmap[byte]);
    for (int bit = 0; bit < 8; ++bit) {
      if ((bits >> bit & 1U) == 0) continue;
      const int64_t p = static_cast<int64_t>(byte) * 8 + bit;
      if (p >= num_processes) return fmt::format("the bitmap names process {}", p);
      ids.push_back(static_cast<int>(p));
    }
  }
  return ids;
}

}  // namespace

wire::ProcessSet encode_process_set(const std::vector<int>& ids) {
  wire::ProcessSet out;
  if (ids.empty()) return out;
  const auto ranges = ranges_of(ids);
  const size_t bitmap_bytes = static_cast<size_t>(ids.back()) / 8 + 1;
  if (ranges.size() * kRangeWireBytes <= bitmap_bytes) {
    for (const auto& [first, count] : ranges) {
      out.add_ranges(first);
      out.add_ranges(count);
    }
    return out;
  }
  std::vector<uint8_t> bits(bitmap_bytes, 0);
  for (int id : ids) bits[static_cast<size_t>(id) / 8] |= static_cast<uint8_t>(1U << (id % 8));
  out.set_bitmap(std::string(bits.begin(), bits.end()));
  return out;
}

std::variant<std::vector<int>, std::string> decode_process_set(const wire::ProcessSet& set,
                                                               int num_processes) {
  if (set.ranges_size() > 0 && !set.bitmap().empty()) {
    return std::string("both a range list and a bitmap");
  }
  if (!set.bitmap().empty()) return decode_bitmap(set.bitmap(), num_processes);
  return decode_ranges(set, num_processes);
}

}  // namespace spmd
