// Saving: the plan, the parallel chunk writes, and the protocol's messages (everyone proposes,
// process 0 decides and prepares under the save lock, everyone writes and reports, process 0
// commits, everyone learns the outcome).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "array/box_copy.h"
#include "checkpoint/chunk_io.h"
#include "checkpoint/commit.h"
#include "checkpoint/json_text.h"
#include "checkpoint/names.h"
#include "checkpoint/orbax_metadata.h"
#include "checkpoint/parallel_for.h"
#include "checkpoint/save_lock.h"
#include "checkpoint/save_plan.h"
#include "checkpoint/save_target.h"
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
  std::string encode() const { return json_text(json{{"ok", ok}, {"text", text}}); }
  static Outcome decode(const std::string& wire) {
    const json j = json::parse(wire, nullptr, false);
    if (!j.is_object() || !j.contains("ok") || !j["ok"].is_boolean() || !j.contains("text") ||
        !j["text"].is_string()) {
      return failure("an unreadable outcome (" + wire.substr(0, 80) + ")");
    }
    return {j["ok"].get<bool>(), j["text"].get<std::string>()};
  }
};

// The saves of each path this session has made, for pairing_key().
struct PathSaves {
  std::mutex mu;
  std::map<std::string, uint64_t> count;
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

std::string chunk_file(const std::string& root, const ChunkJob& job, Format format) {
  return (fs::path(array_dir(root, job.array, format)) / job.key).string();
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
  return write_file_durably(chunk_file(root, job, options.format), encoded.stored);
}

// Writes every chunk of the plan under `root`; returns the checksums by array and key.
std::map<std::string, std::map<std::string, std::string>> write_chunks(const SavePlan& plan,
                                                                       const std::string& root,
                                                                       const SaveOptions& options) {
  std::set<std::string> dirs;
  for (const auto& job : plan.jobs) dirs.insert(array_dir(root, job.array, plan.record.format));
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

std::string pairing_key(const std::string& dir) {
  const auto saves = session_object<PathSaves>();
  std::lock_guard lock(saves->mu);
  return fmt::format("spmd/checkpoint/{:016x}/{}", XXH3_64bits(dir.data(), dir.size()),
                     saves->count[dir]++);
}

namespace {

// The text of an error for another message: without the "checkpoint: " every one starts with.
std::string reason_of(const std::exception_ptr& e) {
  std::string text = exception_message(e);
  constexpr std::string_view kPrefix = "checkpoint: ";
  if (text.rfind(kPrefix, 0) == 0) text.erase(0, kPrefix.size());
  return text;
}

// Throws InvalidArgument when `name` is also a group (a prefix of another name, "a" and "a/b").
void check_not_a_group(const Tree& tree, const std::string& name) {
  const auto next = tree.lower_bound(name + "/");
  if (next != tree.end() && next->first.rfind(name + "/", 0) == 0) {
    throw InvalidArgument(fmt::format("checkpoint: \"{}\" is both an array and a group (of \"{}\")",
                                      printable(name), printable(next->first)));
  }
}

// Throws InvalidArgument for metadata JSON cannot hold.
void check_metadata(const Metadata& m) {
  for (const auto& [key, value] : m.metrics) {
    if (!is_utf8(key)) {
      throw InvalidArgument(
          fmt::format("checkpoint: the metric name \"{}\" is not UTF-8", printable(key)));
    }
  }
  for (const auto& [key, value] : m.user) {
    if (!is_utf8(key) || !is_utf8(value)) {
      throw InvalidArgument(fmt::format(
          "checkpoint: the user metadata \"{}\" is not UTF-8 text; encode bytes (base64) first",
          printable(key)));
    }
  }
}

// Points the plan's jobs at a copy of their bytes that the plan owns.
void copy_shards(SavePlan& plan) {
  size_t bytes = 0;
  for (const auto& job : plan.jobs) bytes += job.data->nbytes();
  try {
    plan.snapshot.reserve(plan.jobs.size());
    for (auto& job : plan.jobs) {
      plan.snapshot.push_back(*job.data);
      job.data = &plan.snapshot.back();
    }
  } catch (const std::bad_alloc&) {
    throw Error(fmt::format(
        "checkpoint: cannot allocate the {} bytes of this process's shards that a background "
        "save copies",
        bytes));
  }
}

// Fills `plan` from `tree`; throws what this process's checks find.
void fill_plan(SavePlan& plan, const Tree& tree, const SaveOptions& options, bool copy) {
  check_metadata(options.metadata);
  std::map<std::string, std::string> orbax_names;  // Orbax's name for a leaf -> ours
  for (const auto& [name, array] : tree) {
    name_components(name);
    check_not_a_group(tree, name);
    if (options.format == Format::kOrbax) {
      const auto [it, fresh] = orbax_names.emplace(array_path(name, Format::kOrbax)[0], name);
      if (!fresh) {
        throw InvalidArgument(fmt::format(
            "checkpoint: \"{}\" and \"{}\" are both \"{}\" in an Orbax-format checkpoint "
            "(Orbax joins a leaf's keys with '.'); rename one",
            it->second, name, it->first));
      }
    }
    const auto map = array.sharding().devices_indices_map(array.shape());
    ArrayRecord r;
    r.dtype = array.dtype();
    r.shape = array.shape();
    r.chunks = chunk_shape(array, map);
    r.compression = options.compression;
    r.sharding = array.sharding().to_string();
    if (options.format == Format::kOrbax) r.orbax_sharding = orbax_sharding(array.sharding());
    auto& writes = plan.proposal.writes[name];
    for (const auto& shard : array.addressable_shards()) {
      if (shard.replica_id != 0 || shard.data.size() == 0) continue;
      ChunkJob job{name, chunk_key(chunk_coords(name, shard.index, r.chunks)), &shard.data,
                   shard.index};
      writes.push_back(job.key);
      plan.jobs.push_back(std::move(job));
    }
    plan.proposal.arrays.emplace(name, r);
    plan.record.arrays.emplace(name, std::move(r));
  }
  if (copy) copy_shards(plan);
}

}  // namespace

SavePlan plan_save(const std::string& dir, const Tree& tree, const SaveOptions& options,
                   bool copy) {
  SavePlan plan;
  plan.record.metadata = options.metadata;
  plan.record.format = options.format;
  plan.record.sequence_nodes = options.sequence_nodes;
  plan.proposal.path = dir;
  plan.proposal.format = options.format;
  plan.proposal.step = options.metadata.step;
  plan.proposal.overwrite = options.overwrite;
  try {
    fill_plan(plan, tree, options, copy);
  } catch (...) {
    const auto e = std::current_exception();
    plan.proposal.vote = {kind_of(e), reason_of(e)};
    plan.jobs.clear();
    plan.snapshot.clear();
  }
  return plan;
}

namespace {

// "checkpoint: saving DIR was refused before anything was written: …", as its kind.
[[noreturn]] void refuse(const std::string& dir, const Verdict& v) {
  raise({v.kind, fmt::format("checkpoint: saving {} was refused before anything was written: {}",
                             dir, v.error)});
}

// Process 0's file-system steps before anything is written, under the target's save lock: the
// target resolved (what it holds refused), the lock taken, leftovers reclaimed, the temporary
// directory made.
struct Prepared {
  SaveTarget target;
  std::string save_id = new_save_id();
  std::optional<SaveLock> lock;
  std::string tmp;

  Prepared(const std::string& dir, bool overwrite)
      : target(resolve_save_target(dir, overwrite)),
        lock(SaveLock::acquire(target, save_id)),
        tmp(prepare_save(target, save_id)) {}

  // Removes the temporary directory: only this save's.
  void abandon() const {
    std::error_code ec;
    fs::remove_all(tmp, ec);
  }
};

// A save by one process alone: decide, prepare, write, commit, or remove the temporary directory.
void save_alone(const SavePlan& plan, const std::string& dir, const SaveOptions& options) {
  const Verdict verdict = decide({plan.proposal});
  if (!verdict.ok()) refuse(dir, verdict);
  const Prepared prepared(dir, options.overwrite);
  CheckpointRecord record = plan.record;
  try {
    for (auto& [array, sums] : write_chunks(plan, prepared.tmp, options)) {
      record.arrays.at(array).checksums = std::move(sums);
    }
    commit_save(prepared.tmp, prepared.target, prepared.save_id, record);
  } catch (...) {
    prepared.abandon();
    throw;
  }
}

// The protocol of a save across processes, its steps in order (run()), over the coordination
// service's key-value store and barriers, every wait bounded by the save's timeout and every
// step moving the save's deadline on (session_work.h).
class CollectiveSave {
 public:
  CollectiveSave(const SavePlan& plan, const std::string& dir, const SaveOptions& options,
                 SessionWork& work, const std::string& key)
      : plan_(plan),
        dir_(dir),
        options_(options),
        timeout_(*options.timeout),
        work_(work),
        kv_(work.client()),
        prefix_(key),
        me_(work.process_index()),
        count_(work.process_count()) {}

  void run() {
    const GoMessage go = agree();
    if (!go.verdict.ok()) {
      finish();
      refuse(dir_, go.verdict);
    }
    write_and_report(go.tmp);
    const Outcome outcome = me_ == 0 ? commit_or_abandon(go.tmp) : await_outcome();
    finish();
    if (!outcome.ok) throw Error("checkpoint: " + outcome.text);
  }

 private:
  // 1. Everyone proposes and meets the others at a barrier, which fails at once, naming it, when
  // a process has left the cluster (called shutdown()) instead of waiting for its proposal; a
  // process that is merely late is named by the barrier's timeout. Process 0 then decides and, on
  // "go", prepares the temporary directory under the save lock; everyone learns the verdict
  // (process 0 is inside this save from the barrier on, so waiting for its answer is safe).
  GoMessage agree() {
    if (me_ != 0) {
      kv_.key_value_set(fmt::format("{}/plan/{}", prefix_, me_), encode_proposal(plan_.proposal),
                        true);
    }
    work_.extend(timeout_);
    kv_.wait_at_barrier(prefix_ + "/planned", timeout_);
    if (me_ != 0) return decode_go(kv_.blocking_key_value_get(prefix_ + "/go", timeout_));
    GoMessage go;
    go.verdict = decide(gather_proposals());
    if (go.verdict.ok()) {
      try {
        prepared_.emplace(dir_, options_.overwrite);
        go.tmp = prepared_->tmp;
        go.save_id = prepared_->save_id;
      } catch (...) {
        const auto e = std::current_exception();
        go.verdict = {kind_of(e), reason_of(e)};
      }
    }
    kv_.key_value_set(prefix_ + "/go", encode_go(go), true);
    return go;
  }

  // Every process's proposal, process 0's own first, read in one request after the barrier.
  std::vector<SaveProposal> gather_proposals() {
    std::map<std::string, std::string> sent;
    for (auto& [key, value] : kv_.key_value_dir_get(prefix_ + "/plan")) sent[key] = value;
    std::vector<SaveProposal> out = {plan_.proposal};
    for (int p = 1; p < count_; ++p) {
      const auto it = sent.find(fmt::format("{}/plan/{}", prefix_, p));
      if (it != sent.end()) {
        out.push_back(decode_proposal(it->second, p));
        continue;
      }
      SaveProposal absent;  // it passed the barrier, so only another program could do this
      absent.vote = {StatusCode::kInternal, fmt::format("process {} sent no proposal", p)};
      out.push_back(std::move(absent));
    }
    return out;
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
    work_.extend(timeout_);
    kv_.key_value_set(fmt::format("{}/status/{}", prefix_, me_), json_text(status), true);
    kv_.wait_at_barrier(prefix_ + "/written", timeout_);
    work_.extend(timeout_);
  }

  // Every process's checksums gathered into the record; what went wrong, per process.
  std::vector<std::string> gather_statuses(CheckpointRecord& record) {
    std::vector<std::string> failures;
    for (int p = 0; p < count_; ++p) {
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

  // 3. Process 0 commits when everyone succeeded, else removes the temporary directory; then it
  // releases the save lock, and the outcome goes to everyone.
  Outcome commit_or_abandon(const std::string& tmp) {
    CheckpointRecord record = plan_.record;
    std::vector<std::string> failures = gather_statuses(record);
    Outcome outcome = Outcome::success();
    if (failures.empty()) {
      try {
        commit_save(tmp, prepared_->target, prepared_->save_id, record);
      } catch (...) {
        failures.push_back("process 0: " + reason_of(std::current_exception()));
      }
    }
    if (!failures.empty()) {
      prepared_->abandon();
      outcome = Outcome::failure(fmt::format("saving {} failed, nothing was committed: {}", dir_,
                                             fmt::join(failures, "; ")));
    }
    prepared_.reset();
    kv_.key_value_set(prefix_ + "/outcome", outcome.encode(), true);
    return outcome;
  }

  Outcome await_outcome() {
    return Outcome::decode(kv_.blocking_key_value_get(prefix_ + "/outcome", timeout_));
  }

  // 4. Everyone meets once more, so process 0 may delete the save's keys.
  void finish() {
    work_.extend(timeout_);
    kv_.wait_at_barrier(prefix_ + "/done", timeout_);
    if (me_ == 0) kv_.key_value_delete(prefix_);
  }

  const SavePlan& plan_;
  const std::string& dir_;
  const SaveOptions& options_;
  const std::chrono::milliseconds timeout_;
  SessionWork& work_;
  distributed::Client& kv_;
  std::string prefix_;
  int me_;
  int count_;
  std::optional<Prepared> prepared_;  // process 0's, from agree() to the commit
};

}  // namespace

SaveOptions with_timeout(const SaveOptions& options) {
  SaveOptions timed = options;
  if (!timed.timeout) timed.timeout = wait_timeout();
  return timed;
}

std::unique_ptr<SessionWork> begin_save_work(const std::string& dir, const SaveOptions& options) {
  return SessionWork::begin(fmt::format("saving checkpoint {}", dir), *options.timeout);
}

void execute_save(const SavePlan& plan, const std::string& dir, const SaveOptions& options,
                  SessionWork& work, const std::string& key) {
  if (work.process_count() == 1) {
    save_alone(plan, dir, options);
    return;
  }
  CollectiveSave(plan, dir, options, work, key).run();
}

void save(const std::string& dir, const Tree& tree, const SaveOptions& options) {
  const SaveOptions timed = with_timeout(options);
  const auto work = begin_save_work(dir, timed);
  const std::string key = pairing_key(dir);
  const SavePlan plan = plan_save(dir, tree, timed, false);
  execute_save(plan, dir, timed, *work, key);
}

}  // namespace spmd::checkpoint
