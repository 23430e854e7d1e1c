#include "comm/process_group.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "coord/coord_client.h"
#include "spmd/error.h"

namespace spmd {
namespace {

// How long a closing group waits for its TCP peers to close their sides (see ~ProcessGroup).
constexpr auto kLingerOnClose = std::chrono::seconds(1);

// How often a local participant waiting for the others rechecks the abort flag.
constexpr auto kLocalWaitSlice = std::chrono::milliseconds(20);

}  // namespace

ProcessGroup::ProcessGroup(GroupLayout layout, CommHandles handles)
    : layout_(std::move(layout)),
      handles_(std::move(handles)),
      timeout_(handles_.options.collective_timeout),
      links_(layout_.positions()),
      rendezvous_(layout_.local_ranks.size()),
      assist_([this] {
        std::lock_guard lock(mu_);
        cv_.notify_all();
      }) {}

std::shared_ptr<CoordClient> ProcessGroup::coord() const {
  if (!multi_process_) return nullptr;
  std::shared_ptr<CoordClient> client = coord_.lock();
  if (!client) {
    throw FailedPrecondition(
        "spmd::distributed::shutdown() was called: this communicator's processes are no longer "
        "connected; communicators do not outlive the runtime session they were made in");
  }
  return client;
}

ProcessGroup::~ProcessGroup() {
  // A socket closed with unread data in it resets the connection, and a reset makes the peer's
  // kernel drop what this process sent last — such as the message telling the peer that its call
  // mismatched. So: stop sending, read and discard until every peer has closed its side too, for
  // a bounded time, then close.
  std::vector<pollfd> fds;
  for (const PeerLink& l : links_) {
    if (!l.connected()) continue;
    for (int fd : l.in->sockets()) {
      ::shutdown(fd, SHUT_WR);
      fds.push_back({fd, POLLIN, 0});
    }
  }
  const auto until = Waiter::Clock::now() + kLingerOnClose;
  std::vector<char> sink(size_t{64} << 10);
  while (!fds.empty() && Waiter::Clock::now() < until) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Waiter::Clock::now());
    if (::poll(fds.data(), fds.size(), static_cast<int>(left.count()) + 1) <= 0) break;
    for (pollfd& p : fds) {
      if (p.revents == 0) continue;
      const ssize_t n = ::recv(p.fd, sink.data(), sink.size(), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) p.fd = -1;
    }
    std::erase_if(fds, [](const pollfd& p) { return p.fd < 0; });
  }
}

std::string ProcessGroup::transports() const {
  std::string out;
  for (const char* name : {"shm", "tcp", "ucx"}) {
    const bool used = std::any_of(links_.begin(), links_.end(), [&](const PeerLink& l) {
      return l.connected() && std::strcmp(l.out->transport(), name) == 0;
    });
    if (used) out += out.empty() ? name : std::string("+") + name;
  }
  return out.empty() ? "local" : out;
}

std::optional<Waiter::Clock::time_point> ProcessGroup::deadline() const {
  if (!timeout_) return std::nullopt;
  return Waiter::Clock::now() + *timeout_;
}

std::string ProcessGroup::describe_local(int local) const {
  const int rank = layout_.local_ranks[local];
  return fmt::format("rank {} (device {})", rank, layout_.devices[rank]);
}

void ProcessGroup::throw_if_closed() const {
  if (!closed_.empty()) {
    throw FailedPrecondition(fmt::format(
        "this communicator is closed because an earlier call failed ({}); create a new one",
        closed_));
  }
}

void ProcessGroup::close(const std::string& why) {
  if (closed_.empty()) closed_ = why;
  closed_flag_.store(true, std::memory_order_release);
}

void ProcessGroup::abandon(const std::string& why) {
  std::lock_guard lock(mu_);
  close(why);
  cv_.notify_all();
}

Fingerprint ProcessGroup::fingerprint(uint64_t sequence, const Request& request) const {
  Fingerprint fp;
  fp.sequence = sequence;
  fp.group = layout_.id;
  fp.op = request.op;
  fp.dtype = request.dtype;
  fp.reduce = request.reduce;
  fp.root = request.root;
  fp.count = request.count;
  fp.then = request.buffers.then != nullptr;
  return fp;
}

template <class Done, class Expired>
void ProcessGroup::wait_locally(std::unique_lock<std::mutex>& lock, Done done,
                                std::optional<Waiter::Clock::time_point> until, Expired expired) {
  while (!done()) {
    if (assist_.has_work()) {  // the runner shares its work: take parts of it
      lock.unlock();
      assist_.help();
      lock.lock();
      continue;
    }
    cv_.wait_for(lock, kLocalWaitSlice);
    if (done()) return;
    Waiter(coord().get(), std::nullopt).check_abort();
    if (!closed_.empty()) throw_if_closed();
    if (until && Waiter::Clock::now() >= *until) expired();
  }
}

void ProcessGroup::run(int local, const Request& request) {
  if (rendezvous_.participants() == 1) {
    // No one to meet: the engine's lock alone orders calls (from several threads, should a
    // program share one participant's handle), which keeps the small-message path short.
    std::lock_guard engine(engine_mu_);
    if (closed_flag_.load(std::memory_order_acquire)) {
      std::lock_guard lock(mu_);
      throw_if_closed();
    }
    execute_locked(fingerprint(rendezvous_.next_sequence(0), request), {&request, 1});
    return;
  }
  std::unique_lock lock(mu_);
  throw_if_closed();
  const Fingerprint fp = fingerprint(rendezvous_.next_sequence(local), request);
  const uint64_t generation = rendezvous_.generation();
  if (!rendezvous_.arrive(local, request)) {
    wait_for_runner(lock, fp, generation);
    return;
  }
  // The last to arrive runs the call for everyone.
  const std::vector<Request> requests = rendezvous_.start();
  lock.unlock();
  std::exception_ptr error;
  try {
    execute(fp, requests);
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  rendezvous_.finish(error);
  cv_.notify_all();
  lock.unlock();
  if (error) std::rethrow_exception(error);
}

void ProcessGroup::wait_for_runner(std::unique_lock<std::mutex>& lock, const Fingerprint& fp,
                                   uint64_t generation) {
  wait_locally(
      lock, [&] { return rendezvous_.generation() != generation; }, deadline(),
      [&] {
        // Once everyone has arrived the call is running, and the runner's deadline governs it.
        if (rendezvous_.running()) return;
        std::vector<std::string> missing;
        for (int i : rendezvous_.missing()) missing.push_back(describe_local(i));
        const std::string why = fmt::format(
            "{} timed out (collective timeout: SPMD_COLLECTIVE_TIMEOUT, "
            "Options::collective_timeout) in process {}: its local participants {} "
            "did not arrive",
            fp.describe(), handles_.view->process_index, fmt::join(missing, ", "));
        close(why);
        cv_.notify_all();
        throw DeadlineExceeded(why);
      });
  if (rendezvous_.last_error()) std::rethrow_exception(rendezvous_.last_error());
}

void ProcessGroup::execute(const Fingerprint& mine, std::span<const Request> requests) {
  std::lock_guard engine(engine_mu_);
  execute_locked(mine, requests);
}

void ProcessGroup::execute_locked(const Fingerprint& mine, std::span<const Request> requests) {
  // The call as the first local participant made it; the others must agree with it before
  // anything crosses processes.
  const Fingerprint fp = fingerprint(mine.sequence, requests[0]);
  std::optional<Fingerprint> odd;
  for (size_t i = 1; i < requests.size() && !odd; ++i) {
    const Fingerprint f = fingerprint(mine.sequence, requests[i]);
    if (!(f == fp)) odd = f;
  }
  const std::shared_ptr<CoordClient> client = coord();
  Waiter waiter = Waiter::with_timeout(client.get(), timeout_);
  exchange_->begin(fp, &waiter);
  try {
    if (odd) {
      std::vector<int> peers;
      for (int q = 0; q < layout_.positions(); ++q) {
        if (q != layout_.self) peers.push_back(q);
      }
      exchange_->forward_mismatch(peers, *odd, handles_.view->process_index);
      throw CollectiveMismatch(
          fmt::format("the local participants of process {} made different calls: {} and {}; every "
                      "participant must make the same sequence of collective calls",
                      handles_.view->process_index, fp.describe(), odd->describe()));
    }
    // One participant (the common case) needs no allocation on this path.
    LocalBuffers one = requests[0].buffers;
    std::vector<LocalBuffers> many;
    if (requests.size() > 1) {
      for (const Request& r : requests) many.push_back(r.buffers);
    }
    std::span<const LocalBuffers> buffers =
        requests.size() > 1 ? std::span<const LocalBuffers>(many) : std::span(&one, 1);
    Call call{fp,
              wire_dtype(fp),
              buffers,
              requests[0].pairs,
              requests[0].send_counts,
              requests[0].recv_counts,
              requests[0].send_segments,
              requests[0].recv_segments,
              layout_,
              *exchange_,
              scratch_,
              requests.size() > 1 ? &assist_ : nullptr};
    run_call(call);
  } catch (const Error& e) {
    std::lock_guard lock(mu_);
    close(e.what());
    throw;
  }
}

// A message from rank `sender`; its sequence number is set under mu_ by the caller.
Fingerprint ProcessGroup::p2p_fingerprint(DType dtype, int sender, uint64_t count) const {
  Request r;
  r.op = CollectiveOp::kSendRecv;
  r.dtype = dtype;
  r.root = sender;
  r.count = count;
  return fingerprint(0, r);
}

void ProcessGroup::send(int local, int peer, DType dtype, const void* data, uint64_t count) {
  const int me = layout_.local_ranks[local];
  const int position = layout_.rank_position[peer];
  const size_t bytes = count * dtype_size(dtype);
  Fingerprint fp = p2p_fingerprint(dtype, me, count);
  {
    std::lock_guard lock(mu_);
    throw_if_closed();
    fp.sequence = mailbox_.next_sent(me, peer);
    if (position == layout_.self) {
      mailbox_.post(me, peer, static_cast<const std::byte*>(data), bytes);
      cv_.notify_all();
      return;
    }
  }
  point_to_point(fp, position, data, nullptr, bytes);
}

void ProcessGroup::recv(int local, int peer, DType dtype, void* data, uint64_t count) {
  const int me = layout_.local_ranks[local];
  const int position = layout_.rank_position[peer];
  const size_t bytes = count * dtype_size(dtype);
  Fingerprint fp = p2p_fingerprint(dtype, peer, count);
  {
    std::unique_lock lock(mu_);
    throw_if_closed();
    fp.sequence = mailbox_.next_received(peer, me);
    if (position == layout_.self) {
      wait_locally(
          lock, [&] { return mailbox_.has(peer, me); }, deadline(),
          [&] {
            throw DeadlineExceeded(fmt::format(
                "recv #{} from rank {} timed out (collective timeout: SPMD_COLLECTIVE_TIMEOUT, "
                "Options::collective_timeout): rank {} did not send",
                fp.sequence, peer, peer));
          });
      std::vector<std::byte> message = mailbox_.take(peer, me);
      if (message.size() != bytes) {
        throw CollectiveMismatch(
            fmt::format("recv #{} of rank {} expects {} bytes from rank {}, which sent {}",
                        fp.sequence, me, bytes, peer, message.size()));
      }
      std::memcpy(data, message.data(), bytes);
      return;
    }
  }
  point_to_point(fp, position, nullptr, data, bytes);
}

void ProcessGroup::point_to_point(const Fingerprint& fp, int position, const void* out, void* in,
                                  size_t bytes) {
  std::lock_guard engine(engine_mu_);
  const std::shared_ptr<CoordClient> client = coord();
  Waiter waiter = Waiter::with_timeout(client.get(), timeout_);
  exchange_->begin(fp, &waiter);
  if (out != nullptr) {
    exchange_->send(position, out, bytes);
  } else {
    exchange_->recv_into(position, in, bytes);
  }
  try {
    exchange_->run();
  } catch (const Error& e) {
    std::lock_guard lock(mu_);
    close(e.what());
    throw;
  }
}

std::shared_ptr<ProcessGroup> ProcessGroup::split_result(
    uint64_t split, int color, const std::function<std::shared_ptr<ProcessGroup>()>& make,
    bool maker) {
  if (maker) {
    std::shared_ptr<ProcessGroup> made;
    std::string error;
    try {
      made = make();
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard lock(mu_);
    if (made) {
      splits_.put(split, color, made);
    } else {
      splits_.put_error(split, color, error);
    }
    cv_.notify_all();
    if (!made) throw Error(error);
    return made;
  }
  std::unique_lock lock(mu_);
  // The maker is a local participant making the same split collectively: it always ends with a
  // result or an error (its own waits have deadlines), so this wait needs none of its own.
  wait_locally(
      lock, [&] { return splits_.has(split, color); }, std::nullopt, [] {});
  if (auto group = splits_.group(split, color)) return group;
  throw Error(splits_.error(split, color));
}

}  // namespace spmd
