// Text that processes chose (hostnames, key and barrier names, the calls they describe) made safe
// to print on an operator's terminal: every byte below 0x20, DEL, and every byte that is not part
// of valid UTF-8 becomes a visible escape (\x1b, \x0a, \xff), so a name can neither clear the
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
