// Checkpoints in one process: what is refused, what is detected, and the manager's policy. The
// multi-process behaviour is in checkpoint_probe.cc.
#include "spmd/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "spmd/checkpoint_manager.h"
#include "spmd/error.h"
#include "spmd/mesh.h"
#include "spmd/runtime.h"
#include "temp_dir_test.h"

namespace spmd::checkpoint {
namespace {

namespace fs = std::filesystem;

class CheckpointTest : public TempDirTest {
 protected:
  static Tree tree() {
    std::vector<float> v(24);
    std::iota(v.begin(), v.end(), 1.0f);
    const Mesh mesh(devices(), {"x"});
    return {{"w", device_put(HostArray::from_vector(v, {4, 6}), NamedSharding(mesh, P("x")))}};
  }
  std::string dir(const std::string& name) const { return (root_ / name).string(); }
};

TEST_F(CheckpointTest, RoundTripsAndCommits) {
  save(dir("a"), tree());
  EXPECT_TRUE(is_committed(dir("a")));
  const Tree back = restore(dir("a"), NamedSharding(Mesh(devices(), {"x"}), P()));
  EXPECT_EQ(back.at("w").to_host(), tree().at("w").to_host());
}

TEST_F(CheckpointTest, ANestedParameterTreeSavesByItsPathsAndComesBack) {
  spmd::Tree<Array> params{{"scale", tree().at("w")}};
  params["layer"]["w"] = tree().at("w");
  params["opt"]["mu"]["layer"]["w"] = tree().at("w");
  save(dir("nested"), params);
  CheckpointManager manager(dir("managed"));
  manager.save(7, params);
  const Sharding& whole = NamedSharding(Mesh(devices(), {"x"}), P());
  for (const Tree& flat : {restore(dir("nested"), whole), manager.restore(7, whole)}) {
    EXPECT_EQ(flat.count("layer/w"), 1u);
    const spmd::Tree<Array> back = spmd::tree_from_paths(flat);
    EXPECT_EQ(back.structure(), params.structure());
    EXPECT_EQ(back.at("opt").at("mu").at("layer").at("w").leaf().to_host(),
              tree().at("w").to_host());
  }
  EXPECT_TRUE(fs::is_directory(root_ / "nested" / "layer"));  // a Zarr group per dictionary
}

TEST_F(CheckpointTest, SavingOverACommittedCheckpointIsRefused) {
  save(dir("a"), tree());
  EXPECT_THROW(save(dir("a"), tree()), AlreadyExists);
}

TEST_F(CheckpointTest, AnUncommittedDirectoryIsNeverOpened) {
  save(dir("a"), tree());
  fs::remove(root_ / "a" / "COMMIT");
  EXPECT_FALSE(is_committed(dir("a")));
  EXPECT_NE(error_of<FailedPrecondition>([&] {
              restore(dir("a"), NamedSharding(Mesh(devices(), {"x"}), P()));
            }).find("not a committed checkpoint"),
            std::string::npos);
}

TEST_F(CheckpointTest, ACorruptedChunkIsAnErrorNamingTheFile) {
  save(dir("a"), tree(), {.compression = Compression::kNone});
  const fs::path chunk = root_ / "a" / "w" / "0.0";
  std::fstream f(chunk, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(5);
  f.put('\x7f');
  f.close();
  const std::string what =
      error_of<Error>([&] { restore(dir("a"), NamedSharding(Mesh(devices(), {"x"}), P())); });
  EXPECT_NE(what.find(chunk.string()), std::string::npos) << what;
  EXPECT_NE(what.find("corrupted"), std::string::npos) << what;
}

TEST_F(CheckpointTest, ATruncatedChunkIsAnErrorNamingTheFile) {
  save(dir("a"), tree());
  const fs::path chunk = root_ / "a" / "w" / "0.0";
  fs::resize_file(chunk, fs::file_size(chunk) / 2);
  const std::string what =
      error_of<Error>([&] { restore(dir("a"), NamedSharding(Mesh(devices(), {"x"}), P())); });
  EXPECT_NE(what.find(chunk.string()), std::string::npos) << what;
}

TEST_F(CheckpointTest, AMissingChunkIsAnErrorNamingTheFile) {
  save(dir("a"), tree());
  fs::remove(root_ / "a" / "w" / "0.0");
  const std::string what =
      error_of<Error>([&] { restore(dir("a"), NamedSharding(Mesh(devices(), {"x"}), P())); });
  EXPECT_NE(what.find("0.0"), std::string::npos) << what;
}

TEST_F(CheckpointTest, MetadataNamingPathsOutsideTheCheckpointIsRejected) {
  save(dir("a"), tree());
  const fs::path meta = root_ / "a" / "spmd_checkpoint.json";
  std::string text;
  {
    std::ifstream in(meta);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (const char* evil : {"../evil", "/abs", "a\\\\b"}) {
    std::string t = text;
    t.replace(t.find("\"w\""), 3, std::string("\"") + evil + "\"");
    std::ofstream(meta) << t;
    const std::string what = error_of<Error>([&] { read_array_info(dir("a")); });
    EXPECT_NE(what.find("is not allowed"), std::string::npos) << evil << ": " << what;
  }
  std::ofstream(meta) << "{not json";
  EXPECT_NE(error_of<Error>([&] { read_metadata(dir("a")); }).find("malformed"), std::string::npos);
}

TEST_F(CheckpointTest, BadTreeNamesAreRefusedBeforeAnythingIsWritten) {
  Tree t = tree();
  t.emplace("../x", t.at("w"));
  EXPECT_THROW(save(dir("a"), t), InvalidArgument);
  Tree conflict = tree();
  conflict.emplace("w/inner", conflict.at("w"));
  EXPECT_THROW(save(dir("b"), conflict), InvalidArgument);
  EXPECT_FALSE(fs::exists(root_ / "a"));
  EXPECT_FALSE(fs::exists(root_ / "b"));
}

TEST_F(CheckpointTest, AsyncFailureSurfacesAtTheNextCall) {
  AsyncCheckpointer saver;
  saver.save_async(dir("a"), tree());
  saver.wait_until_finished();
  saver.save_async(dir("a"), tree());  // fails in the background: already committed
  EXPECT_THROW(saver.save_async(dir("b"), tree()), AlreadyExists);
  saver.save_async(dir("b"), tree());
  saver.wait_until_finished();
  EXPECT_TRUE(is_committed(dir("b")));
}

TEST_F(CheckpointTest, ManagerKeepsTheNewestAndTheBest) {
  CheckpointManager manager(dir("run"), {.max_to_keep = 2, .keep_best = 1, .best_metric = "loss"});
  const double losses[] = {0.5, 0.1, 0.4, 0.3, 0.2};
  for (int64_t step = 0; step < 5; ++step) {
    EXPECT_TRUE(manager.save(step, tree(), {{"loss", losses[step]}}));
  }
  EXPECT_EQ(manager.all_steps(), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(manager.latest_step(), 4);
  EXPECT_EQ(manager.metadata(1).metrics.at("loss"), 0.1);
  EXPECT_EQ(manager.restore(1, NamedSharding(Mesh(devices(), {"x"}), P())).at("w").to_host(),
            tree().at("w").to_host());
}

TEST_F(CheckpointTest, ZeroSizeAndZeroDimensionalArraysRoundTrip) {
  const Mesh mesh(devices(), {"x"});
  const HostArray empty = HostArray::from_vector(std::vector<float>{}, {0, 6});
  const HostArray scalar = HostArray::from_vector(std::vector<double>{-0.0}, {});
  const HostArray half =
      HostArray::from_vector(std::vector<float16>{to_float16(65504.0f), to_float16(-0.0f)}, {2});
  save(dir("edges"), {{"empty", device_put(empty, NamedSharding(mesh, P(None, "x")))},
                      {"scalar", device_put(scalar, NamedSharding(mesh, P()))},
                      {"half", device_put(half, NamedSharding(mesh, P()))}});
  const Tree back = restore(dir("edges"), NamedSharding(mesh, P()));
  EXPECT_EQ(back.at("empty").to_host(), empty);
  EXPECT_EQ(back.at("empty").shape(), (Shape{0, 6}));
  EXPECT_EQ(back.at("scalar").to_host(), scalar);  // bytes: -0.0 stays negative
  EXPECT_EQ(back.at("half").to_host(), half);
}

TEST_F(CheckpointTest, ManagerKeepsTheBestIgnoringANanMetric) {
  CheckpointManager manager(dir("run"), {.max_to_keep = 1, .keep_best = 1, .best_metric = "loss"});
  const double losses[] = {std::nan(""), 0.1, std::nan(""), 0.3};
  for (int64_t step = 0; step < 4; ++step) manager.save(step, tree(), {{"loss", losses[step]}});
  EXPECT_EQ(manager.all_steps(), (std::vector<int64_t>{1, 3}));  // the best, the newest
}

TEST_F(CheckpointTest, ManagerSavesOnlyAtItsInterval) {
  CheckpointManager manager(dir("run"), {.save_interval_steps = 3});
  for (int64_t step = 0; step < 7; ++step) manager.save(step, tree());
  EXPECT_EQ(manager.all_steps(), (std::vector<int64_t>{0, 3, 6}));
  EXPECT_THROW(CheckpointManager(dir("x"), {.save_interval_steps = 0}), InvalidArgument);
}

TEST_F(CheckpointTest, ManagerIgnoresUncommittedStepsAndOtherEntries) {
  CheckpointManager manager(dir("run"));
  manager.save(1, tree());
  fs::create_directories(root_ / "run" / "2");
  fs::create_directories(root_ / "run" / "notes");
  EXPECT_EQ(manager.all_steps(), std::vector<int64_t>{1});
}

}  // namespace
}  // namespace spmd::checkpoint
