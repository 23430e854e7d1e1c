// Restore trusts nothing it reads (issue 53, "restore trusts nothing"): crafted metadata, FIFOs,
// links and oversized files are each an spmd::Error naming the file, within bounded time and
// memory, never a crash, a hang or a bare std::bad_alloc. The property runs in a forked child
// under RLIMIT_AS and alarm(), so a case that allocated without bound or hung fails the test
// instead of the machine.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "spmd/checkpoint.h"
#include "spmd/error.h"
#include "spmd/mesh.h"
#include "spmd/runtime.h"
#include "temp_dir_test.h"

namespace spmd::checkpoint {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class RestoreUntrusted : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    std::vector<float> v(48);
    std::iota(v.begin(), v.end(), 0.5f);
    const Mesh mesh(devices(), {"x"});
    original_ = HostArray::from_vector(v, {8, 6});
    save(dir(), {{"w", device_put(original_, NamedSharding(mesh, P("x")))}});
    meta_ = read_json(root_ / "ck" / "spmd_checkpoint.json");
  }
  std::string dir() const { return (root_ / "ck").string(); }
  static json read_json(const fs::path& p) {
    std::ifstream in(p);
    return json::parse(in);
  }
  void write_meta(const json& j) const {
    std::ofstream(root_ / "ck" / "spmd_checkpoint.json") << j.dump();
  }
  // The restore's error message; "restored" when it succeeded with the original values,
  // "WRONG VALUES" when it succeeded with others.
  std::string outcome() const {
    try {
      const Tree t = restore(dir(), NamedSharding(Mesh(devices(), {"x"}), P()));
      return t.at("w").to_host() == original_ ? "restored" : "WRONG VALUES";
    } catch (const Error& e) {
      return e.what();
    }
  }

  HostArray original_;
  json meta_;
};

// Each extent within 2^48, their product beyond int64: the metadata is malformed (shape_size's
// check, the one every shape product goes through).
TEST_F(RestoreUntrusted, ExtentsWhoseProductOverflowsAreMalformed) {
  json j = meta_;
  j["arrays"]["w"]["shape"] = {int64_t{1} << 48, int64_t{1} << 16};
  j["arrays"]["w"]["chunks"] = {int64_t{1} << 48, int64_t{1} << 16};
  write_meta(j);
  EXPECT_NE(outcome().find("shape: the shape (281474976710656, 65536) has more elements than "
                           "int64 can count"),
            std::string::npos)
      << outcome();
  j["arrays"]["w"]["shape"] = {8, 6};
  write_meta(j);
  EXPECT_NE(outcome().find("chunks: the shape (281474976710656, 65536) has more elements"),
            std::string::npos)
      << outcome();
}

TEST_F(RestoreUntrusted, AHugeGridIsRefusedBeforeAnyChunkIsListed) {
  json j = meta_;
  j["arrays"]["w"]["shape"] = {int64_t{1000000000000}, 6};
  write_meta(j);
  EXPECT_NE(outcome().find("its grid has"), std::string::npos) << outcome();
}

TEST_F(RestoreUntrusted, ChunksLargerThanTheArrayAreAnError) {
  json j = meta_;
  j["arrays"]["w"]["chunks"] = {64, 6};
  write_meta(j);
  EXPECT_NE(outcome().find("exceeds the array's extent"), std::string::npos) << outcome();
}

TEST_F(RestoreUntrusted, AFifoInPlaceOfAFileIsAnErrorNotAHang) {
  for (const fs::path& p : {root_ / "ck" / "spmd_checkpoint.json", root_ / "ck" / "w" / "0.0",
                            root_ / "ck" / "w" / ".zarray"}) {
    const fs::path saved = p.string() + ".saved";
    fs::rename(p, saved);
    ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0);
    const std::string what = outcome();
    EXPECT_NE(what.find("a FIFO"), std::string::npos) << what;
    EXPECT_NE(what.find(p.string()), std::string::npos) << what;
    fs::remove(p);
    fs::rename(saved, p);
  }
  EXPECT_EQ(outcome(), "restored");
}

TEST_F(RestoreUntrusted, LinksInsideTheCheckpointAreRefused) {
  std::ofstream(root_ / "elsewhere") << "outside";
  const fs::path chunk = root_ / "ck" / "w" / "0.0";
  fs::remove(chunk);
  fs::create_symlink(root_ / "elsewhere", chunk);
  EXPECT_NE(outcome().find("symbolic link"), std::string::npos) << outcome();
  fs::remove(chunk);
  fs::rename(root_ / "ck" / "w", root_ / "w-real");
  fs::create_directory_symlink(root_ / "w-real", root_ / "ck" / "w");
  EXPECT_NE(outcome().find("symbolic link"), std::string::npos) << outcome();
}

TEST_F(RestoreUntrusted, ADisagreeingZarrayIsAnError) {
  const fs::path zarray = root_ / "ck" / "w" / ".zarray";
  json z = read_json(zarray);
  z["shape"] = {8, 7};
  std::ofstream(zarray) << z.dump();
  const std::string what = outcome();
  EXPECT_NE(what.find(".zarray"), std::string::npos) << what;
  EXPECT_NE(what.find("\"shape\""), std::string::npos) << what;
}

TEST_F(RestoreUntrusted, ACompressedChunkLargerThanItsBoundIsNotRead) {
  const fs::path chunk = root_ / "ck" / "w" / "0.0";
  fs::resize_file(chunk, 1 << 20);  // a chunk of 24 floats compresses to far less
  const std::string what = outcome();
  EXPECT_NE(what.find("more than the"), std::string::npos) << what;
  EXPECT_NE(what.find(chunk.string()), std::string::npos) << what;
}

TEST_F(RestoreUntrusted, MetricsThatAreNotNumbersAndStepsPastInt64AreMalformed) {
  json j = meta_;
  j["metadata"]["metrics"]["loss"] = "low";
  write_meta(j);
  EXPECT_THROW(read_metadata(dir()), Error);
  j = meta_;
  j["metadata"]["step"] = uint64_t{1} << 63;
  write_meta(j);
  EXPECT_THROW(read_metadata(dir()), Error);
}

// A random edit of a valid metadata document: a field replaced by an extreme integer, a string,
// a list or null; a chunk key renamed; an array renamed.
json mutated(json j) {
  json& w = j["arrays"]["w"];
  const int which = *rc::gen::inRange(0, 8);
  const auto extreme =
      rc::gen::element<json>(0, -1, 1, 7, 8, int64_t{1} << 31, int64_t{1} << 47, int64_t{1} << 48,
                             int64_t{1} << 62, std::numeric_limits<int64_t>::max(),
                             uint64_t{1} << 63, 1e300, "8", nullptr, json::array(), json::object());
  switch (which) {
    case 0:
      w["shape"][*rc::gen::inRange(0, 2)] = *extreme;
      break;
    case 1:
      w["chunks"][*rc::gen::inRange(0, 2)] = *extreme;
      break;
    case 2:
      w["shape"] =
          *rc::gen::container<std::vector<int64_t>>(rc::gen::inRange<int64_t>(0, int64_t{1} << 40));
      break;
    case 3:
      w["dtype"] = *rc::gen::element<json>("float64", "bool", "int8", "complex", 3, nullptr);
      break;
    case 4: {
      json sums = json::object();
      const auto suffix = *rc::gen::element<std::string>("", "x", ".0", "0", "/0");
      for (const auto& [k, v] : w["checksums"].items()) sums[k + suffix] = v;
      w["checksums"] = sums;
      break;
    }
    case 5:
      w["compressor"] = *rc::gen::element<json>("none", "zstd", "gzip", 1);
      break;
    case 6:
      j["arrays"][*rc::gen::element<std::string>("../w", "w/..", "", "COMMIT", "v")] = w;
      break;
    default:
      j["version"] = *extreme;
      break;
  }
  return j;
}

TEST_F(RestoreUntrusted, EveryCraftedDocumentIsAnErrorOrTheTruthWithinBoundedMemoryAndTime) {
  const pid_t child = ::fork();
  if (child == 0) {
    const rlimit memory{rlim_t{4} << 30, rlim_t{4} << 30};
    ::setrlimit(RLIMIT_AS, &memory);
    ::alarm(120);
    const bool ok = rc::check("a crafted document restores the truth or is an spmd::Error", [&] {
      write_meta(mutated(meta_));
      const std::string got = outcome();
      RC_ASSERT(got != "WRONG VALUES");
    });
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status)
                                 << " (SIGALRM: a hang; SIGSEGV/SIGABRT: a crash)";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace spmd::checkpoint
