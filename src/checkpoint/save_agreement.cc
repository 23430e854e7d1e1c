// Proposals, their wire form, and process 0's decision.
#include "checkpoint/save_agreement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <set>

#include "checkpoint/json_text.h"
#include "checkpoint/names.h"
#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

using json = nlohmann::json;

// How many missing chunks an error lists.
constexpr size_t kShownChunks = 3;

std::string describe(const ArrayRecord& a) {
  return fmt::format("{}[{}] in chunks ({}) as {}", dtype_name(a.dtype), fmt::join(a.shape, ", "),
                     fmt::join(a.chunks, ", "), a.sharding);
}

Verdict invalid(std::string error) { return {StatusCode::kInvalidArgument, std::move(error)}; }

// The first difference between process p's proposal and process 0's, or nullopt.
std::optional<Verdict> compare(const SaveProposal& zero, const SaveProposal& other, int p) {
  if (other.path != zero.path) {
    return invalid(fmt::format(
        "process {} saves to \"{}\" while process 0 saves to \"{}\"; every process saves the "
        "same path, in the same order",
        p, other.path, zero.path));
  }
  if (other.step != zero.step) {
    auto text = [](const std::optional<int64_t>& s) {
      return s ? std::to_string(*s) : std::string("no step");
    };
    return invalid(fmt::format("process {} saves {} as step {}, process 0 as step {}", p, zero.path,
                               text(other.step), text(zero.step)));
  }
  if (other.overwrite != zero.overwrite) {
    return invalid(fmt::format("process {} saves with overwrite={}, process 0 with overwrite={}", p,
                               other.overwrite, zero.overwrite));
  }
  if (other.format != zero.format) {
    auto text = [](Format f) { return f == Format::kOrbax ? "Orbax's" : "spmd's"; };
    return invalid(fmt::format("process {} saves in {} format, process 0 in {}", p,
                               text(other.format), text(zero.format)));
  }
  for (const auto& [name, a] : zero.arrays) {
    const auto it = other.arrays.find(name);
    if (it == other.arrays.end()) {
      return invalid(fmt::format("process {} has no array \"{}\", which process 0 saves", p, name));
    }
    const ArrayRecord& b = it->second;
    if (a.dtype != b.dtype || a.shape != b.shape || a.chunks != b.chunks ||
        a.sharding != b.sharding) {
      return invalid(fmt::format("process {} saves \"{}\" as {}, process 0 as {}", p, name,
                                 describe(b), describe(a)));
    }
  }
  for (const auto& [name, b] : other.arrays) {
    if (!zero.arrays.count(name)) {
      return invalid(fmt::format("process {} saves an array \"{}\" that process 0 lacks", p, name));
    }
  }
  return std::nullopt;
}

// The number of chunks of `a`'s grid; nullopt past int64.
std::optional<int64_t> chunk_count(const ArrayRecord& a) {
  int64_t n = 1;
  for (int64_t g : chunk_grid(a)) {
    if (__builtin_mul_overflow(n, g, &n)) return std::nullopt;
  }
  return n;
}

// The first few chunk keys of `a`'s grid that `owners` lacks.
std::vector<std::string> missing_chunks(const ArrayRecord& a,
                                        const std::map<std::string, int>& owners) {
  const auto grid = chunk_grid(a);
  std::vector<std::string> missing;
  std::vector<int64_t> at(grid.size(), 0);
  while (missing.size() < kShownChunks) {
    const std::string key = chunk_key(at);
    if (!owners.count(key)) missing.push_back(key);
    size_t d = grid.size();
    while (d > 0 && ++at[d - 1] == grid[d - 1]) at[--d] = 0;
    if (d == 0) break;
  }
  return missing;
}

// Whether every chunk of every array is written by exactly one process.
std::optional<Verdict> check_coverage(const std::vector<SaveProposal>& proposals) {
  for (const auto& [name, a] : proposals[0].arrays) {
    const auto total = chunk_count(a);
    if (!total) return invalid(fmt::format("\"{}\" has more chunks than int64 counts", name));
    std::map<std::string, int> owners;
    for (size_t p = 0; p < proposals.size(); ++p) {
      const auto it = proposals[p].writes.find(name);
      if (it == proposals[p].writes.end()) continue;
      for (const auto& key : it->second) {
        try {
          parse_chunk_key(key, chunk_grid(a));
        } catch (const InvalidArgument&) {
          return invalid(fmt::format("process {} writes a chunk \"{}\" outside the grid of \"{}\"",
                                     p, key, name));
        }
        const auto [owner, fresh] = owners.emplace(key, static_cast<int>(p));
        if (!fresh) {
          return invalid(fmt::format(
              "processes {} and {} both write chunk {} of \"{}\"; each chunk has one writer "
              "(the shard with replica id 0)",
              owner->second, p, key, name));
        }
      }
    }
    if (static_cast<int64_t>(owners.size()) != *total) {
      return invalid(fmt::format(
          "no process writes chunk{} {} of \"{}\" ({} of its {} chunks are covered): its shards "
          "do not cover the array, so a restore would read fill values",
          *total - static_cast<int64_t>(owners.size()) == 1 ? "" : "s",
          fmt::join(missing_chunks(a, owners), ", "), name, owners.size(), *total));
    }
  }
  return std::nullopt;
}

json array_json(const ArrayRecord& a) {
  return {{"dtype", std::string(dtype_name(a.dtype))},
          {"shape", a.shape},
          {"chunks", a.chunks},
          {"sharding", a.sharding}};
}

ArrayRecord array_from(const json& j) {
  ArrayRecord a;
  a.dtype = dtype_from_name(j.at("dtype").get<std::string>());
  a.shape = j.at("shape").get<Shape>();
  a.chunks = j.at("chunks").get<Shape>();
  if (a.shape.size() != a.chunks.size()) throw InvalidArgument("ranks differ");
  for (size_t d = 0; d < a.shape.size(); ++d) {
    if (a.shape[d] < 0 || a.chunks[d] < 1) throw InvalidArgument("bad extent");
  }
  a.sharding = j.at("sharding").get<std::string>();
  return a;
}

}  // namespace

void raise(const Verdict& verdict) { throw_status({verdict.kind, verdict.error}); }

StatusCode kind_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const InvalidArgument&) {
    return StatusCode::kInvalidArgument;
  } catch (const AlreadyExists&) {
    return StatusCode::kAlreadyExists;
  } catch (const FailedPrecondition&) {
    return StatusCode::kFailedPrecondition;
  } catch (...) {
    return StatusCode::kInternal;
  }
}

std::string encode_proposal(const SaveProposal& p) {
  json arrays = json::object();
  for (const auto& [name, a] : p.arrays) arrays[name] = array_json(a);
  json j = {{"kind", static_cast<int>(p.vote.kind)},
            {"error", p.vote.error},
            {"path", p.path},
            {"overwrite", p.overwrite},
            {"orbax", p.format == Format::kOrbax},
            {"arrays", arrays},
            {"writes", p.writes}};
  if (p.step) j["step"] = *p.step;
  return json_text(j);
}

SaveProposal decode_proposal(const std::string& wire, int process) {
  SaveProposal p;
  try {
    const json j = json::parse(wire);
    p.vote = {status_code_from_wire(j.at("kind").get<int>()), j.at("error").get<std::string>()};
    p.path = j.at("path").get<std::string>();
    p.overwrite = j.at("overwrite").get<bool>();
    p.format = j.at("orbax").get<bool>() ? Format::kOrbax : Format::kSpmd;
    if (j.contains("step")) p.step = j.at("step").get<int64_t>();
    for (const auto& [name, a] : j.at("arrays").items()) p.arrays.emplace(name, array_from(a));
    p.writes = j.at("writes").get<std::map<std::string, std::vector<std::string>>>();
  } catch (const std::exception& e) {
    p.vote = {
        StatusCode::kInternal,
        fmt::format("process {} sent a proposal that does not decode ({})", process, e.what())};
  }
  return p;
}

Verdict decide(const std::vector<SaveProposal>& proposals) {
  std::vector<std::string> noes;
  StatusCode kind = StatusCode::kInternal;
  for (size_t p = 0; p < proposals.size(); ++p) {
    if (proposals[p].vote.ok()) continue;
    if (noes.empty()) kind = proposals[p].vote.kind;
    noes.push_back(fmt::format("process {}: {}", p, proposals[p].vote.error));
  }
  if (!noes.empty()) return {kind, fmt::format("{}", fmt::join(noes, "; "))};
  for (size_t p = 1; p < proposals.size(); ++p) {
    if (auto v = compare(proposals[0], proposals[p], static_cast<int>(p))) return *v;
  }
  if (auto v = check_coverage(proposals)) return *v;
  return {};
}

std::string encode_go(const GoMessage& go) {
  return json_text({{"kind", static_cast<int>(go.verdict.kind)},
                    {"error", go.verdict.error},
                    {"tmp", go.tmp},
                    {"save_id", go.save_id}});
}

GoMessage decode_go(const std::string& wire) {
  GoMessage go;
  try {
    const json j = json::parse(wire);
    go.verdict = {status_code_from_wire(j.at("kind").get<int>()), j.at("error").get<std::string>()};
    go.tmp = j.at("tmp").get<std::string>();
    go.save_id = j.at("save_id").get<std::string>();
  } catch (const std::exception& e) {
    go.verdict = {StatusCode::kInternal,
                  fmt::format("process 0's answer does not decode ({})", e.what())};
  }
  return go;
}

}  // namespace spmd::checkpoint
