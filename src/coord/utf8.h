// UTF-8 as protobuf's `string` fields require it: what the coordination protocol carries as
// text (keys, barrier ids, hostnames) must be valid, or the receiving side cannot decode the
// message at all. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace spmd {

// The length of the valid UTF-8 sequence that starts at text[i] (1 to 4), or 0 when none does:
// a stray continuation byte, an overlong form, a surrogate, a code point past U+10FFFF, or a
// sequence cut short.
size_t utf8_sequence_length(std::string_view text, size_t i);

// The offset of the first byte that is not part of valid UTF-8, or npos when `text` is valid.
size_t invalid_utf8_at(std::string_view text);

}  // namespace spmd
