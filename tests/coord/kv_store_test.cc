#include "coord/kv_store.h"

#include <gtest/gtest.h>

namespace spmd {
namespace {

TEST(KvStore, SetWithoutOverwriteKeepsTheFirstValue) {
  KvStore kv;
  EXPECT_TRUE(kv.set("a", "1", false));
  EXPECT_FALSE(kv.set("a", "2", false));
  EXPECT_EQ(*kv.find("a"), "1");
  EXPECT_TRUE(kv.set("a", "3", true));
  EXPECT_EQ(*kv.find("a"), "3");
}

TEST(KvStore, ValuesMayHoldAnyBytes) {
  KvStore kv;
  const std::string bytes("a\0b\xff", 4);
  kv.set("k", bytes, false);
  EXPECT_EQ(*kv.find("k"), bytes);
}

TEST(KvStore, DirGetReturnsOnlyKeysUnderTheDirectory) {
  KvStore kv;
  for (const char* k : {"job/a", "job/b/c", "jobs/x", "job", "other/a"}) kv.set(k, k, false);
  auto entries = kv.dir_get("job");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].first, "job/a");
  EXPECT_EQ(entries[1].first, "job/b/c");
  EXPECT_EQ(kv.dir_get("job/").size(), 2u);
  EXPECT_TRUE(kv.dir_get("none").empty());
}

TEST(KvStore, EraseRemovesTheKeyAndEverythingUnderIt) {
  KvStore kv;
  for (const char* k : {"d", "d/1", "d/2/3", "dx"}) kv.set(k, "v", false);
  kv.erase("d");
  EXPECT_EQ(kv.find("d"), nullptr);
  EXPECT_EQ(kv.find("d/1"), nullptr);
  EXPECT_EQ(kv.find("d/2/3"), nullptr);
  EXPECT_NE(kv.find("dx"), nullptr);
  kv.erase("absent");  // not an error
}

TEST(KvStore, IncrementCreatesAtZeroAndRejectsNonIntegers) {
  KvStore kv;
  EXPECT_EQ(std::get<int64_t>(kv.increment("n", 5)), 5);
  EXPECT_EQ(std::get<int64_t>(kv.increment("n", -7)), -2);
  EXPECT_EQ(*kv.find("n"), "-2");
  kv.set("s", "12abc", false);
  EXPECT_TRUE(std::holds_alternative<std::string>(kv.increment("s", 1)));
  EXPECT_EQ(*kv.find("s"), "12abc");
  kv.set("big", std::to_string(INT64_MAX), false);
  EXPECT_TRUE(std::holds_alternative<std::string>(kv.increment("big", 1)));
}

TEST(KvStore, WaitersRunOnceWhenTheKeyIsSet) {
  KvStore kv;
  int calls = 0;
  std::string seen;
  kv.wait("k", [&](const std::string& v) {
    ++calls;
    seen = v;
  });
  kv.set("other", "x", false);
  EXPECT_EQ(calls, 0);
  kv.set("k", "value", false);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, "value");
  kv.set("k", "again", true);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(kv.waiter_count(), 0u);
}

TEST(KvStore, CancelledWaitersNeverRun) {
  KvStore kv;
  int calls = 0;
  const uint64_t token = kv.wait("k", [&](const std::string&) { ++calls; });
  EXPECT_TRUE(kv.cancel_wait(token));
  EXPECT_FALSE(kv.cancel_wait(token));
  kv.set("k", "v", false);
  EXPECT_EQ(calls, 0);
}

TEST(KvStore, IncrementWakesWaiters) {
  KvStore kv;
  std::string seen;
  kv.wait("c", [&](const std::string& v) { seen = v; });
  kv.increment("c", 3);
  EXPECT_EQ(seen, "3");
}

}  // namespace
}  // namespace spmd
