#include "jit/step_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>
#include <vector>

namespace spmd::compiler {
namespace {

struct Entry {
  int64_t count = 0;
  StepProfile::Clock::duration total{};
};

std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, Entry, std::less<>>& entries() {
  static auto* e = new std::map<std::string, Entry, std::less<>>;  // read at exit: never freed
  return *e;
}

void print_at_exit() {
  StepProfile* p = StepProfile::active();
  if (p != nullptr) std::fputs(p->table().c_str(), stderr);
}

}  // namespace

StepProfile* StepProfile::active() {
  static StepProfile* const profile = []() -> StepProfile* {
    const char* v = std::getenv("SPMD_JIT_PROFILE");
    if (v == nullptr || std::string_view(v) != "1") return nullptr;
    auto* p = new StepProfile;
    std::atexit(print_at_exit);
    return p;
  }();
  return profile;
}

void StepProfile::add(std::string_view what, Clock::duration time) {
  const std::lock_guard lock(table_mutex());
  auto it = entries().find(what);
  if (it == entries().end()) it = entries().emplace(std::string(what), Entry{}).first;
  ++it->second.count;
  it->second.total += time;
}

std::string StepProfile::table() const {
  std::vector<std::pair<std::string, Entry>> rows;
  {
    const std::lock_guard lock(table_mutex());
    rows.assign(entries().begin(), entries().end());
  }
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
  std::string out = fmt::format(
      "spmd jit profile (SPMD_JIT_PROFILE=1), host time per step:\n"
      "{:>10} {:>12} {:>10}  {}\n",
      "count", "total us", "mean us", "what");
  for (const auto& [what, e] : rows) {
    const double total = std::chrono::duration<double, std::micro>(e.total).count();
    out += fmt::format("{:>10} {:>12.0f} {:>10.2f}  {}\n", e.count, total,
                       total / static_cast<double>(e.count), what);
  }
  return out;
}

}  // namespace spmd::compiler
