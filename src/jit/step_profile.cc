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
  StepProfile::Clock::duration first{};  // the first timing: one-time setup lands here
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
  if (it->second.count++ == 0) it->second.first = time;
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
      "spmd jit profile (SPMD_JIT_PROFILE=1), host time per step; 'later' is the mean after the "
      "first, which holds one-time setup:\n{:>10} {:>12} {:>10} {:>10}  {}\n",
      "count", "total us", "first us", "later us", "what");
  for (const auto& [what, e] : rows) {
    const auto us = [](StepProfile::Clock::duration d) {
      return std::chrono::duration<double, std::micro>(d).count();
    };
    const double later =
        e.count > 1 ? (us(e.total) - us(e.first)) / static_cast<double>(e.count - 1) : 0.0;
    out += fmt::format("{:>10} {:>12.0f} {:>10.2f} {:>10.2f}  {}\n", e.count, us(e.total),
                       us(e.first), later, what);
  }
  return out;
}

}  // namespace spmd::compiler
