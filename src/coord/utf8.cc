#include "coord/utf8.h"

#include <cstdint>
#include <string>

namespace spmd {

size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return 1;
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
  if ((n == 3 && code < 0x800) || (n == 4 && (code < 0x10000 || code > 0x10ffff)) ||
      (code >= 0xd800 && code <= 0xdfff)) {
    return 0;
  }
  return n;
}

size_t invalid_utf8_at(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

}  // namespace spmd
