#include "coord/membership.h"

#include <fmt/format.h>

#include <utility>

namespace spmd {

Membership::Membership(int num_processes) : slots_(static_cast<size_t>(num_processes)) {
  counts_[static_cast<int>(MemberState::kEmpty)] = num_processes;
}

std::string Membership::describe(int process) const {
  const MemberInfo& i = slots_[process].info;
  return fmt::format("process {} (host {}, pid {})", process, i.hostname, i.pid);
}

void Membership::move(int process, MemberState to) {
  Slot& slot = slots_[process];
  --counts_[static_cast<int>(slot.state)];
  ++counts_[static_cast<int>(to)];
  slot.state = to;
}

bool Membership::register_pending(int process, MemberInfo info) {
  slots_[process].info = std::move(info);
  move(process, MemberState::kPending);
  return pending_count() == size();
}

void Membership::release_pending(int process) {
  move(process, MemberState::kEmpty);
  slots_[process].info = MemberInfo{};
}

void Membership::form() {
  for (int p = 0; p < size(); ++p) move(p, MemberState::kLive);
  formed_ = true;
}

std::vector<int> Membership::missing() const {
  std::vector<int> out;
  for (int p = 0; p < size(); ++p) {
    if (slots_[p].state == MemberState::kEmpty) out.push_back(p);
  }
  return out;
}

bool Membership::begin_leaving(int process) {
  if (slots_[process].state != MemberState::kLive) return false;
  move(process, MemberState::kLeaving);
  if (!first_gone_) first_gone_ = process;
  return true;
}

bool Membership::finish_leaving(int process) {
  if (slots_[process].state != MemberState::kLeaving) return false;
  move(process, MemberState::kLeft);
  return true;
}

bool Membership::has_left(int process) const {
  const MemberState s = slots_[process].state;
  return s == MemberState::kLeaving || s == MemberState::kLeft;
}

bool Membership::mark_dead(int process) {
  if (!active(process)) return false;
  move(process, MemberState::kDead);
  if (!first_dead_) first_dead_ = process;
  return true;
}

bool Membership::active(int process) const {
  const MemberState s = slots_[process].state;
  return s == MemberState::kLive || s == MemberState::kLeaving;
}

bool Membership::finished() const {
  return formed_ && count(MemberState::kLeft) + count(MemberState::kDead) == size();
}

}  // namespace spmd
