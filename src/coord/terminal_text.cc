#include "coord/terminal_text.h"

#include <fmt/format.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "coord/utf8.h"

namespace spmd {
namespace {

// Whether the 3-byte character at text[i] breaks or reorders a line in some tool: U+2028 and
// U+2029 (line and paragraph separators: Python's splitlines, JavaScript, some editors) and the
// bidirectional embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069, which can
// make a row read in another order.
bool breaks_lines(std::string_view text, size_t i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  const auto b1 = static_cast<unsigned char>(text[i + 1]);
  const auto b2 = static_cast<unsigned char>(text[i + 2]);
  if (b0 != 0xe2) return false;
  return (b1 == 0x80 && b2 >= 0xa8 && b2 <= 0xae) || (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9);
}

// The length of the valid UTF-8 sequence of a printable character at text[i] (b >= 0x80), or 0:
// utf8.h's, less the C1 controls (U+0080 to U+009F), which some terminals obey, and the
// characters breaks_lines names.
size_t printable_utf8_length(std::string_view text, size_t i) {
  const size_t n = utf8_sequence_length(text, i);
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (n == 2 && b0 == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f) return 0;
  if (n == 3 && breaks_lines(text, i)) return 0;
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
