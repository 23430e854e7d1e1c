// Parsing "host:port" addresses: "10.0.0.1:1234", "[fe80::1]:1234", "node001:1234".
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace spmd {

struct HostPort {
  std::string host;  // without brackets
  uint16_t port = 0;

  // "host:port", with brackets around an IPv6 host.
  std::string to_string() const;
};

// Parses `text`. Throws InvalidArgument naming `what` (e.g. "coordinator_address") and the text
// when it is not host:port with a port in 0..65535 (1..65535 unless allow_port_zero).
HostPort parse_host_port(std::string_view text, std::string_view what,
                         bool allow_port_zero = false);

}  // namespace spmd
