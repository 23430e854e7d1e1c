// The exchange's loop: a call begins, its posted sends and receives progress together until all
// are done, and a failure cancels what still uses the caller's buffers. Sending is in
// exchange_send.cc, receiving in exchange_recv.cc, what a stalled call says in exchange_wait.cc.
#include "comm/exchange.h"

#include "coord/coord_client.h"
#include "spmd/error.h"

namespace spmd {

Exchange::Exchange(std::span<PeerLink> peers, int self_position, int self_process)
    : peers_(peers),
      self_position_(self_position),
      self_process_(self_process),
      state_(peers.size()) {}

void Exchange::begin(const Fingerprint& fingerprint, Waiter* waiter) {
  for (int p : active_) {
    PeerState& s = state_[p];
    s.sends.clear();
    s.recvs.clear();
    s.send_next = s.recv_next = 0;
    s.arrived = false;
    s.active = false;
  }
  active_.clear();
  fds_.clear();
  fingerprint_ = fingerprint;
  fingerprint_bytes_ = encode(fingerprint);
  waiter_ = waiter;
}

Exchange::PeerState& Exchange::state(int position) {
  PeerState& s = state_[position];
  if (!s.active) {
    s.active = true;
    active_.push_back(position);
    const int fd = peers_[position].in->poll_fd();
    if (fd >= 0) fds_.push_back(fd);
  }
  return s;
}

void Exchange::run() {
  // The live view's record of this call ends with it, however it ends.
  struct EndShownWait {
    Exchange& e;
    ~EndShownWait() {
      if (e.shown_wait_ == 0) return;
      if (const CoordClient* coord = e.waiter_->coord()) coord->activity().end_wait(e.shown_wait_);
      e.shown_wait_ = 0;
    }
  } end_shown{*this};
  // A failed call leaves transfers that may still use the caller's buffers (UCX's posted
  // operations): they stop before the caller gets the error and may free the buffers. (A try
  // costs a call that succeeds nothing, where a guard reading the count of exceptions in flight
  // would cost every call two reads of it.)
  try {
    try {
      run_until_done();
      if (const CoordClient* coord = waiter_->coord()) {
        coord->activity().note_finished(op_name(fingerprint_.op), fingerprint_.sequence);
      }
    } catch (const CollectiveMismatch&) {
      flush_first_headers();
      throw;
    } catch (const DeadlineExceeded&) {
      throw;
    } catch (const PeerFailure&) {
      throw;
    } catch (const Error&) {
      // A broken link usually means a dead peer, which the coordination service is about to
      // name: prefer its report (process, host, pid) to the socket's.
      waiter_->await_abort(kBrokenLinkGrace);
      throw;
    }
  } catch (...) {
    cancel_transfers();
    throw;
  }
}

void Exchange::cancel_transfers() noexcept {
  for (int p : active_) {
    peers_[p].out->cancel();
    peers_[p].in->cancel();
  }
}

void Exchange::run_until_done() {
  leaving_since_.reset();
  for (;;) {
    bool pending = false;
    bool moved = false;
    for (int p : active_) {
      PeerState& s = state_[p];
      PeerLink& link = peers_[p];
      while (s.send_next < s.sends.size()) {
        SendOp& op = s.sends[s.send_next];
        moved |= progress_send(link, op);
        if (op.sent < wire_bytes(op)) break;
        // A buffer shared by reference stays in use until the reader has copied it.
        if (op.by_reference && link.out->references_done() < op.ticket) break;
        ++s.send_next;
      }
      while (s.recv_next < s.recvs.size()) {
        RecvOp& op = s.recvs[s.recv_next];
        moved |= progress_recv(p, link, op);
        if (op.got < wire_bytes(op)) break;
        ++s.recv_next;
      }
      pending |= s.send_next < s.sends.size() || s.recv_next < s.recvs.size();
    }
    if (!pending) return;
    if (moved) {
      waiter_->progressed();
    } else if (waiter_->idle(fds_)) {
      timed_out();
    } else if (shown_wait_ == 0 && waiter_->sleeping()) {
      show_wait();
    } else if (const CoordClient* coord = waiter_->coord();
               coord != nullptr && coord->leaving_count() != 0) {
      check_leaving(*coord);
    }
  }
}

}  // namespace spmd
