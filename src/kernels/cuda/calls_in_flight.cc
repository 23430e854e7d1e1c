#include "kernels/cuda/calls_in_flight.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <utility>
#include <vector>

#include "spmd/error.h"

namespace spmd::kernels::cuda {

int calls_in_flight_from(const char* text) {
  if (text == nullptr || *text == '\0') return kDefaultCallsInFlight;
  const char* end = text + std::strlen(text);
  int value = -1;
  const auto [at, error] = std::from_chars(text, end, value);
  if (error != std::errc() || at != end || value < 0 || value > kMostCallsInFlight) {
    throw InvalidArgument(fmt::format(
        "SPMD_GPU_CALLS_IN_FLIGHT={:?}: not a whole number from 0 to {}; it is how many jit calls "
        "may still be running on a GPU when the next one returns (0: each call waits for its "
        "own work; unset: {})",
        text, kMostCallsInFlight, kDefaultCallsInFlight));
  }
  return value;
}

CallsInFlight::CallsInFlight(int most) : most_(most) {
  if (most < 0 || most > kMostCallsInFlight) {
    throw InvalidArgument(
        fmt::format("calls in flight: {} is not from 0 to {}", most, kMostCallsInFlight));
  }
}

void CallsInFlight::queued(Wait wait) {
  std::vector<Wait> due;  // the oldest calls beyond the bound, waited for outside the lock
  {
    const std::lock_guard lock(mu_);
    waits_.push_back(std::move(wait));
    while (waits_.size() > static_cast<size_t>(most_)) {
      due.push_back(std::move(waits_.front()));
      waits_.pop_front();
    }
  }
  for (const Wait& w : due) w();
}

void CallsInFlight::clear() {
  const std::lock_guard lock(mu_);
  waits_.clear();
}

size_t CallsInFlight::pending() const {
  const std::lock_guard lock(mu_);
  return waits_.size();
}

}  // namespace spmd::kernels::cuda
