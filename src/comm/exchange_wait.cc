// What a stalled exchange says: the live view's record of whom it waits for, a peer that left
// without making the call, and the timeout naming the peers that never arrived or still owe data.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm/exchange.h"
#include "comm/peers_now.h"
#include "coord/coord_client.h"
#include "spmd/error.h"

namespace spmd {
namespace {

// How long a peer that called shutdown() may stay absent before this call gives up on it: long
// enough for messages it sent before leaving to arrive over TCP from another host, far shorter
// than the shutdown barrier the caller would otherwise wait out.
constexpr std::chrono::milliseconds kLeavingGrace{1000};

}  // namespace

void Exchange::check_leaving(const CoordClient& coord) {
  // A peer that left may still have written what this call needs before it did (its messages
  // and the service's notice travel different ways): only a peer absent for kLeavingGrace after
  // the notice was seen — every link polled again meanwhile — is declared gone.
  for (int p : active_) {
    const PeerState& s = state_[p];
    if (s.recv_next >= s.recvs.size() || s.arrived) continue;
    if (!coord.has_left(peers_[p].process)) continue;
    const auto now = Waiter::Clock::now();
    if (!leaving_since_) {
      leaving_since_ = now;
      return;
    }
    if (now - *leaving_since_ < kLeavingGrace) return;
    throw PeerFailure(fmt::format(
        "{} cannot complete in process {}: {} called shutdown() without making this call. Every "
        "process must make the same collective calls in the same order; look for a loop some "
        "processes leave early (the last-batch pitfall) or an exception one process caught and "
        "returned from",
        fingerprint_.describe(), self_process_, peers_[p].name));
  }
  leaving_since_.reset();
}

bool Exchange::absent(int position) const {
  const PeerState& s = state_[position];
  return s.recv_next < s.recvs.size() && !s.arrived;
}

void Exchange::show_wait() {
  const CoordClient* coord = waiter_->coord();
  if (coord == nullptr) return;
  std::vector<int> processes;
  for (int p : active_) {
    if (absent(p)) processes.push_back(peers_[p].process);
  }
  shown_wait_ = coord->activity().begin_wait(fingerprint_.describe(), std::move(processes),
                                             waiter_->idle_since());
}

void Exchange::timed_out() {
  std::vector<std::string> absent_names;
  std::vector<int> absent_processes;
  std::vector<std::string> owing;
  for (int p : active_) {
    const PeerState& s = state_[p];
    if (absent(p)) {
      absent_names.push_back(peers_[p].name);
      absent_processes.push_back(peers_[p].process);
    } else if (s.recv_next < s.recvs.size() || s.send_next < s.sends.size()) {
      owing.push_back(peers_[p].name);
    }
  }
  if (!absent_names.empty()) {
    throw DeadlineExceeded(
        fmt::format("{} timed out (collective timeout: SPMD_COLLECTIVE_TIMEOUT, "
                    "Options::collective_timeout) in process {}: {} did not arrive at this call; "
                    "check that every participant makes the same sequence of collective calls.{}",
                    fingerprint_.describe(), self_process_, fmt::join(absent_names, ", "),
                    describe_peers_now(waiter_->coord(), absent_processes)));
  }
  // A point-to-point send completes only when its peer receives: two processes sending to each
  // other before receiving (crossed sends) wait for each other until here.
  const bool p2p = fingerprint_.op == CollectiveOp::kSendRecv;
  throw DeadlineExceeded(fmt::format(
      "{} timed out (collective timeout: SPMD_COLLECTIVE_TIMEOUT, Options::collective_timeout) "
      "in process {} while exchanging data with {}{}",
      fingerprint_.describe(), self_process_, fmt::join(owing, ", "),
      p2p ? "; a send returns only once the peer receives: if both sides send to each other "
            "before receiving (crossed sends), neither does — receive first on one side, or use "
            "permute"
          : ""));
}

}  // namespace spmd
