// The loader: which records each shard's rows hold (see data_loader.h), a prefetching thread,
// global arrays from the local rows, and the resumable cursor.
#include "spmd/data_loader.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "data/shuffle.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

namespace spmd::data {

struct DistributedDataLoader::Impl {
  std::shared_ptr<const Source> source;
  int64_t global_batch = 0;
  NamedSharding sharding;
  NamedSharding mask_sharding;
  LoaderOptions options;
  int shard = 0;
  int count = 1;
  int64_t local_batch = 0;  // rows per shard per batch
  int64_t used = 0;         // records taken per epoch (all, or a multiple of count)
  int64_t batches = 0;
  std::string fingerprint;

  // The consumer's cursor: the next batch next_local() returns.
  int64_t epoch = 0;
  int64_t index = 0;

  // The prefetching thread and its queue of batches made from the cursor on.
  std::thread worker;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<LocalBatch> queue;
  bool stopping = false;
  std::exception_ptr error;

  Impl(std::shared_ptr<const Source> records, int64_t batch_size, NamedSharding batch_sharding,
       LoaderOptions loader_options)
      : source(std::move(records)),
        global_batch(batch_size),
        sharding(std::move(batch_sharding)),
        mask_sharding(sharding.mesh(), sharding.spec().size() > 0
                                           ? PartitionSpec(sharding.spec().entries()[0])
                                           : PartitionSpec()),
        options(loader_options) {}

  // This process's share of batch `batch_index` of `epoch`, read.
  LocalBatch read_batch(int64_t epoch_number, int64_t batch_index) const {
    LocalBatch out = choose_records(epoch_number, batch_index);
    read_rows(out);
    return out;
  }

  // Which records this process's rows of the batch hold (-1 and a false mask past the end).
  LocalBatch choose_records(int64_t epoch_number, int64_t batch_index) const {
    LocalBatch out;
    out.epoch = epoch_number;
    out.index = batch_index;
    out.records.resize(static_cast<size_t>(local_batch));
    out.mask.resize(static_cast<size_t>(local_batch));
    // Row r holds position first + r·count of the epoch's order, while that is below `used`.
    const int64_t first = shard + count * batch_index * local_batch;
    const int64_t real = std::clamp<int64_t>((used - first + count - 1) / count, 0, local_batch);
    const std::span<int64_t> rows(out.records.data(), static_cast<size_t>(real));
    if (options.shuffle) {
      Shuffle(source->size(), options.seed, epoch_number).fill(first, count, rows);
    } else {
      for (int64_t r = 0; r < real; ++r) rows[static_cast<size_t>(r)] = first + r * count;
    }
    for (int64_t r = 0; r < local_batch; ++r) out.mask[r] = r < real;
    std::fill(out.records.begin() + real, out.records.end(), -1);
    return out;
  }

  // Reads the chosen records into the batch's rows; rows past the end are zeros.
  void read_rows(LocalBatch& out) const {
    Shape shape = source->record_shape();
    shape.insert(shape.begin(), local_batch);
    out.data = HostArray::uninitialized(source->dtype(), shape);
    source->read_many(out.records, out.data.mutable_bytes());
  }

  // The batch after (epoch_number, batch_index).
  void advance(int64_t& epoch_number, int64_t& batch_index) const {
    if (++batch_index == batches) {
      batch_index = 0;
      ++epoch_number;
    }
  }

  // The prefetching thread: reads batches from (epoch_number, batch_index) on into the queue.
  void run(int64_t epoch_number, int64_t batch_index) {
    try {
      while (true) {
        LocalBatch b = read_batch(epoch_number, batch_index);
        advance(epoch_number, batch_index);
        std::unique_lock lock(mu);
        cv.wait(lock,
                [&] { return stopping || queue.size() < static_cast<size_t>(options.prefetch); });
        if (stopping) return;
        queue.push_back(std::move(b));
        cv.notify_all();
      }
    } catch (...) {
      std::lock_guard lock(mu);
      error = std::current_exception();
      cv.notify_all();
    }
  }

  void halt() {
    {
      std::lock_guard lock(mu);
      stopping = true;
    }
    cv.notify_all();
    if (worker.joinable()) worker.join();
    std::lock_guard lock(mu);
    stopping = false;
    queue.clear();
    error = nullptr;
  }

  LocalBatch next_local() {
    if (batches == 0) {
      throw FailedPrecondition(fmt::format(
          "data: the loader yields no batches ({} records, global batch {}{})", source->size(),
          global_batch, options.drop_remainder ? ", drop_remainder" : ""));
    }
    LocalBatch b;
    if (options.prefetch <= 0) {
      b = read_batch(epoch, index);
    } else {
      if (!worker.joinable()) {
        worker = std::thread([this, e = epoch, k = index] { run(e, k); });
      }
      std::unique_lock lock(mu);
      // The producer only reads local data: it either delivers or stores its error.
      cv.wait(lock, [&] { return !queue.empty() || error; });
      if (queue.empty()) std::rethrow_exception(error);
      b = std::move(queue.front());
      queue.pop_front();
      cv.notify_all();
    }
    advance(epoch, index);
    return b;
  }
};

namespace {

// The global array whose rows this process holds in `local`: handed over without a copy when
// one device of this process holds them all (one device per process), else sliced per device.
Array global_of(const NamedSharding& sharding, HostArray local, const Shape& shape) {
  const int me = process_index();
  const DeviceIndex* only = nullptr;
  int mine = 0;
  const auto map = sharding.devices_indices_map(shape);
  for (const auto& e : map) {
    if (e.device.process_index() == me && ++mine == 1) only = &e;
  }
  if (mine == 1 && index_extents(only->index) == local.shape()) {
    const DType dtype = local.dtype();
    std::vector<Shard> shards;
    shards.push_back(Shard{only->device, only->index, only->replica_id, std::move(local)});
    return Array(shape, dtype, sharding.clone(), std::move(shards), me);
  }
  return make_array_from_process_local_data(sharding, local, shape);
}

// LoaderOptions::prefetch's default: a reading thread only where this host has a core to spare
// for it beside every spmd process on it.
int default_prefetch() {
  const std::string& host = local_devices().front().host_id();
  std::set<int> processes;
  for (const Device& d : devices()) {
    if (d.host_id() == host) processes.insert(d.process_index());
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores >= 2 * std::max<size_t>(processes.size(), 1) ? 2 : 0;
}

}  // namespace

DistributedDataLoader::DistributedDataLoader(std::shared_ptr<const Source> source,
                                             int64_t global_batch_size, NamedSharding sharding,
                                             LoaderOptions options)
    : impl_(std::make_unique<Impl>(std::move(source), global_batch_size, std::move(sharding),
                                   options)) {
  Impl& m = *impl_;
  if (!m.source) throw InvalidArgument("data: the loader needs a source");
  m.count = options.shard.shard_count < 0 ? process_count() : options.shard.shard_count;
  m.shard = options.shard.shard_index < 0 ? process_index() : options.shard.shard_index;
  if (m.count < 1 || m.shard < 0 || m.shard >= m.count) {
    throw InvalidArgument(fmt::format("data: shard {} of {} does not exist", m.shard, m.count));
  }
  if (global_batch_size < 1) {
    throw InvalidArgument(fmt::format(
        "data: global_batch_size must be a positive number of records, got {}", global_batch_size));
  }
  if (global_batch_size % m.count != 0) {
    throw InvalidArgument(fmt::format(
        "data: a global batch of {} does not split evenly over {} shards; use a multiple of {}",
        global_batch_size, m.count, m.count));
  }
  m.local_batch = global_batch_size / m.count;
  if (m.options.prefetch < 0) m.options.prefetch = default_prefetch();
  const int64_t n = m.source->size();
  m.used = options.shard.drop_remainder ? n / m.count * m.count : n;
  m.batches = options.drop_remainder ? m.used / global_batch_size
                                     : (m.used + global_batch_size - 1) / global_batch_size;
  // Global batch k holds positions [k·B, (k+1)·B) of the global order whatever the number of
  // shards, unless the shards drop a remainder that depends on it: only then does the count
  // belong to what a state means.
  const std::string shards =
      options.shard.drop_remainder ? fmt::format("{} dropping", m.count) : "any";
  const std::string identity =
      fmt::format("{}|batch {}|shards {}|shuffle {}|seed {}|drop {}", m.source->fingerprint(),
                  global_batch_size, shards, options.shuffle, options.seed, options.drop_remainder);
  m.fingerprint = fmt::format("{:016x}", XXH3_64bits(identity.data(), identity.size()));
}

DistributedDataLoader::~DistributedDataLoader() { impl_->halt(); }

int64_t DistributedDataLoader::batches_per_epoch() const { return impl_->batches; }

int64_t DistributedDataLoader::shard_records() const {
  const Impl& m = *impl_;
  return m.used / m.count + (m.shard < m.used % m.count ? 1 : 0);
}

LocalBatch DistributedDataLoader::next_local() { return impl_->next_local(); }

Batch DistributedDataLoader::next() {
  LocalBatch local = impl_->next_local();
  Shape shape = local.data.shape();
  shape[0] = impl_->global_batch;
  HostArray mask = HostArray::uninitialized(DType::kBool, {impl_->local_batch});
  auto m = mask.mutable_data<bool>();
  for (size_t r = 0; r < local.mask.size(); ++r) m[r] = local.mask[r];
  Array data = global_of(impl_->sharding, std::move(local.data), shape);
  return Batch{local.epoch, local.index, std::move(data),
               global_of(impl_->mask_sharding, std::move(mask), Shape{impl_->global_batch})};
}

std::string DistributedDataLoader::state() const {
  const nlohmann::json j = {{"epoch", impl_->epoch},
                            {"batch", impl_->index},
                            {"seed", impl_->options.seed},
                            {"fingerprint", impl_->fingerprint}};
  return j.dump();
}

void DistributedDataLoader::restore(const std::string& state) {
  const auto j = nlohmann::json::parse(state, nullptr, false);
  auto bad = [&](const std::string& why) {
    return InvalidArgument("data: cannot restore the loader from " + state + ": " + why);
  };
  if (!j.is_object() || !j.contains("epoch") || !j.contains("batch") ||
      !j.contains("fingerprint") || !j["epoch"].is_number_integer() ||
      !j["batch"].is_number_integer() || !j["fingerprint"].is_string()) {
    throw bad("not a loader state");
  }
  if (j["fingerprint"] != impl_->fingerprint) {
    throw bad(
        "it was saved over another source or with other options (batch size, shuffle, seed, "
        "drop_remainder, or a shard count that drops a remainder)");
  }
  const int64_t epoch = j["epoch"];
  const int64_t batch = j["batch"];
  if (epoch < 0 || batch < 0 || batch >= std::max<int64_t>(impl_->batches, 1)) {
    throw bad("its position is out of range");
  }
  impl_->halt();
  impl_->epoch = epoch;
  impl_->index = batch;
}

}  // namespace spmd::data
