#include "coord/terminal_text.h"

#include <fmt/format.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace spmd {
namespace {

// The length of the valid UTF-8 sequence starting at text[i], or 0 when there is none.
size_t utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  size_t n = 0;
  uint32_t code = 0;
  if (b >= 0xc2 && b <= 0xdf) {
    n = 2;
    code = b & 0x1f;
  } else if (b >= 0xe0 && b <= 0xef) {
    n = 3;
    code = b & 0x0f;
  } else if (b >= 0xf0 && b <= 0xf4) {
    n = 4;
    code = b & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    code = code << 6 | (byte(i + k) & 0x3f);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8; nor are the C1
  // controls (U+0080 to U+009F), which some terminals obey.
  if ((n == 3 && code < 0x800) || (n == 4 && (code < 0x10000 || code > 0x10ffff)) ||
      (code >= 0xd800 && code <= 0xdfff) || (code >= 0x80 && code <= 0x9f)) {
    return 0;
  }
  return n;
}

}  // namespace

std::string terminal_safe(std::string_view text, size_t width) {
  // Each piece is what one character or one bad byte shows: itself, or its escape (4 columns).
  std::vector<std::pair<std::string, size_t>> pieces;  // text, columns
  size_t columns = 0;
  for (size_t i = 0; i < text.size();) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    const size_t n = b >= 0x20 && b < 0x7f ? 1 : b >= 0x80 ? utf8_length(text, i) : 0;
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
