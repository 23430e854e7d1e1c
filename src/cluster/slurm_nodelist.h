// Slurm's compressed host lists ("node001", "a,b", "node[001-015]", "node[001,007-015]",
// "rack[1-2]-node[01-04]"). Pure functions; thread-safe.
//
// Rules, as Slurm writes them: hosts are separated by top-level commas; a bracket holds
// comma-separated numbers or lo-hi ranges (lo <= hi); a range's zero padding is the width of its
// low bound and is kept; several brackets in one host multiply out, leftmost slowest. Brackets do
// not nest.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace spmd {

// The first host of `list`. The whole list is validated, but only the first host is expanded,
// so a list of a hundred thousand nodes costs nothing. Throws InvalidArgument naming `variable`,
// the value and what is wrong.
std::string first_slurm_host(std::string_view list, std::string_view variable);

// Every host of `list`, in order; throws InvalidArgument like first_slurm_host, and when the
// list expands to more than `limit` hosts.
std::vector<std::string> expand_slurm_hosts(std::string_view list, std::string_view variable,
                                            size_t limit = 1 << 20);

}  // namespace spmd
