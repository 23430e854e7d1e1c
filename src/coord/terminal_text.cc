#include "coord/terminal_text.h"

#include <fmt/format.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "coord/utf8.h"

namespace spmd {
namespace {

// The length of the valid UTF-8 sequence of a printable character at text[i] (b >= 0x80), or 0:
// utf8.h's, less the C1 controls (U+0080 to U+009F), which some terminals obey.
size_t printable_utf8_length(std::string_view text, size_t i) {
  const size_t n = utf8_sequence_length(text, i);
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (n == 2 && b0 == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f) return 0;
  return n;
}

}  // namespace

std::string terminal_safe(std::string_view text, size_t width) {
  // Each piece is what one character or one bad byte shows: itself, or its escape (4 columns).
  std::vector<std::pair<std::string, size_t>> pieces;  // text, columns
  size_t columns = 0;
  for (size_t i = 0; i < text.size();) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    const size_t n = b >= 0x20 && b < 0x7f ? 1 : b >= 0x80 ? printable_utf8_length(text, i) : 0;
    if (n > 0) {
      pieces.emplace_back(std::string(text.substr(i, n)), 1);
      columns += 1;
      i += n;
    } else {
      pieces.emplace_back(fmt::format("\\x{:02x}", b), 4);
      columns += 4;
      ++i;
    }
  }
  std::string out;
  if (width == 0 || columns <= width) {
    for (const auto& [piece, w] : pieces) out += piece;
    return out;
  }
  size_t used = 0;  // the cut keeps one column for "…"
  for (const auto& [piece, w] : pieces) {
    if (used + w + 1 > width) break;
    out += piece;
    used += w;
  }
  return out + "…";
}

}  // namespace spmd
