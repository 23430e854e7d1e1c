// The cross-mesh check of shard_map's output blocks, and their assembly into global arrays.
#include "compute/output_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include <algorithm>
#include <numeric>

#include "spmd/error.h"
#include "spmd/runtime.h"

namespace spmd {
namespace {

// Per output block, the words every device contributes: dtype, rank, up to kMaxDims dimensions
// (a hash of the rest in the last slot beyond that), and a hash of the elements (0 when
// nothing needs comparing).
constexpr size_t kMaxDims = 8;
constexpr size_t kWords = 3 + kMaxDims;

std::string device_name(const Mesh& mesh, size_t flat) {
  const Device& d = mesh.devices()[flat];
  return fmt::format("device {} (process {})", d.id(), d.process_index());
}

std::string describe_record(const uint64_t* r) {
  const auto dtype = static_cast<DType>(r[0]);
  const uint64_t rank = r[1];
  if (rank > kMaxDims) return fmt::format("{} of rank {}", dtype_name(dtype), rank);
  return fmt::format("{}[{}]", dtype_name(dtype),
                     fmt::join(std::vector<uint64_t>(r + 2, r + 2 + rank), ", "));
}

// The mesh dimensions of size > 1 that `spec` does not name.
std::vector<int> left_out(const Mesh& mesh, const PartitionSpec& spec) {
  const auto named = spec.axes();
  std::vector<int> out;
  for (int d = 0; d < static_cast<int>(mesh.axis_names().size()); ++d) {
    if (mesh.axis_sizes()[d] > 1 &&
        std::find(named.begin(), named.end(), mesh.axis_names()[d]) == named.end()) {
      out.push_back(d);
    }
  }
  return out;
}

}  // namespace

const PartitionSpec& out_spec_of(const std::vector<PartitionSpec>& out_specs, size_t k,
                                 size_t count) {
  if (out_specs.size() == 1) return out_specs[0];
  if (out_specs.size() != count) {
    throw InvalidArgument(fmt::format(
        "shard_map: the function returned {} blocks for {} out_specs; give one spec per output, "
        "or one for all",
        count, out_specs.size()));
  }
  return out_specs[k];
}

namespace {

// What each device contributes to the check: the call's identity and output count, then per
// output its dtype, rank, shape words and (where check_rep compares it) its bytes' hash. Also
// which mesh axes each output's spec leaves out (the ones its replicas are compared along).
struct OutputRecords {
  std::vector<uint64_t> words;
  std::vector<std::vector<int>> compared;  // per output
};

OutputRecords encode_records(const Mesh& mesh, uint64_t call,
                             const std::vector<PartitionSpec>& out_specs,
                             const ShardMapOptions& options, const std::vector<Block>& blocks) {
  const size_t count = blocks.size();
  OutputRecords out{std::vector<uint64_t>(2 + count * kWords, 0),
                    std::vector<std::vector<int>>(count)};
  out.words[0] = call;
  out.words[1] = count;
  for (size_t k = 0; k < count; ++k) {
    const Block& b = blocks[k];
    const PartitionSpec& spec = out_spec_of(out_specs, k, count);
    if (spec.size() > static_cast<size_t>(b.rank())) {
      throw InvalidArgument(fmt::format(
          "shard_map: output {} is a {}[{}] block, of rank {}, but its out_spec {} has {} entries",
          k, dtype_name(b.dtype()), fmt::join(b.shape(), ", "), b.rank(), spec.to_string(),
          spec.size()));
    }
    uint64_t* r = &out.words[2 + k * kWords];
    r[0] = static_cast<uint64_t>(b.dtype());
    r[1] = static_cast<uint64_t>(b.rank());
    for (size_t d = 0; d < b.shape().size() && d < kMaxDims; ++d) {
      r[2 + d] = static_cast<uint64_t>(b.shape()[d]);
    }
    if (b.shape().size() > kMaxDims) {
      r[2 + kMaxDims - 1] = XXH3_64bits(b.shape().data() + kMaxDims - 1,
                                        (b.shape().size() - kMaxDims + 1) * sizeof(int64_t));
    }
    if (options.check_rep) out.compared[k] = left_out(mesh, spec);
    if (!out.compared[k].empty()) {
      const Block here = b.to_memory(MemorySpace::host());  // a device's block, copied to hash
      r[kWords - 1] = XXH3_64bits(here.bytes().data(), here.nbytes());
    }
  }
  return out;
}

// Every device's records, gathered over the whole mesh. Every device decides from the same
// records, so all raise the same error.
class GatheredRecords {
 public:
  GatheredRecords(const Mesh& mesh, std::vector<uint64_t> all, size_t stride)
      : mesh_(mesh), all_(std::move(all)), stride_(stride) {}

  size_t devices() const { return all_.size() / stride_; }
  const uint64_t* record(size_t flat, size_t k) const {
    return &all_[flat * stride_ + 2 + k * kWords];
  }

  void check_same_call() const {
    for (size_t f = 1; f < devices(); ++f) {
      if (all_[f * stride_] == all_[0]) continue;
      throw CollectiveMismatch(fmt::format(
          "shard_map: {} and {} ran different shard_map calls (another function or other specs) "
          "whose collectives happened to line up; every process must make the same calls in the "
          "same order — look for a branch on process_index() around a shard_map",
          device_name(mesh_, 0), device_name(mesh_, f)));
    }
  }

  void check_same_shapes(size_t count) const {
    for (size_t k = 0; k < count; ++k) {
      for (size_t f = 1; f < devices(); ++f) {
        if (std::equal(record(0, k), record(0, k) + kWords - 1, record(f, k))) continue;
        throw InvalidArgument(fmt::format(
            "shard_map: output {} differs in shape across devices: {} returned {}, {} returned "
            "{}; every device must return blocks of one shape and dtype",
            k, device_name(mesh_, 0), describe_record(record(0, k)), device_name(mesh_, f),
            describe_record(record(f, k))));
      }
    }
  }

  // check_rep: output k's blocks equal along every mesh axis its spec leaves out.
  void check_replicas(size_t k, const std::vector<int>& compared, const PartitionSpec& spec) const {
    for (size_t f = 0; f < devices(); ++f) {
      // The device holding the same index as f with coordinate 0 along the left-out axes.
      auto coords = mesh_.coordinates(static_cast<int64_t>(f));
      for (int d : compared) coords[d] = 0;
      size_t rep = 0;
      for (size_t d = 0; d < coords.size(); ++d) rep = rep * mesh_.axis_sizes()[d] + coords[d];
      if (record(rep, k)[kWords - 1] == record(f, k)[kWords - 1]) continue;
      std::vector<std::string> names;
      names.reserve(compared.size());
      for (int d : compared) names.push_back(mesh_.axis_names()[d]);
      throw InvalidArgument(fmt::format(
          "shard_map: output {} has out_spec {}, which leaves out mesh axis '{}', so its blocks "
          "must be equal along it (check_rep); but {} and {} returned different values. Reduce "
          "over the axis first (psum, pmean, all_gather), name it in the out_spec, or set "
          "ShardMapOptions::check_rep = false if the difference is rounding you accept",
          k, spec.to_string(), fmt::join(names, "', '"), device_name(mesh_, rep),
          device_name(mesh_, f)));
    }
  }

 private:
  const Mesh& mesh_;
  std::vector<uint64_t> all_;
  size_t stride_;
};

}  // namespace

void check_outputs(const AxisContext& context, uint64_t call,
                   const std::vector<PartitionSpec>& out_specs, const ShardMapOptions& options,
                   const std::vector<Block>& blocks) {
  const Mesh& mesh = context.groups->mesh();
  const size_t count = blocks.size();
  if (count == 0) throw InvalidArgument("shard_map: the function returned no blocks");
  const OutputRecords mine = encode_records(mesh, call, out_specs, options, blocks);
  const auto n = static_cast<size_t>(mesh.size());
  if (n == 1) return;
  std::vector<int> all(mesh.axis_names().size());
  std::iota(all.begin(), all.end(), 0);
  std::vector<uint64_t> gathered(mine.words.size() * n);
  axes_communicator(context, all)
      .all_gather(DType::kUInt64, mine.words.data(), gathered.data(), mine.words.size());
  const GatheredRecords records(mesh, std::move(gathered), mine.words.size());
  records.check_same_call();
  records.check_same_shapes(count);
  for (size_t k = 0; k < count; ++k) {
    if (!mine.compared[k].empty()) {
      records.check_replicas(k, mine.compared[k], out_spec_of(out_specs, k, count));
    }
  }
}

std::vector<Array> assemble_outputs(const Mesh& mesh, const std::vector<PartitionSpec>& out_specs,
                                    const std::vector<int64_t>& positions,
                                    std::vector<std::vector<Block>>& results) {
  const size_t count = results[0].size();
  std::vector<Array> out;
  out.reserve(count);
  for (size_t k = 0; k < count; ++k) {
    const PartitionSpec& spec = out_spec_of(out_specs, k, count);
    const DType dtype = results[0][k].dtype();
    Shape global = results[0][k].shape();
    for (size_t d = 0; d < spec.size(); ++d) {
      for (const auto& axis : spec.entries()[d].axes()) global[d] *= mesh.axis_size(axis);
    }
    const NamedSharding sharding(mesh, spec);
    const auto map = sharding.devices_indices_map(global);
    std::vector<Shard> shards;
    shards.reserve(positions.size());
    for (size_t i = 0; i < positions.size(); ++i) {
      const auto& entry = map[positions[i]];
      HostArray data = std::move(results[i][k]).to_host();
      shards.push_back(Shard{entry.device, entry.index, entry.replica_id, std::move(data)});
    }
    out.emplace_back(std::move(global), dtype, sharding.clone(), std::move(shards),
                     process_index());
  }
  return out;
}

}  // namespace spmd
