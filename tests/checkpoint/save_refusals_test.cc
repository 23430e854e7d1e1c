// What save() refuses and what it never deletes (issue 53's first rows), in one process: the
// target must be new, an empty directory, or a committed checkpoint replaced on request; one
// save per path; leftovers recognised by spmd's marker only; names and metadata JSON cannot hold
// refused before anything is written.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>

#include "checkpoint/commit.h"
#include "checkpoint/save_lock.h"
#include "checkpoint/save_target.h"
#include "spmd/checkpoint.h"
#include "spmd/checkpoint_manager.h"
#include "spmd/error.h"
#include "spmd/mesh.h"
#include "spmd/runtime.h"
#include "temp_dir_test.h"

namespace spmd::checkpoint {
namespace {

namespace fs = std::filesystem;

// Every regular file under `root` with its contents: what a test compares before and after.
std::map<std::string, std::string> manifest(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    out[fs::relative(e.path(), root).string()].assign(std::istreambuf_iterator<char>(in), {});
  }
  return out;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

class SaveRefusals : public TempDirTest {
 protected:
  static Tree tree(float offset = 0) {
    std::vector<float> v(24);
    std::iota(v.begin(), v.end(), 1.0f + offset);
    const Mesh mesh(devices(), {"x"});
    return {{"w", device_put(HostArray::from_vector(v, {4, 6}), NamedSharding(mesh, P("x")))}};
  }
  static HostArray restored(const fs::path& dir) {
    return restore(dir.string(), NamedSharding(Mesh(devices(), {"x"}), P())).at("w").to_host();
  }
  std::string path(const std::string& name) const { return (root_ / name).string(); }
};

TEST_F(SaveRefusals, NamesOrbaxCouldNotTellApartAreRefusedBeforeAnythingIsWritten) {
  Tree two = tree();
  two.emplace("a/b", two.at("w"));
  two.emplace("a.b", two.at("w"));
  SaveOptions orbax;
  orbax.format = Format::kOrbax;
  try {
    save(path("ck"), two, orbax);
    ADD_FAILURE() << "two leaves Orbax names alike were saved";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("are both \"a.b\""), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(root_ / "ck"));
  save(path("ck"), two);  // spmd's own layout keeps them apart
  EXPECT_TRUE(is_committed(path("ck")));
}

TEST_F(SaveRefusals, AUsersDirectoryIsRefusedNamingWhatItHoldsAndKeptWhole) {
  write(root_ / "run1" / "notes.txt", "my notes");
  write(root_ / "run1" / "data" / "x.bin", "bytes");
  const auto before = manifest(root_);
  const std::string what = error_of<AlreadyExists>([&] { save(path("run1"), tree()); });
  EXPECT_NE(what.find((root_ / "run1").string()), std::string::npos) << what;
  EXPECT_NE(what.find("notes.txt"), std::string::npos) << what;
  EXPECT_EQ(manifest(root_), before);
}

TEST_F(SaveRefusals, DotIsTheWorkingDirectoryAndIsRefusedWithoutEmptyingIt) {
  write(root_ / "work" / "main.cc", "int main() {}");
  const auto cwd = fs::current_path();
  fs::current_path(root_ / "work");
  const std::string what = error_of<AlreadyExists>([&] { save(".", tree()); });
  fs::current_path(cwd);
  EXPECT_NE(what.find("main.cc"), std::string::npos) << what;
  EXPECT_EQ(manifest(root_ / "work").size(), 1u);
  EXPECT_FALSE(fs::exists(root_ / "work.spmd-lock"));
}

TEST_F(SaveRefusals, DotDotIsResolvedBeforeTheCheck) {
  write(root_ / "x" / "keep.txt", "mine");
  fs::create_directories(root_ / "x" / "sub");
  for (const char* p : {"x/sub/..", "x/nothing/..", "x/"}) {
    EXPECT_THROW(save(path(p), tree()), AlreadyExists) << p;
  }
  EXPECT_EQ(manifest(root_ / "x").at("keep.txt"), "mine");
}

TEST_F(SaveRefusals, AFileIsNeverReplaced) {
  write(root_ / "notes.txt", "precious");
  EXPECT_NE(error_of<AlreadyExists>([&] { save(path("notes.txt"), tree()); }).find("a file"),
            std::string::npos);
  EXPECT_EQ(manifest(root_).at("notes.txt"), "precious");
}

TEST_F(SaveRefusals, APathInsideACommittedCheckpointIsRefusedAndTheArrayStays) {
  save(path("ckpt"), tree());
  for (const char* inside : {"ckpt/w", "ckpt/new", "ckpt/w/deeper"}) {
    EXPECT_NE(error_of<InvalidArgument>([&] {
                save(path(inside), tree());
              }).find("inside the committed checkpoint"),
              std::string::npos)
        << inside;
  }
  EXPECT_EQ(restored(root_ / "ckpt"), tree().at("w").to_host());
}

TEST_F(SaveRefusals, SiblingsNamedLikeTemporariesButNotSpmdsAreKept) {
  write(root_ / "a.tmp-mine" / "data.txt", "user's");
  write(root_ / "a.tmp-0123456789abcdef" / "x", "also the user's: no marker");
  save(path("a"), tree());
  EXPECT_TRUE(is_committed(path("a")));
  EXPECT_EQ(manifest(root_ / "a.tmp-mine").at("data.txt"), "user's");
  EXPECT_TRUE(fs::exists(root_ / "a.tmp-0123456789abcdef" / "x"));
}

TEST_F(SaveRefusals, LeftoversCarryingTheirSavesMarkerAreReclaimed) {
  const SaveTarget a = normalized_target(path("a"));
  const SaveTarget b = normalized_target(path("b"));
  fs::create_directories(temporary_dir(a, "00000000000000aa") / "w");
  write_save_marker(temporary_dir(a, "00000000000000aa"), "00000000000000aa", a);
  // A marker whose id is not the directory's, and one naming another target: not a's leftovers.
  fs::create_directories(temporary_dir(a, "00000000000000bb"));
  write_save_marker(temporary_dir(a, "00000000000000bb"), "00000000000000cc", a);
  fs::create_directories(temporary_dir(a, "00000000000000dd"));
  write_save_marker(temporary_dir(a, "00000000000000dd"), "00000000000000dd", b);
  // The target itself, renamed into place by a crashed save of an older layout, marked.
  fs::create_directories(root_ / "a" / "w");
  write_save_marker(root_ / "a", "00000000000000ee", a);
  save(path("a"), tree());
  EXPECT_TRUE(is_committed(path("a")));
  EXPECT_FALSE(fs::exists(temporary_dir(a, "00000000000000aa")));
  EXPECT_TRUE(fs::exists(temporary_dir(a, "00000000000000bb")));
  EXPECT_TRUE(fs::exists(temporary_dir(a, "00000000000000dd")));
}

TEST_F(SaveRefusals, AnEmptyDirectoryBecomesTheCheckpoint) {
  fs::create_directories(root_ / "empty");
  save(path("empty/"), tree());
  EXPECT_EQ(restored(root_ / "empty"), tree().at("w").to_host());
}

TEST_F(SaveRefusals, SymbolicLinksAreResolvedAndADanglingOneRefused) {
  fs::create_directories(root_ / "real");
  fs::create_directory_symlink(root_ / "real", root_ / "link");
  save(path("link"), tree());
  EXPECT_TRUE(fs::is_symlink(root_ / "link"));
  EXPECT_TRUE(is_committed(path("real")));
  fs::create_directory_symlink(root_ / "missing", root_ / "dangling");
  EXPECT_NE(error_of<AlreadyExists>([&] { save(path("dangling"), tree()); }).find("symbolic link"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(root_ / "missing"));
}

TEST_F(SaveRefusals, OverwriteReplacesACommittedCheckpointAndNothingElse) {
  save(path("c"), tree(0));
  EXPECT_THROW(save(path("c"), tree(100)), AlreadyExists);
  save(path("c"), tree(100), {.overwrite = true});
  EXPECT_EQ(restored(root_ / "c"), tree(100).at("w").to_host());
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root_)) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"c"});  // the old one and the lock are gone
  write(root_ / "mine" / "f", "x");
  EXPECT_THROW(save(path("mine"), tree(), {.overwrite = true}), AlreadyExists);
  EXPECT_EQ(manifest(root_ / "mine").at("f"), "x");
}

TEST_F(SaveRefusals, ADiskThatFillsExactlyAtCommitLeavesNoCommit) {
  if (::geteuid() != 0) GTEST_SKIP() << "skipped: mounting a small tmpfs needs root";
  const fs::path disk = root_ / "disk";
  fs::create_directories(disk);
  if (::mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "skipped: cannot mount a tmpfs: " << std::strerror(errno);
  }
  struct Unmount {
    fs::path at;
    ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
  } unmount{disk};
  const SaveTarget target = resolve_save_target((disk / "ck").string(), false);
  const std::string id = new_save_id();
  const fs::path tmp = prepare_save(target, id);
  CheckpointRecord record;
  record.arrays["w"] = ArrayRecord{.shape = {2}, .chunks = {2}, .checksums = {{"0", "x"}}};
  // The metadata files exist already, so rewriting them needs no new page; then the disk is
  // filled, and the first page commit_save cannot have is COMMIT's.
  for (const auto& f : {tmp / ".zgroup", tmp / "w" / ".zarray", tmp / "w" / ".zattrs",
                        tmp / "spmd_checkpoint.json", tmp / "w" / "0"}) {
    write(f, "x");
  }
  {
    std::ofstream filler(disk / "filler", std::ios::binary);
    const std::string page(4096, 'f');
    while (filler.write(page.data(), page.size()) && filler.flush()) {
    }
  }
  const std::string what = error_of<Error>([&] { commit_save(tmp, target, id, record); });
  EXPECT_NE(what.find("COMMIT"), std::string::npos) << what;
  EXPECT_NE(what.find("No space left"), std::string::npos) << what;
  EXPECT_TRUE(fs::exists(tmp / "spmd_checkpoint.json"));  // it got that far
  EXPECT_FALSE(fs::exists(target.dir));
  EXPECT_FALSE(fs::exists(tmp / "COMMIT"));
  EXPECT_FALSE(is_committed(target.dir.string()));
}

TEST_F(SaveRefusals, ASecondSaveOfAPathInProgressNamesTheHolder) {
  const SaveTarget t = normalized_target(path("busy"));
  {
    const SaveLock held = SaveLock::acquire(t, "feedfeedfeedfeed");
    const std::string what = error_of<AlreadyExists>([&] { save(path("busy"), tree()); });
    EXPECT_NE(what.find("another save of"), std::string::npos) << what;
    EXPECT_NE(what.find("pid " + std::to_string(::getpid())), std::string::npos) << what;
    EXPECT_NE(what.find("feedfeedfeedfeed"), std::string::npos) << what;
    EXPECT_NE(what.find("UTC"), std::string::npos) << what;
    EXPECT_FALSE(fs::exists(root_ / "busy"));
  }
  save(path("busy"), tree());
  EXPECT_TRUE(is_committed(path("busy")));
  EXPECT_FALSE(fs::exists(SaveLock::file_of(t)));
}

TEST_F(SaveRefusals, ALockWhoseHolderDiedIsTakenOver) {
  const SaveTarget t = normalized_target(path("orphan"));
  const pid_t child = ::fork();
  if (child == 0) {
    // Holds the lock and dies without releasing it: its record stays in the lock file.
    const SaveLock held = SaveLock::acquire(t, "deaddeaddeaddead");
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(fs::exists(SaveLock::file_of(t)));
  EXPECT_GT(fs::file_size(SaveLock::file_of(t)), 0u);
  save(path("orphan"), tree());
  EXPECT_TRUE(is_committed(path("orphan")));
  EXPECT_FALSE(fs::exists(SaveLock::file_of(t)));
}

TEST_F(SaveRefusals, NamesJsonCannotHoldOrTheCheckpointReservesAreRefusedBeforeWriting) {
  const Array w = tree().at("w");
  const std::vector<Tree> bad = {
      {{std::string("caf\xe9"), w}},      // Latin-1, not UTF-8
      {{"COMMIT", w}},                    // the commit marker's name
      {{"spmd_checkpoint.json", w}},      // the metadata's name
      {{"a", w}, {"a-", w}, {"a/b", w}},  // "a" an array and a group, "a-" between them
  };
  for (const Tree& t : bad) {
    EXPECT_THROW(save(path("bad"), t), InvalidArgument) << t.begin()->first;
    EXPECT_FALSE(fs::exists(root_ / "bad"));
  }
  EXPECT_THROW(save(path("bad"), tree(), {.metadata = {.user = {{"k", "\xff\xfe"}}}}),
               InvalidArgument);
  EXPECT_FALSE(fs::exists(root_ / "bad"));
  save(path("fine"), {{"COMMIT_log", w}, {"x/COMMIT", w}});  // only the top level is reserved
}

TEST_F(SaveRefusals, MetricsRoundTripEvenWhereJsonHasNoNumber) {
  const double inf = std::numeric_limits<double>::infinity();
  const Metadata m{.step = std::numeric_limits<int64_t>::max(),
                   .metrics = {{"nan", std::nan("")}, {"inf", inf}, {"-inf", -inf}, {"x", 0.25}}};
  save(path("m"), tree(), {.metadata = m});
  const Metadata back = read_metadata(path("m"));
  EXPECT_EQ(back.step, std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(std::isnan(back.metrics.at("nan")));
  EXPECT_EQ(back.metrics.at("inf"), inf);
  EXPECT_EQ(back.metrics.at("-inf"), -inf);
  EXPECT_EQ(back.metrics.at("x"), 0.25);
  save(path("low"), tree(), {.metadata = {.step = std::numeric_limits<int64_t>::min()}});
  EXPECT_EQ(read_metadata(path("low")).step, std::numeric_limits<int64_t>::min());
}

TEST_F(SaveRefusals, TheManagerCountsOnlyCanonicalStepNames) {
  CheckpointManager manager(path("run"), {.max_to_keep = 1});
  manager.save(1, tree());
  fs::create_directories(root_ / "run" / "007");
  write(root_ / "run" / "007" / "COMMIT", "");
  fs::copy(root_ / "run" / "1", root_ / "run" / "0001", fs::copy_options::recursive);
  fs::create_directories(root_ / "run" / "99999999999999999999");
  EXPECT_EQ(manager.all_steps(), std::vector<int64_t>{1});
  manager.save(2, tree());  // prunes step 1 once, not twice through "0001"
  EXPECT_EQ(manager.all_steps(), std::vector<int64_t>{2});
  EXPECT_TRUE(fs::exists(root_ / "run" / "0001"));  // not the manager's: left alone
  EXPECT_TRUE(fs::exists(root_ / "run" / "007"));
}

}  // namespace
}  // namespace spmd::checkpoint
