// The data loader in one process, its shards emulated with ShardOptions: the shuffle is a
// bijection, every record appears once per epoch across shards, every shard yields the same
// number of batches, a resumed loader continues exactly, and malformed files are named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <set>
#include <vector>

#include "spmd/checkpoint_manager.h"
#include "spmd/data_loader.h"
#include "spmd/data_source.h"
#include "spmd/error.h"
#include "spmd/mesh.h"
#include "spmd/runtime.h"
#include "support/error_of.h"

namespace spmd::data {
namespace {

namespace fs = std::filesystem;

NamedSharding batch_sharding() { return NamedSharding(Mesh(devices(), {"batch"}), P("batch")); }

std::shared_ptr<const Source> numbers(int64_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n) * 2);
  for (int64_t i = 0; i < n; ++i) {
    v[2 * i] = static_cast<int32_t>(i);
    v[2 * i + 1] = static_cast<int32_t>(-i);
  }
  return in_memory_source(HostArray::from_vector(v, {n, 2}));
}

TEST(Shuffle, IsABijectionForEverySizeAndDiffersBetweenEpochs) {
  for (int64_t n = 1; n <= 300; ++n) {
    std::vector<bool> seen(static_cast<size_t>(n), false);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = shuffled_index(i, n, 7, 3);
      ASSERT_GE(j, 0);
      ASSERT_LT(j, n);
      ASSERT_FALSE(seen[j]) << "n=" << n;
      seen[j] = true;
    }
  }
  int differ = 0;
  for (int64_t i = 0; i < 1000; ++i)
    differ += shuffled_index(i, 1000, 7, 0) != shuffled_index(i, 1000, 7, 1);
  EXPECT_GT(differ, 900);
  int moved = 0;
  for (int64_t i = 0; i < 1000; ++i) moved += shuffled_index(i, 1000, 7, 0) != i;
  EXPECT_GT(moved, 900);
  EXPECT_EQ(shuffled_index(123456, 1 << 30, 42, 5), shuffled_index(123456, 1 << 30, 42, 5));
  EXPECT_THROW(shuffled_index(5, 5, 0, 0), InvalidArgument);
}

// Every record exactly once per epoch across shards, equal batch counts, padding masked — for
// every record count (fewer records than shards included), batch size and shard count tried.
TEST(Loader, EveryRecordOncePerEpochAndEqualBatchCountsEverywhere) {
  for (int count = 1; count <= 4; ++count) {
    for (int64_t n : {0, 1, 2, 3, 5, 8, 13, 31}) {
      for (int64_t per : {1, 3}) {
        for (bool drop : {false, true}) {
          const int64_t batch = per * count;
          std::multiset<int64_t> seen;
          int64_t padding = 0;
          std::set<int64_t> batch_counts;
          for (int s = 0; s < count; ++s) {
            DistributedDataLoader loader(numbers(n), batch, batch_sharding(),
                                         {.shard = {.shard_index = s, .shard_count = count},
                                          .seed = 11,
                                          .drop_remainder = drop,
                                          .prefetch = s % 2 ? 2 : 0});
            batch_counts.insert(loader.batches_per_epoch());
            for (int64_t k = 0; k < loader.batches_per_epoch(); ++k) {
              const LocalBatch b = loader.next_local();
              ASSERT_EQ(b.epoch, 0);
              ASSERT_EQ(b.index, k);
              ASSERT_EQ(b.data.shape()[0], per);
              for (int64_t r = 0; r < per; ++r) {
                const auto row = b.data.data<int32_t>().subspan(static_cast<size_t>(r) * 2, 2);
                if (b.mask[r]) {
                  seen.insert(b.records[r]);
                  ASSERT_EQ(row[0], b.records[r]);
                  ASSERT_EQ(row[1], -b.records[r]);
                } else {
                  ++padding;
                  ASSERT_EQ(b.records[r], -1);
                  ASSERT_EQ(row[0], 0);
                }
              }
            }
          }
          const std::string at = "count " + std::to_string(count) + " n " + std::to_string(n) +
                                 " batch " + std::to_string(batch) + (drop ? " drop" : " pad");
          ASSERT_EQ(batch_counts.size(), 1u) << at;
          const int64_t batches = *batch_counts.begin();
          ASSERT_EQ(batches, drop ? n / batch : (n + batch - 1) / batch) << at;
          const int64_t real = drop ? batches * batch : n;
          ASSERT_EQ(static_cast<int64_t>(seen.size()), real) << at;
          ASSERT_EQ(static_cast<int64_t>(std::set<int64_t>(seen.begin(), seen.end()).size()), real)
              << at << ": a record appeared twice";
          ASSERT_EQ(padding, batches * batch - real) << at;
          if (!drop) {
            for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen.count(i), 1u) << at;
          }
        }
      }
    }
  }
}

TEST(Loader, ShardDropRemainderGivesEveryShardTheSameRecords) {
  for (int s = 0; s < 3; ++s) {
    DistributedDataLoader loader(
        numbers(10), 3, batch_sharding(),
        {.shard = {.shard_index = s, .shard_count = 3, .drop_remainder = true}});
    EXPECT_EQ(loader.shard_records(), 3);
    EXPECT_EQ(loader.batches_per_epoch(), 3);  // 9 records in batches of 3
  }
  DistributedDataLoader first(numbers(10), 3, batch_sharding(),
                              {.shard = {.shard_index = 0, .shard_count = 3}});
  EXPECT_EQ(first.shard_records(), 4);  // the first 10 % 3 shards get one more
}

std::vector<int64_t> order(DistributedDataLoader& loader, int batches) {
  std::vector<int64_t> out;
  for (int i = 0; i < batches; ++i) {
    const auto b = loader.next_local();
    out.insert(out.end(), b.records.begin(), b.records.end());
  }
  return out;
}

TEST(Loader, TheSameSeedGivesTheSameOrderAndEpochsDiffer) {
  DistributedDataLoader a(numbers(100), 10, batch_sharding(), {.seed = 5});
  DistributedDataLoader b(numbers(100), 10, batch_sharding(), {.seed = 5, .prefetch = 0});
  DistributedDataLoader c(numbers(100), 10, batch_sharding(), {.seed = 6});
  const auto first = order(a, 10);
  EXPECT_EQ(first, order(b, 10));
  EXPECT_NE(first, order(c, 10));
  EXPECT_NE(first, order(a, 10));  // epoch 1
}

TEST(Loader, ResumingAfterKBatchesContinuesTheSameSequence) {
  DistributedDataLoader a(numbers(37), 4, batch_sharding(), {.seed = 9});
  const auto all = order(a, 25);  // crosses into the second epoch (10 batches per epoch)
  DistributedDataLoader b(numbers(37), 4, batch_sharding(), {.seed = 9});
  order(b, 7);
  const std::string state = b.state();
  DistributedDataLoader c(numbers(37), 4, batch_sharding(), {.seed = 9});
  c.restore(state);
  const auto rest = order(c, 18);
  EXPECT_EQ(std::vector<int64_t>(all.begin() + std::ptrdiff_t{28}, all.end()), rest);  // 7 x 4
}

// Each row holds the record the documented order puts there: position shard + count·(k·b + r)
// of the epoch's shuffled_index order (the loader computes several at once).
TEST(Loader, RowsHoldTheRecordsOfTheDocumentedOrder) {
  for (int64_t n : {1, 2, 3, 37, 100, 1000}) {
    for (int count : {1, 3}) {
      for (int s = 0; s < count; ++s) {
        DistributedDataLoader loader(
            numbers(n), 6 * count, batch_sharding(),
            {.shard = {.shard_index = s, .shard_count = count}, .seed = 4});
        for (int64_t k = 0; k < 2 * loader.batches_per_epoch(); ++k) {
          const LocalBatch b = loader.next_local();
          for (int64_t r = 0; r < 6; ++r) {
            const int64_t position = s + count * (b.index * 6 + r);
            const int64_t want = position < n ? shuffled_index(position, n, 4, b.epoch) : -1;
            ASSERT_EQ(b.records[r], want) << "n " << n << " shard " << s << " batch " << k;
          }
        }
      }
    }
  }
}

// A state resumes on another number of shards (a job restarted on more or fewer processes): the
// next global batches hold the same records, in another row order.
TEST(Loader, AStateResumesOnAnotherShardCountWithTheSameGlobalBatches) {
  auto global_batch = [](DistributedDataLoader* shards[], int count) {
    std::multiset<int64_t> records;
    for (int s = 0; s < count; ++s) {
      for (int64_t r : shards[s]->next_local().records) records.insert(r);
    }
    return records;
  };
  DistributedDataLoader two0(numbers(37), 4, batch_sharding(),
                             {.shard = {.shard_index = 0, .shard_count = 2}, .seed = 3});
  DistributedDataLoader two1(numbers(37), 4, batch_sharding(),
                             {.shard = {.shard_index = 1, .shard_count = 2}, .seed = 3});
  DistributedDataLoader* two[] = {&two0, &two1};
  for (int k = 0; k < 5; ++k) global_batch(two, 2);
  const std::string state = two0.state();
  std::vector<std::unique_ptr<DistributedDataLoader>> four;
  DistributedDataLoader* four_ptrs[4];
  for (int s = 0; s < 4; ++s) {
    four.push_back(std::make_unique<DistributedDataLoader>(
        numbers(37), 4, batch_sharding(),
        LoaderOptions{.shard = {.shard_index = s, .shard_count = 4}, .seed = 3}));
    four.back()->restore(state);
    four_ptrs[s] = four.back().get();
  }
  for (int k = 5; k < 14; ++k) {  // past the end of epoch 0 (10 batches)
    ASSERT_EQ(global_batch(four_ptrs, 4), global_batch(two, 2)) << "batch " << k;
  }
  DistributedDataLoader dropping(
      numbers(37), 4, batch_sharding(),
      {.shard = {.shard_index = 0, .shard_count = 4, .drop_remainder = true}, .seed = 3});
  EXPECT_THROW(dropping.restore(state), InvalidArgument);
}

TEST(Loader, AStateOfAnotherSourceOrOtherOptionsIsRefused) {
  DistributedDataLoader a(numbers(37), 4, batch_sharding(), {.seed = 9});
  order(a, 3);
  DistributedDataLoader other_seed(numbers(37), 4, batch_sharding(), {.seed = 10});
  EXPECT_THROW(other_seed.restore(a.state()), InvalidArgument);
  DistributedDataLoader other_source(numbers(38), 4, batch_sharding(), {.seed = 9});
  EXPECT_THROW(other_source.restore(a.state()), InvalidArgument);
  EXPECT_THROW(a.restore("{\"epoch\": 1}"), InvalidArgument);
  EXPECT_THROW(a.restore("not json"), InvalidArgument);
}

TEST(Loader, RefusesABatchThatDoesNotSplitOverTheShards) {
  EXPECT_THROW(DistributedDataLoader(numbers(10), 5, batch_sharding(),
                                     {.shard = {.shard_index = 0, .shard_count = 2}}),
               InvalidArgument);
  EXPECT_THROW(DistributedDataLoader(numbers(10), 4, batch_sharding(),
                                     {.shard = {.shard_index = 2, .shard_count = 2}}),
               InvalidArgument);
  DistributedDataLoader none(numbers(3), 4, batch_sharding(), {.drop_remainder = true});
  EXPECT_EQ(none.batches_per_epoch(), 0);
  EXPECT_THROW(none.next_local(), FailedPrecondition);
}

TEST(Loader, GlobalBatchesCarryTheDataAndTheMask) {
  DistributedDataLoader loader(numbers(5), 4, batch_sharding(), {.shuffle = false});
  loader.next();
  const Batch last = loader.next();
  EXPECT_EQ(last.data.shape(), (Shape{4, 2}));
  const auto mask = last.mask.to_host();
  EXPECT_EQ(std::vector<bool>(mask.data<bool>().begin(), mask.data<bool>().end()),
            (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(last.data.to_host().data<int32_t>()[0], 4);
}

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("spmd-data-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write_bytes(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  fs::path dir_;
};

using spmd::testing::error_of;

TEST_F(Files, TheLoaderPositionTravelsWithACheckpointStep) {
  DistributedDataLoader loader(numbers(50), 5, batch_sharding(), {.seed = 1});
  order(loader, 4);
  checkpoint::CheckpointManager manager(path("run"));
  const Array w = device_put(HostArray::zeros(DType::kFloat32, {2}), batch_sharding());
  manager.save(4, {{"w", w}}, {}, {{"data_loader", loader.state()}});
  const auto expected = order(loader, 3);
  DistributedDataLoader resumed(numbers(50), 5, batch_sharding(), {.seed = 1});
  resumed.restore(manager.metadata(4).user.at("data_loader"));
  EXPECT_EQ(order(resumed, 3), expected);
}

TEST_F(Files, NpyRoundTripsAndADirectoryIsOneSource) {
  std::vector<float> v(12);
  std::iota(v.begin(), v.end(), 0.0f);
  fs::create_directories(dir_ / "parts");
  write_npy(path("parts/a.npy"), HostArray::from_vector(v, {4, 3}));
  write_npy(path("parts/b.npy"), HostArray::from_vector(std::vector<float>{100, 101, 102}, {1, 3}));
  const auto one = npy_source(path("parts/a.npy"));
  EXPECT_EQ(one->size(), 4);
  EXPECT_EQ(one->record_shape(), Shape{3});
  const auto both = npy_source(path("parts"));
  EXPECT_EQ(both->size(), 5);
  std::vector<float> row(3);
  both->read(4, std::as_writable_bytes(std::span<float>(row)));
  EXPECT_EQ(row, (std::vector<float>{100, 101, 102}));
  both->read(1, std::as_writable_bytes(std::span<float>(row)));
  EXPECT_EQ(row, (std::vector<float>{3, 4, 5}));
  write_npy(path("parts/c.npy"), HostArray::from_vector(std::vector<int32_t>{1, 2}, {2}));
  EXPECT_NE(error_of([&] { npy_source(path("parts")); }).find("c.npy"), std::string::npos);
}

TEST_F(Files, MalformedNpyHeadersAreNamedWithFileAndOffset) {
  write_npy(path("good.npy"), HostArray::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2}));
  std::string good;
  {
    std::ifstream in(path("good.npy"), std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto variant = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  const std::pair<std::string, std::string> cases[] = {
      {"NOTNUMPY", "magic"},
      {variant("'<f4'", "'>f4'"), "big-endian"},
      {variant("False", "True "), "Fortran"},
      {variant("(2, 2)", "(2, x)"), "integers"},
      {variant("'shape'", "'shope'"), "'shape'"},
      {good.substr(0, good.size() - 4), "promises 16 bytes"},
      {good.substr(0, 9), "magic"},
  };
  int i = 0;
  for (const auto& [bytes, text] : cases) {
    const std::string name = "bad" + std::to_string(i++) + ".npy";
    write_bytes(name, bytes);
    const std::string what = error_of([&] { npy_source(path(name)); });
    EXPECT_NE(what.find(path(name)), std::string::npos) << what;
    EXPECT_NE(what.find("at byte"), std::string::npos) << what;
    EXPECT_NE(what.find(text), std::string::npos) << what;
  }
}

TEST_F(Files, RecordFilesRoundTripAndRejectBadIndexes) {
  {
    RecordWriter w(path("r.rec"), DType::kInt64, {2});
    for (int64_t i = 0; i < 5; ++i)
      w.append(HostArray::from_vector(std::vector<int64_t>{i, i * i}, {2}));
    EXPECT_THROW(w.append(HostArray::zeros(DType::kInt32, {2})), InvalidArgument);
    w.close();
  }
  const auto src = record_file_source(path("r.rec"));
  EXPECT_EQ(src->size(), 5);
  std::vector<int64_t> row(2);
  src->read(3, std::as_writable_bytes(std::span<int64_t>(row)));
  EXPECT_EQ(row, (std::vector<int64_t>{3, 9}));
  std::string bytes;
  {
    std::ifstream in(path("r.rec"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  write_bytes("cut.rec", bytes.substr(0, bytes.size() - 3));
  EXPECT_NE(error_of([&] { record_file_source(path("cut.rec")); }).find("footer"),
            std::string::npos);
  std::string evil = bytes;
  const size_t index_at = bytes.size() - 16 - size_t{8} * 5;
  evil[index_at + size_t{8} * 2 + 7] = '\x7f';  // record 2's offset far past the end
  write_bytes("evil.rec", evil);
  const std::string what = error_of([&] { record_file_source(path("evil.rec")); });
  EXPECT_NE(what.find("record 2"), std::string::npos) << what;
  EXPECT_NE(what.find(path("evil.rec")), std::string::npos) << what;
}

}  // namespace
}  // namespace spmd::data
