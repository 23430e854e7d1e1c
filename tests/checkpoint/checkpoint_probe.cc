// Run under spmdrun: saves and restores checkpoints across processes, checking every shard's
// bytes against the formula that made them. Prints "ok …" per check, or "error …" and exits 1.
//
//   checkpoint_probe save DIR          every dtype (and rank 0 and rank 3), rows over all devices
//                                      and a (processes x local devices) grid, uneven edges
//   checkpoint_probe restore DIR       restores DIR by columns, replicated and on a grid, whatever
//                                      the process and device counts
//   checkpoint_probe crash ROOT        step 1 saved; process 1 is killed while step 2 is written
//   checkpoint_probe after-crash ROOT  step 1 restores bit-exactly, step 2 is invisible, and the
//                                      next save cleans up what the crash left
//   checkpoint_probe async DIR         save_async while shard_map computes; then restores
//   checkpoint_probe disagree ROOT     saves whose trees differ on process 1 (a bad name, a missing
//                                      array, another shape) fail on every process alike, before
//                                      anything is written; the next save pairs and commits
//   checkpoint_probe shutdown-async DIR  save_async, then distributed::shutdown() at once: the
//                                      save completes first, every shard restores afterwards
//   checkpoint_probe contend DIR       one save of a large tree; prints "ok saved" or, when another
//                                      job's save of DIR won, "ok refused …" (AlreadyExists)
//   checkpoint_probe fault ROOT SEED   saves steps 1-3 under ROOT (and tries ROOT/userdir), with a
//                                      fault SEED picks: none, a process SIGKILLed or shut down
//                                      at a random moment (fault_test.py drives it)
//   checkpoint_probe verify ROOT       every committed directory under ROOT restores to exactly
//                                      one step's values: prints "verified DIR step N", or
//                                      "unreadable DIR: why" (for damaged ones)
//   checkpoint_probe exit-async DIR    a namespace-scope AsyncCheckpointer has a save in flight
//                                      when main returns (the `restore` mode checks it after)
#include <signal.h>
#include <spmd/spmd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace ck = spmd::checkpoint;
using spmd::DType;
using spmd::HostArray;
using spmd::Shape;

// Element i of every test array: small integers, exact in every dtype.
template <typename T>
T value(int64_t i) {
  const int64_t v = (i * 7 + 3) % 101;
  if constexpr (std::is_same_v<T, bool>) {
    return i % 3 == 0;
  } else if constexpr (std::is_same_v<T, spmd::float16>) {
    return spmd::to_float16(static_cast<float>(v) + 0.5f);
  } else if constexpr (std::is_same_v<T, spmd::bfloat16>) {
    return spmd::to_bfloat16(static_cast<float>(v) + 0.5f);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v) + static_cast<T>(0.5);
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
HostArray filled(const Shape& shape) {
  std::vector<T> v(static_cast<size_t>(spmd::shape_size(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = value<T>(static_cast<int64_t>(i));
  return HostArray::from_vector(v, shape);
}

HostArray global_of(DType t, const Shape& shape) {
  switch (t) {
    case DType::kBool:
      return filled<bool>(shape);
    case DType::kInt8:
      return filled<int8_t>(shape);
    case DType::kInt16:
      return filled<int16_t>(shape);
    case DType::kInt32:
      return filled<int32_t>(shape);
    case DType::kInt64:
      return filled<int64_t>(shape);
    case DType::kUInt8:
      return filled<uint8_t>(shape);
    case DType::kUInt16:
      return filled<uint16_t>(shape);
    case DType::kUInt32:
      return filled<uint32_t>(shape);
    case DType::kUInt64:
      return filled<uint64_t>(shape);
    case DType::kFloat16:
      return filled<spmd::float16>(shape);
    case DType::kBFloat16:
      return filled<spmd::bfloat16>(shape);
    case DType::kFloat32:
      return filled<float>(shape);
    case DType::kFloat64:
      return filled<double>(shape);
  }
  return {};
}

const std::vector<DType> kAll = {DType::kBool,   DType::kInt8,    DType::kInt16,    DType::kInt32,
                                 DType::kInt64,  DType::kUInt8,   DType::kUInt16,   DType::kUInt32,
                                 DType::kUInt64, DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                 DType::kFloat64};

// Destroyed after main returns, after shutdown at exit: its save must finish (or fail) first.
ck::AsyncCheckpointer at_exit_saver;

spmd::Mesh line() { return spmd::Mesh(spmd::devices(), {"x"}); }
spmd::Mesh grid() {
  return spmd::Mesh(spmd::devices(), {spmd::process_count(), spmd::local_device_count()},
                    {"p", "l"});
}

// The saved tree: every dtype by rows over all devices (12 rows: uneven on 8 devices), float32
// on the grid, a scalar, and a rank-3 array under a nested name.
ck::Tree make_tree() {
  ck::Tree tree;
  const spmd::NamedSharding rows(line(), spmd::P("x"));
  for (DType t : kAll) {
    tree.emplace(std::string("dtypes/") + std::string(spmd::dtype_name(t)),
                 spmd::device_put(global_of(t, {12, 10}), rows));
  }
  tree.emplace("grid", spmd::device_put(global_of(DType::kFloat32, {12, 10}),
                                        spmd::NamedSharding(grid(), spmd::P("p", "l"))));
  tree.emplace("scalar", spmd::device_put(global_of(DType::kInt64, {}),
                                          spmd::NamedSharding(line(), spmd::P())));
  tree.emplace("nested/deep/cube",
               spmd::device_put(global_of(DType::kFloat64, {4, 3, 5}),
                                spmd::NamedSharding(line(), spmd::P(spmd::None, spmd::None, "x"))));
  return tree;
}

void check(const spmd::Array& a, const HostArray& whole, const std::string& what) {
  if (a.shape() != whole.shape() || a.dtype() != whole.dtype()) {
    throw spmd::Error(what + ": wrong shape or dtype: " + a.to_string());
  }
  for (const auto& s : a.addressable_shards()) {
    if (!(s.data == whole.slice(s.index))) {
      throw spmd::Error(what + ": the shard of " + s.device.to_string() + " at " +
                        spmd::index_to_string(s.index) + " differs");
    }
  }
}

// Restores every array of `dir` onto `sharding_for(name, rank)` and checks it.
void restore_and_check(
    const std::string& dir, const std::string& label,
    const std::function<std::shared_ptr<const spmd::Sharding>(const std::string&, size_t)>&
        sharding_for) {
  ck::ShardingTree targets;
  const auto info = ck::read_array_info(dir);
  for (const auto& [name, a] : info) targets[name] = sharding_for(name, a.shape.size());
  const auto tree = ck::restore(dir, targets);
  for (const auto& [name, a] : info) {
    check(tree.at(name), global_of(a.dtype, a.shape), std::string(label).append(" ").append(name));
  }
  std::printf("ok restored %zu arrays %s\n", tree.size(), label.c_str());
}

void restore_everywhere(const std::string& dir) {
  // By columns (the last dimension) over every device, whatever the saving layout was.
  restore_and_check(dir, "by columns", [](const std::string&, size_t rank) {
    std::vector<spmd::AxisEntry> entries(rank, spmd::None);
    if (rank > 0) entries.back() = "x";
    return spmd::NamedSharding(line(), spmd::PartitionSpec::from_entries(entries)).clone();
  });
  restore_and_check(dir, "replicated", [](const std::string&, size_t) {
    return spmd::NamedSharding(line(), spmd::P()).clone();
  });
  restore_and_check(dir, "on the grid", [](const std::string&, size_t rank) {
    std::vector<spmd::AxisEntry> entries(std::min<size_t>(rank, 2), spmd::None);
    if (rank >= 2) entries = {"l", "p"};
    return spmd::NamedSharding(grid(), spmd::PartitionSpec::from_entries(entries)).clone();
  });
}

// The fault test's tree at `step`: every value differs between steps (and w is incompressible, so
// a small file system fills at a predictable size).
ck::Tree fault_tree(int step) {
  std::vector<float> w(256 * 256);
  uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(step);
  for (auto& v : w) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v = static_cast<float>(x % 1000003) + static_cast<float>(step);
  }
  std::vector<int32_t> b(6, step * 1000);
  return {{"w", spmd::device_put(HostArray::from_vector(w, {256, 256}),
                                 spmd::NamedSharding(line(), spmd::P("x")))},
          {"b", spmd::device_put(HostArray::from_vector(b, {6}),
                                 spmd::NamedSharding(line(), spmd::P()))}};
}

void fault(const std::string& root, uint64_t seed) {
  const int me = spmd::process_index();
  const int victim = static_cast<int>(seed % 2);
  const int kind = static_cast<int>((seed / 2) % 3);  // 0 none, 1 SIGKILL, 2 shutdown
  const auto delay = std::chrono::microseconds((seed / 6) % 400000);
  std::thread killer;
  if (kind == 1 && me == victim) {
    killer = std::thread([delay] {
      std::this_thread::sleep_for(delay);
      ::kill(::getpid(), SIGKILL);
    });
    killer.detach();
  }
  ck::AsyncCheckpointer saver;
  for (int step = 1; step <= 3; ++step) {
    const std::string dir = root + "/step" + std::to_string(step);
    try {
      if (kind == 2 && me == victim && step == 2) {
        saver.save_async(dir, fault_tree(step));
        std::this_thread::sleep_for(delay / 8);
        spmd::distributed::shutdown();
        saver.wait_until_finished();
        std::printf("ok shut down with step 2 in flight\n");
        return;
      }
      ck::save(dir, fault_tree(step));
      std::printf("ok saved step %d\n", step);
    } catch (const spmd::Error& e) {
      std::printf("ok step %d not saved: %s\n", step, e.what());
    }
  }
  try {
    ck::save(root + "/userdir", fault_tree(1));
    std::printf("error a save into the user's directory succeeded\n");
  } catch (const spmd::Error& e) {
    std::printf("ok the user's directory refused\n");
  }
}

void verify(const std::string& root) {
  namespace fs = std::filesystem;
  const spmd::NamedSharding whole(line(), spmd::P());
  for (const auto& e : fs::directory_iterator(root)) {
    if (!ck::is_committed(e.path().string())) continue;
    try {
      const ck::Tree got = ck::restore(e.path().string(), whole);
      int matches = 0;
      int step = 0;
      for (int s = 1; s <= 3; ++s) {
        const ck::Tree want = fault_tree(s);
        bool same = got.size() == want.size();
        for (const auto& [name, a] : want) {
          same = same && got.count(name) && got.at(name).to_host() == a.to_host();
        }
        if (same) ++matches, step = s;
      }
      if (matches != 1) {
        std::printf("WRONG %s matches %d steps\n", e.path().c_str(), matches);
      } else {
        std::printf("verified %s step %d\n", e.path().c_str(), step);
      }
    } catch (const spmd::Error& err) {
      std::printf("unreadable %s: %s\n", e.path().c_str(), err.what());
    }
  }
}

// The message of the spmd::Error that f throws, with its type's name in front.
std::string failure_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const spmd::InvalidArgument& e) {
    return std::string("InvalidArgument: ") + e.what();
  } catch (const spmd::FailedPrecondition& e) {
    return std::string("FailedPrecondition: ") + e.what();
  } catch (const spmd::Error& e) {
    return std::string("Error: ") + e.what();
  }
  return "no error";
}

// Step 1 fails on every process when process 1's tree is wrong (three ways), nothing of it is
// written, and step 2 still pairs across the processes and commits.
void disagree(const std::string& root) {
  namespace fs = std::filesystem;
  const int me = spmd::process_index();
  const ck::Tree good = make_tree();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a bad name", "process 1: the array name \"../escape\" is not allowed"},
      {"a missing array", "process 1 has no array \"grid\", which process 0 saves"},
      {"another shape", "process 1 saves \"scalar\" as int64[3]"},
      {"a name that is not UTF-8", "process 1: the array name \"caf\\xe9\" is not UTF-8"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    ck::Tree tree = good;
    if (me == 1 && i == 0) tree.emplace("../escape", good.at("scalar"));
    if (me == 1 && i == 1) tree.erase("grid");
    if (me == 1 && i == 2) {
      tree.erase("scalar");
      tree.emplace("scalar", spmd::device_put(global_of(DType::kInt64, {3}),
                                              spmd::NamedSharding(line(), spmd::P())));
    }
    if (me == 1 && i == 3) tree.emplace(std::string("caf\xe9"), good.at("scalar"));
    const std::string step1 = root + "/step1";
    const std::string what = failure_of([&] { ck::save(step1, tree); });
    if (what.find("InvalidArgument: ") != 0 || what.find(cases[i].second) == std::string::npos) {
      throw spmd::Error("with " + cases[i].first + " on process 1, save said: " + what);
    }
    if (fs::exists(step1)) throw spmd::Error(step1 + " exists after a refused save");
    std::printf("ok %s on process 1 refused everywhere: %s\n", cases[i].first.c_str(),
                what.c_str());
  }
  ck::save(root + "/step2", good);
  spmd::multihost::sync_global_devices("step 2 saved");
  restore_everywhere(root + "/step2");
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: checkpoint_probe MODE DIR [SEED]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const std::string dir = argv[2];
  try {
    spmd::distributed::initialize();
    const int me = spmd::process_index();
    if (mode == "save") {
      ck::save(dir, make_tree(), {.metadata = {.step = 7, .metrics = {{"loss", 0.25}}}});
      std::printf("ok saved %s from %d processes\n", dir.c_str(), spmd::process_count());
      restore_everywhere(dir);
      const auto meta = ck::read_metadata(dir);
      if (meta.step != 7 || meta.metrics.at("loss") != 0.25) throw spmd::Error("metadata lost");
      std::printf("ok metadata step 7 loss 0.25\n");
    } else if (mode == "restore") {
      restore_everywhere(dir);
    } else if (mode == "crash") {
      ck::CheckpointManager manager(dir);
      manager.save(1, make_tree());
      std::printf("ok step 1 committed\n");
      // Step 2 is big; process 1 dies once its first chunk file of step 2 is on disk.
      ck::Tree big = make_tree();
      big.emplace("big", spmd::device_put(global_of(DType::kFloat32, {4096, 1024}),
                                          spmd::NamedSharding(line(), spmd::P("x"))));
      std::thread killer;
      if (me == 1) {
        killer = std::thread([&] {
          namespace fs = std::filesystem;
          for (int i = 0; i < 20000; ++i) {
            std::error_code ec;
            for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
              if (e.path().string().find("2.tmp-") != std::string::npos &&
                  e.path().filename().string().find('.') != 0 && e.is_regular_file()) {
                ::kill(::getpid(), SIGKILL);
              }
            }
            std::this_thread::sleep_for(std::chrono::microseconds(200));
          }
        });
      }
      manager.save(2, big, {});
      if (killer.joinable()) killer.join();
      std::printf("error step 2 was saved although process 1 was to be killed\n");
      return 1;
    } else if (mode == "after-crash") {
      ck::CheckpointManager manager(dir);
      namespace fs = std::filesystem;
      bool leftovers = false;
      for (const auto& e : fs::directory_iterator(dir)) {
        leftovers = leftovers || e.path().filename().string().find(".tmp-") != std::string::npos;
      }
      const auto steps = manager.all_steps();
      if (steps != std::vector<int64_t>{1}) throw spmd::Error("steps other than {1} are visible");
      std::printf("ok only step 1 is visible (crash leftovers present: %s)\n",
                  leftovers ? "yes" : "no");
      try {
        manager.restore(2, spmd::NamedSharding(line(), spmd::P()));
        throw spmd::Error("the half-written step 2 restored");
      } catch (const spmd::FailedPrecondition& e) {
        std::printf("ok step 2 refused: %s\n", e.what());
      }
      restore_everywhere(manager.directory(1));
      spmd::multihost::sync_global_devices("checked step 1");
      manager.save(3, make_tree());
      for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name != "1" && name != "3")
          throw spmd::Error("left behind after the next save: " + name);
      }
      std::printf("ok the next save removed the crash's leftovers; steps 1 and 3 remain\n");
    } else if (mode == "fault" && argc == 4) {
      fault(dir, std::stoull(argv[3]));
    } else if (mode == "verify") {
      verify(dir);
    } else if (mode == "disagree") {
      disagree(dir);
    } else if (mode == "shutdown-async") {
      ck::AsyncCheckpointer saver;
      saver.save_async(dir, make_tree());
      const ck::Tree tree = make_tree();
      spmd::distributed::shutdown();  // waits for the save in flight
      saver.wait_until_finished();
      const std::string late = failure_of([&] { ck::save(dir + "-late", tree); });
      if (late.find("FailedPrecondition: ") != 0 ||
          late.find("shutdown() was called") == std::string::npos) {
        throw spmd::Error("a save after shutdown() was not refused: " + late);
      }
      std::printf("ok a save after shutdown is refused: %s\n", late.c_str());
      std::printf("ok the save in flight finished before shutdown; committed: %s\n",
                  ck::is_committed(dir) ? "yes" : "no");
      // Each process alone now: every shard of every array must restore, none as zeros.
      restore_everywhere(dir);
    } else if (mode == "contend") {
      ck::Tree big = make_tree();
      big.emplace("big", spmd::device_put(global_of(DType::kFloat32, {4096, 1024}),
                                          spmd::NamedSharding(line(), spmd::P("x"))));
      try {
        ck::save(dir, big);
        std::printf("ok saved by pid %d\n", static_cast<int>(::getpid()));
      } catch (const spmd::AlreadyExists& e) {
        std::printf("ok refused: %s\n", e.what());
      }
    } else if (mode == "exit-async") {
      ck::Tree big = make_tree();
      big.emplace("big", spmd::device_put(global_of(DType::kFloat32, {2048, 1024}),
                                          spmd::NamedSharding(line(), spmd::P("x"))));
      at_exit_saver.save_async(dir, big);
      std::printf("ok returning from main with a save in flight\n");
      return 0;
    } else if (mode == "async") {
      ck::AsyncCheckpointer saver;
      const auto tree = make_tree();
      saver.save_async(dir, tree);
      // Compute while the save is written: collectives on the devices meanwhile.
      const auto total =
          spmd::shard_map([](const spmd::Block& b) { return spmd::psum(spmd::sum(b), "x"); },
                          line(), {spmd::P("x")}, spmd::P());
      double sum = 0;
      int steps = 0;
      for (; steps < 20; ++steps) {
        sum += total(tree.at("dtypes/float64")).addressable_data(0).data<double>()[0];
      }
      const bool overlapped = saver.in_progress();
      saver.wait_until_finished();
      std::printf(
          "ok %d shard_map steps ran during save_async (still saving after them: %s), "
          "sum %.1f\n",
          steps, overlapped ? "yes" : "no", sum);
      restore_everywhere(dir);
      // A failure in the background surfaces at the next call: saving over a committed one.
      saver.save_async(dir, tree);
      try {
        saver.wait_until_finished();
        throw spmd::Error("a second save into the same directory did not fail");
      } catch (const spmd::Error& e) {
        if (std::string(e.what()).find("already holds a committed checkpoint") ==
            std::string::npos) {
          throw;
        }
        std::printf("ok the background failure surfaced at wait_until_finished: %s\n", e.what());
      }
    } else {
      std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
      return 2;
    }
    return 0;
  } catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 1;
  }
}
