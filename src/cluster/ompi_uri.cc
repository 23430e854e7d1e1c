#include "cluster/ompi_uri.h"

#include <fmt/format.h>

#include <charconv>

#include "spmd/error.h"

namespace spmd {

OrteUri parse_orte_uri(std::string_view uri) {
  auto fail = [&](const char* why) -> OrteUri {
    throw InvalidArgument(fmt::format("OMPI_MCA_orte_hnp_uri='{}' cannot be read: {}", uri, why));
  };
  OrteUri out;
  const size_t dot = uri.find('.');
  if (dot == std::string_view::npos) return fail("no job id before '.'");
  auto [ptr, ec] = std::from_chars(uri.data(), uri.data() + dot, out.job_id);
  if (dot == 0 || ec != std::errc() || ptr != uri.data() + dot)
    return fail("the job id is not a number");

  if (const size_t tcp = uri.find("tcp://"); tcp != std::string_view::npos) {
    const size_t begin = tcp + 6;
    const size_t end = uri.find_first_of(",:;", begin);
    if (end == std::string_view::npos || end == begin) return fail("an empty tcp:// address");
    out.host = std::string(uri.substr(begin, end - begin));
    return out;
  }
  if (const size_t tcp6 = uri.find("tcp6://["); tcp6 != std::string_view::npos) {
    const size_t begin = tcp6 + 8;
    const size_t end = uri.find_first_of(",]", begin);
    if (end == std::string_view::npos || end == begin) return fail("an empty tcp6:// address");
    out.host = std::string(uri.substr(begin, end - begin));
    return out;
  }
  return fail("no tcp:// or tcp6:// address");
}

}  // namespace spmd
