// Saving: the plan, the parallel chunk writes, and the commit protocol's messages (process 0
// prepares, everyone writes and reports, process 0 commits, everyone learns the outcome).
#include <fmt/format.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "array/box_copy.h"
#include "checkpoint/chunk_io.h"
#include "checkpoint/commit.h"
#include "checkpoint/names.h"
#include "checkpoint/parallel_for.h"
#include "checkpoint/save_plan.h"
#include "runtime/exception_message.h"
#include "runtime/runtime_state.h"
#include "spmd/coordination_client.h"
#include "spmd/distributed.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

namespace spmd::checkpoint {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// What process 0 tells the others at a step of a collective save, through the key-value store:
// success with a value (the temporary directory) or the error. A value that does not parse, from
// a store shared with other software, reads as an error saying so.
struct Outcome {
  bool ok = false;
  std::string text;  // ok: the value; else: what went wrong

  static Outcome success(std::string value = {}) { return {true, std::move(value)}; }
  static Outcome failure(std::string error) { return {false, std::move(error)}; }
  std::string encode() const { return json{{"ok", ok}, {"text", text}}.dump(); }
  static Outcome decode(const std::string& wire) {
    const json j = json::parse(wire, nullptr, false);
    if (!j.is_object() || !j.contains("ok") || !j["ok"].is_boolean() || !j.contains("text") ||
        !j["text"].is_string()) {
      return failure("an unreadable outcome (" + wire.substr(0, 80) + ")");
    }
    return {j["ok"].get<bool>(), j["text"].get<std::string>()};
  }
};

struct Counter {
  std::atomic<uint64_t> saves{0};
};

// The chunk shape of an array laid out by `sharding`: the largest shard extent per dimension
// (XLA's tiling makes the last shards shorter), at least 1 as Zarr requires.
Shape chunk_shape(const Array& a, const std::vector<DeviceIndex>& map) {
  Shape chunks(a.shape().size(), 1);
  for (const auto& e : map) {
    for (size_t d = 0; d < chunks.size(); ++d) chunks[d] = std::max(chunks[d], e.index[d].size());
  }
  return chunks;
}

// The chunk coordinates of a shard at `index`; throws unless it sits in one grid cell.
std::vector<int64_t> chunk_coords(const std::string& name, const Index& index,
                                  const Shape& chunks) {
  std::vector<int64_t> coords;
  for (size_t d = 0; d < index.size(); ++d) {
    if (index[d].start % chunks[d] != 0 || index[d].size() > chunks[d]) {
      throw InvalidArgument(fmt::format(
          "checkpoint: the shards of \"{}\" do not form a grid of ({}) chunks (a shard at {}); "
          "save it under a NamedSharding or PositionalSharding",
          name, fmt::join(chunks, ", "), index_to_string(index)));
    }
    coords.push_back(index[d].start / chunks[d]);
  }
  return coords;
}

std::string chunk_file(const std::string& root, const ChunkJob& job) {
  return (fs::path(array_dir(root, job.array)) / job.key).string();
}

// Writes one chunk (padded to the full chunk shape at the array's edge); returns its checksum.
std::string write_chunk(const std::string& root, const ChunkJob& job, const ArrayRecord& array,
                        const SaveOptions& options) {
  const size_t elem = dtype_size(array.dtype);
  const Shape extent = index_extents(job.index);
  std::span<const char> raw(reinterpret_cast<const char*>(job.data->bytes().data()),
                            job.data->nbytes());
  Buffer padded;
  if (extent != array.chunks) {
    padded.assign(static_cast<size_t>(shape_size(array.chunks)) * elem, 0);
    const std::vector<int64_t> origin(extent.size(), 0);
    copy_box(job.data->bytes().data(), extent, origin, reinterpret_cast<std::byte*>(padded.data()),
             array.chunks, origin, extent, elem);
    raw = padded;
  }
  const Encoded encoded = encode_chunk(raw, options.compression, options.zstd_level);
  return write_file_durably(chunk_file(root, job), encoded.stored);
}

// Writes every chunk of the plan under `root`; returns the checksums by array and key.
std::map<std::string, std::map<std::string, std::string>> write_chunks(const SavePlan& plan,
                                                                       const std::string& root,
                                                                       const SaveOptions& options) {
  std::set<std::string> dirs;
  for (const auto& job : plan.jobs) dirs.insert(array_dir(root, job.array));
  for (const auto& d : dirs) {
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec) throw Error(fmt::format("checkpoint: cannot create {}: {}", d, ec.message()));
  }
  std::vector<std::string> sums(plan.jobs.size());
  parallel_for(plan.jobs.size(), options.threads, [&](size_t i) {
    const auto& job = plan.jobs[i];
    sums[i] = write_chunk(root, job, plan.record.arrays.at(job.array), options);
  });
  std::map<std::string, std::map<std::string, std::string>> out;
  for (size_t i = 0; i < plan.jobs.size(); ++i) out[plan.jobs[i].array][plan.jobs[i].key] = sums[i];
  return out;
}

}  // namespace

uint64_t next_save_sequence() { return session_object<Counter>()->saves++; }

SavePlan plan_save(const Tree& tree, const SaveOptions& options, bool copy) {
  SavePlan plan;
  plan.record.metadata = options.metadata;
  for (const auto& [name, array] : tree) {
    name_components(name);
    const auto next = tree.upper_bound(name);
    if (next != tree.end() && next->first.rfind(name + "/", 0) == 0) {
      throw InvalidArgument(fmt::format(
          "checkpoint: \"{}\" is both an array and a group (of \"{}\")", name, next->first));
    }
    const auto map = array.sharding().devices_indices_map(array.shape());
    ArrayRecord r;
    r.dtype = array.dtype();
    r.shape = array.shape();
    r.chunks = chunk_shape(array, map);
    r.compression = options.compression;
    r.sharding = array.sharding().to_string();
    for (const auto& shard : array.addressable_shards()) {
      if (shard.replica_id != 0 || shard.data.size() == 0) continue;
      ChunkJob job{name, chunk_key(chunk_coords(name, shard.index, r.chunks)), &shard.data,
                   shard.index};
      plan.jobs.push_back(std::move(job));
    }
    plan.record.arrays.emplace(name, std::move(r));
  }
  if (copy) {
    plan.snapshot.reserve(plan.jobs.size());
    for (auto& job : plan.jobs) {
      plan.snapshot.push_back(*job.data);
      job.data = &plan.snapshot.back();
    }
  }
  return plan;
}

namespace {

// A save by one process alone: write, commit, or remove the temporary directory.
void save_alone(const SavePlan& plan, const std::string& dir, const SaveOptions& options) {
  const std::string tmp = prepare_save(dir);
  CheckpointRecord record = plan.record;
  try {
    for (auto& [array, sums] : write_chunks(plan, tmp, options)) {
      record.arrays.at(array).checksums = std::move(sums);
    }
    commit_save(tmp, dir, record);
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
}

// The commit protocol of a save across processes, its steps in order (run()), over the
// coordination service's key-value store and barriers, every wait bounded by options.timeout.
class CollectiveSave {
 public:
  CollectiveSave(const SavePlan& plan, const std::string& dir, const SaveOptions& options,
                 uint64_t sequence)
      : plan_(plan),
        dir_(dir),
        options_(options),
        timeout_(options.timeout.value_or(wait_timeout())),
        kv_(distributed::client()),
        prefix_(fmt::format("spmd/checkpoint/{}", sequence)),
        me_(process_index()) {}

  void run() {
    const std::string tmp = agree_on_directory();
    write_and_report(tmp);
    const Outcome outcome = me_ == 0 ? commit_or_abandon(tmp) : await_outcome();
    kv_.wait_at_barrier(prefix_ + "/done", timeout_);
    if (me_ == 0) kv_.key_value_delete(prefix_);
    if (!outcome.ok) throw Error("checkpoint: " + outcome.text);
  }

 private:
  // 1. Process 0 prepares the temporary directory; everyone learns where it is.
  std::string agree_on_directory() {
    if (me_ == 0) {
      try {
        std::string tmp = prepare_save(dir_);
        kv_.key_value_set(prefix_ + "/tmp", Outcome::success(tmp).encode(), true);
        return tmp;
      } catch (const std::exception& e) {
        kv_.key_value_set(prefix_ + "/tmp", Outcome::failure(e.what()).encode(), true);
        throw;
      }
    }
    const Outcome answer = Outcome::decode(kv_.blocking_key_value_get(prefix_ + "/tmp", timeout_));
    if (!answer.ok) {
      throw Error(
          fmt::format("checkpoint: process 0 could not start saving {}: {}", dir_, answer.text));
    }
    return answer.text;
  }

  // 2. Everyone writes its chunks and reports (its checksums, or its error), then meets the
  // others.
  void write_and_report(const std::string& tmp) {
    json status;
    try {
      status = {{"ok", true}, {"checksums", write_chunks(plan_, tmp, options_)}};
    } catch (...) {
      status = {{"ok", false}, {"error", exception_message(std::current_exception())}};
    }
    kv_.key_value_set(fmt::format("{}/status/{}", prefix_, me_), status.dump(), true);
    kv_.wait_at_barrier(prefix_ + "/written", timeout_);
  }

  // Every process's checksums gathered into the record; what went wrong, per process.
  std::vector<std::string> gather_statuses(CheckpointRecord& record) {
    std::vector<std::string> failures;
    for (int p = 0; p < process_count(); ++p) {
      const auto text = kv_.key_value_try_get(fmt::format("{}/status/{}", prefix_, p));
      const json s = json::parse(text.value_or(""), nullptr, false);
      if (!s.is_object() || !s.contains("ok")) {
        failures.push_back(fmt::format("process {} sent no readable status", p));
        continue;
      }
      if (s["ok"] != true) {
        failures.push_back(fmt::format("process {}: {}", p, s.value("error", "?")));
        continue;
      }
      for (const auto& [array, sums] : s["checksums"].items()) {
        auto it = record.arrays.find(array);
        if (it == record.arrays.end()) {
          failures.push_back(
              fmt::format("process {} wrote an array \"{}\" the others lack", p, array));
          continue;
        }
        for (const auto& [key, sum] : sums.items()) it->second.checksums[key] = sum;
      }
    }
    return failures;
  }

  // 3. Process 0 commits when everyone succeeded, else removes the temporary directory; the
  // outcome goes to everyone.
  Outcome commit_or_abandon(const std::string& tmp) {
    CheckpointRecord record = plan_.record;
    std::vector<std::string> failures = gather_statuses(record);
    Outcome outcome = Outcome::success();
    if (failures.empty()) {
      try {
        commit_save(tmp, dir_, record);
      } catch (...) {
        failures.push_back("process 0: " + exception_message(std::current_exception()));
      }
    }
    if (!failures.empty()) {
      std::error_code ec;
      fs::remove_all(tmp, ec);
      outcome = Outcome::failure(fmt::format("saving {} failed, nothing was committed: {}", dir_,
                                             fmt::join(failures, "; ")));
    }
    kv_.key_value_set(prefix_ + "/outcome", outcome.encode(), true);
    return outcome;
  }

  Outcome await_outcome() {
    return Outcome::decode(kv_.blocking_key_value_get(prefix_ + "/outcome", timeout_));
  }

  const SavePlan& plan_;
  const std::string& dir_;
  const SaveOptions& options_;
  const std::chrono::milliseconds timeout_;
  distributed::Client& kv_;
  std::string prefix_;
  int me_;
};

}  // namespace

void execute_save(const SavePlan& plan, const std::string& dir, const SaveOptions& options,
                  uint64_t sequence) {
  if (process_count() == 1) {
    save_alone(plan, dir, options);
    return;
  }
  CollectiveSave(plan, dir, options, sequence).run();
}

void save(const std::string& dir, const Tree& tree, const SaveOptions& options) {
  const SavePlan plan = plan_save(tree, options, false);
  execute_save(plan, dir, options, next_save_sequence());
}

}  // namespace spmd::checkpoint
