// Text that processes chose (hostnames, key and barrier names, the calls they describe) made safe
// to print on an operator's terminal: every byte below 0x20, DEL, the C1 controls, the line and
// paragraph separators U+2028/U+2029, the bidirectional controls (U+202A-U+202E, U+2066-U+2069)
// and every byte that is not part of valid UTF-8 become visible escapes (\x1b, \x0a, \xff, each
// byte of \xe2\x80\xa8), so a name can neither clear the
// screen, retitle the window, nor start a line that reads as another process's row; and a cell
// is cut to a width, ending in "…", so a long name cannot push the columns apart. Pure;
// thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace spmd {

// `text` with control characters and invalid UTF-8 escaped, at most `width` characters (code
// points) long; 0 means no limit.
std::string terminal_safe(std::string_view text, size_t width = 0);

}  // namespace spmd
