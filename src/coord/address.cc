#include "coord/address.h"

#include <fmt/format.h>

#include <charconv>

#include "spmd/error.h"

namespace spmd {

std::string HostPort::to_string() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

HostPort parse_host_port(std::string_view text, std::string_view what, bool allow_port_zero) {
  auto fail = [&](std::string_view why) -> HostPort {
    throw InvalidArgument(
        fmt::format("{} '{}' is not a valid address: {}. Expected host:port, e.g. 10.0.0.1:1234, "
                    "[fe80::1]:1234 or node001:1234",
                    what, text, why));
  };
  std::string_view host;
  std::string_view port_text;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return fail("'[' without a closing ']'");
    host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':') {
      return fail("no ':port' after the bracketed address");
    }
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return fail("no ':port'");
    host = text.substr(0, colon);
    if (host.find(':') != std::string_view::npos) {
      return fail("an IPv6 address must be written in brackets");
    }
    port_text = text.substr(colon + 1);
  }
  if (host.empty()) return fail("empty host");
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || ptr != port_text.data() + port_text.size() ||
      port > 65535) {
    return fail(fmt::format("port '{}' is not a number in 0..65535", port_text));
  }
  if (port == 0 && !allow_port_zero) return fail("port 0 is not allowed here");
  return HostPort{std::string(host), static_cast<uint16_t>(port)};
}

}  // namespace spmd
