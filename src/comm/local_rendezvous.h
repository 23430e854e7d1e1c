// Where the local participants of one process group meet for a collective: each arrives with
// its request, and the last to arrive takes all of them and runs the call once for the process;
// the others wait for its result. A value type with no lock of its own: ProcessGroup guards it
// with the lock its local participants wait on (as LocalMailbox and SplitResults).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <utility>
#include <vector>

#include "comm/request.h"

namespace spmd {

class LocalRendezvous {
 public:
  explicit LocalRendezvous(size_t participants)
      : requests_(participants), sequence_(participants, 0), arrived_(participants, false) {}

  size_t participants() const { return requests_.size(); }

  // The sequence number of local participant `local`'s next collective.
  uint64_t next_sequence(int local) { return sequence_[static_cast<size_t>(local)]++; }

  // Records `local`'s request. Returns true when it was the last to arrive: the caller then
  // runs the call over start()'s requests and reports with finish(). Otherwise the caller waits
  // until generation() moves past the value it read before arriving.
  bool arrive(int local, const Request& request) {
    requests_[static_cast<size_t>(local)] = request;
    arrived_[static_cast<size_t>(local)] = true;
    return ++arrived_count_ == static_cast<int>(requests_.size());
  }

  // The gathered requests (by local index); the rendezvous is running until finish().
  std::vector<Request> start() {
    std::fill(arrived_.begin(), arrived_.end(), false);
    arrived_count_ = 0;
    running_ = true;
    return requests_;
  }

  // Ends the running call with `error` (null on success) and releases the waiting participants.
  void finish(std::exception_ptr error) {
    last_error_ = std::move(error);
    running_ = false;
    ++generation_;
  }

  // Completed calls: a waiter's call is over when this moves past the value it arrived at.
  uint64_t generation() const { return generation_; }
  // Every participant arrived and the last is running the call.
  bool running() const { return running_; }
  // The outcome of the last completed call, for the participants that waited for it.
  const std::exception_ptr& last_error() const { return last_error_; }

  // The local participants that have not arrived at the call being gathered.
  std::vector<int> missing() const {
    std::vector<int> out;
    for (size_t i = 0; i < arrived_.size(); ++i) {
      if (!arrived_[i]) out.push_back(static_cast<int>(i));
    }
    return out;
  }

 private:
  std::vector<Request> requests_;   // by local index, for the call being gathered
  std::vector<uint64_t> sequence_;  // next collective sequence per local participant
  std::vector<bool> arrived_;
  int arrived_count_ = 0;
  bool running_ = false;
  uint64_t generation_ = 0;
  std::exception_ptr last_error_;
};

}  // namespace spmd
