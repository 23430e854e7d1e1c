#include "jit/same_program.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "spmd/distributed.h"
#include "spmd/error.h"
#include "spmd/named_collectives.h"
#include "spmd/runtime.h"
#include "spmd/shard_map.h"

namespace spmd::compiler {
namespace {

// How long a process waits for the other's program text once a difference is known.
constexpr auto kTextTimeout = std::chrono::seconds(60);
// The fingerprint of a process whose trace failed (a real program's is this with probability
// 2^-64).
constexpr uint64_t kFailedTrace = 0;

std::string failed_key(int process) { return fmt::format("spmd/jit/failed/{}", process); }

bool spans_processes(const Mesh& mesh) {
  for (const Device& d : mesh.devices()) {
    if (d.process_index() != mesh.devices()[0].process_index()) return true;
  }
  return false;
}

// When a process reported a failed trace: InvalidArgument naming it with its error.
void throw_if_one_failed(const std::vector<uint64_t>& all, const Mesh& mesh,
                         const std::string& name) {
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] != kFailedTrace) continue;
    const int failed = mesh.devices()[i].process_index();
    const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(kTextTimeout);
    const std::string error =
        distributed::client().blocking_key_value_get(failed_key(failed), timeout);
    throw InvalidArgument(fmt::format(
        "jit({}): process {} failed to trace or partition the function, so no process runs it: "
        "{}",
        name, failed, error));
  }
}

// Every device's fingerprint, in mesh order, as every device sees them.
std::vector<uint64_t> gather_fingerprints(uint64_t mine, const Mesh& mesh) {
  const AxisEntry all(mesh.axis_names());
  const std::vector<PartitionSpec> none;
  const std::vector<PartitionSpec> replicated{P()};
  const auto gathered = detail::run_shard_map(
      mesh, none, replicated, {.check_rep = false}, "spmd::jit program check", {},
      [&](std::vector<Block>&) {
        std::vector<Block> out;
        out.push_back(
            all_gather(Block::from_vector(std::vector<uint64_t>{mine}, {1}), all, 0, true));
        return out;
      });
  const HostArray local = gathered.at(0).addressable_data(0);
  const auto values = local.data<uint64_t>();
  return {values.begin(), values.end()};
}

std::string joined(const Program& program) {
  std::string s;
  for (const std::string& line : program.lines()) s += line + "\n";
  return s;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    out.push_back(text.substr(start, end - start));
  }
  return out;
}

}  // namespace

void report_failed_trace(const Mesh& mesh, const std::string& name, const std::string& error) {
  if (!spans_processes(mesh)) return;
  try {
    distributed::client().key_value_set(failed_key(process_index()), error, true);
    gather_fingerprints(kFailedTrace, mesh);
  } catch (const std::exception& e) {
    spdlog::warn("jit({}): could not tell the other processes that this trace failed: {}", name,
                 e.what());
  }
}

void check_same_program(const Program& program, const Mesh& mesh, const std::string& name) {
  uint64_t mine = program.fingerprint();
  if (mine == kFailedTrace) mine = 1;
  const std::vector<uint64_t> all = gather_fingerprints(mine, mesh);
  throw_if_one_failed(all, mesh, name);
  const int first = mesh.devices()[0].process_index();
  int other = -1;
  for (size_t i = 0; i < all.size() && other < 0; ++i) {
    if (all[i] != all[0]) other = mesh.devices()[i].process_index();
  }
  if (other < 0) return;
  // Each of the two publishes its program; everyone reads both and names the first difference.
  auto key = [&](uint64_t fingerprint) {
    return fmt::format("spmd/jit/program/{:016x}", fingerprint);
  };
  const int me = process_index();
  if (me == first || me == other)
    distributed::client().key_value_set(key(mine), joined(program), true);
  uint64_t other_fp = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (mesh.devices()[i].process_index() == other) other_fp = all[i];
  }
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(kTextTimeout);
  const auto a = split_lines(distributed::client().blocking_key_value_get(key(all[0]), timeout));
  const auto b = split_lines(distributed::client().blocking_key_value_get(key(other_fp), timeout));
  size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  auto line = [](const std::vector<std::string>& l, size_t i) {
    return i < l.size() ? "`" + l[i] + "`" : std::string("nothing (its program ends before)");
  };
  throw CollectiveMismatch(fmt::format(
      "jit({}): process {} and process {} traced different programs; the first difference is "
      "line {}: process {} has {}, process {} has {}. Every process must call a jitted function "
      "with inputs of the same shapes, dtypes and shardings and trace the same operations (a "
      "branch on process_index() inside the function is a usual cause)",
      name, first, other, at + 1, first, line(a, at), other, line(b, at)));
}

}  // namespace spmd::compiler
