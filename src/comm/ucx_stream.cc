#include "comm/ucx_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "comm/registered_memory.h"
#include "comm/waiter.h"
#include "spmd/error.h"

namespace spmd {
namespace {

// The size of one posted stream send: large enough that a message of up to kByReferenceMin
// bytes (the rest go by reference) takes a few sends, small enough to keep the window full.
constexpr size_t kSendBytes = size_t{64} << 10;

// How long a closing stream waits for UCX to flush what it sent, and a cancelled transfer for
// UCX to let go of the caller's buffer.
constexpr auto kCloseWait = std::chrono::milliseconds(1000);

bool done(void* request) {
  return request == nullptr || ucp_request_check_status(request) != UCS_INPROGRESS;
}

ucs_status_t status_of(void* request) {
  return request == nullptr ? UCS_OK : ucp_request_check_status(request);
}

void release(void* request) {
  if (request != nullptr) ucp_request_free(request);
}

// Passes the registration of the pool buffer holding [data, data + n), when it has one.
void use_registration(ucp_request_param_t& params, const void* data, size_t n) {
  if (void* memh = registration_for(data, n)) {
    params.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
    params.memh = static_cast<ucp_mem_h>(memh);
  }
}

}  // namespace

UcxStream::UcxStream(std::shared_ptr<void> keep_alive, ucp_worker_h worker, std::string peer,
                     uint32_t self_position, uint32_t peer_position, ucs_status_t* failure)
    : keep_alive_(std::move(keep_alive)),
      worker_(worker),
      peer_(std::move(peer)),
      self_position_(self_position),
      peer_position_(peer_position),
      failure_(*failure) {}

void UcxStream::connect(const ucp_address_t* address, bool across_hosts) {
  const bool peer_errors = across_hosts;
  registered_ = across_hosts;
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = address;
  params.err_mode = peer_errors ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  params.err_handler.cb = &UcxStream::on_error;
  params.err_handler.arg = &failure_;
  const ucs_status_t s = ucp_ep_create(worker_, &params, &ep_);
  if (s != UCS_OK) {
    throw Error(fmt::format(
        "UCX cannot reach {}: {} (the transports UCX_TLS allows must connect the two hosts; "
        "across hosts UCX needs a network transport such as tcp, rc or ud, not only sm)",
        peer_, ucs_status_string(s)));
  }
}

UcxStream::~UcxStream() {
  cancel();
  // What was sent goes out before the endpoint closes, unless the link is already broken; the
  // endpoint must not close with requests of ours unreleased.
  const auto until = std::chrono::steady_clock::now() + kCloseWait;
  for (Send& s : sends_) {
    if (ep_ != nullptr && failure_ == UCS_OK) {
      settle(s.request, std::chrono::duration_cast<std::chrono::milliseconds>(
                            until - std::chrono::steady_clock::now()));
    }
    release(s.request);
  }
  sends_.clear();
  close_endpoint(failure_ != UCS_OK);
}

void UcxStream::on_error(void* arg, ucp_ep_h ep, ucs_status_t status) {
  *static_cast<ucs_status_t*>(arg) = status;
}

void UcxStream::check() const {
  if (failure_ != UCS_OK) broken("the link failed", failure_);
  if (closed_) {
    throw Error(fmt::format("the UCX link to {} was closed after an earlier failure", peer_));
  }
}

void UcxStream::broken(const char* what, ucs_status_t status) const {
  throw Error(fmt::format("UCX link to {}: {}: {}", peer_, what, ucs_status_string(status)));
}

void UcxStream::reap_sends() {
  while (!sends_.empty() && done(sends_.front().request)) {
    Send& s = sends_.front();
    const ucs_status_t status = status_of(s.request);
    release(s.request);
    sends_bytes_ -= s.bytes.size();
    spare_.push_back(std::move(s.bytes));
    sends_.pop_front();
    if (status != UCS_OK) broken("a send failed", status);
  }
}

size_t UcxStream::write_direct(std::span<const std::byte> data) {
  if (direct_request_ != nullptr) {
    // Only the write in progress may come back; anything else waits for it.
    if (data.data() != direct_data_ || data.size() < direct_bytes_) return 0;
    if (!done(direct_request_)) {
      ucp_worker_progress(worker_);
      if (!done(direct_request_)) return 0;
    }
    const ucs_status_t status = status_of(direct_request_);
    release(direct_request_);
    direct_request_ = nullptr;
    if (status != UCS_OK) broken("a send failed", status);
    return direct_bytes_;
  }
  ucp_request_param_t params{};
  void* request = ucp_tag_send_nbx(ep_, data.data(), data.size(), next_send_tag(), &params);
  if (UCS_PTR_IS_ERR(request)) broken("cannot send", UCS_PTR_STATUS(request));
  if (request == nullptr) return data.size();
  direct_data_ = data.data();
  direct_bytes_ = data.size();
  direct_request_ = request;
  return 0;
}

size_t UcxStream::write_some(std::span<const std::byte> first, std::span<const std::byte> second) {
  check();
  if (!sends_.empty()) ucp_worker_progress(worker_);
  reap_sends();
  if (direct_request_ != nullptr || first.size() >= kUcxDirectMin) return write_direct(first);
  if (sends_bytes_ >= kUcxWindowBytes) return 0;
  // A header before a large payload goes alone: the payload follows without a copy.
  const size_t wanted =
      second.size() >= kUcxDirectMin ? first.size() : first.size() + second.size();
  const size_t n = std::min(wanted, kSendBytes);
  if (n == 0) return 0;
  std::vector<std::byte> bytes;
  if (!spare_.empty()) {
    bytes = std::move(spare_.back());
    spare_.pop_back();
  }
  bytes.resize(n);
  const size_t from_first = std::min(n, first.size());
  std::memcpy(bytes.data(), first.data(), from_first);
  if (n > from_first) std::memcpy(bytes.data() + from_first, second.data(), n - from_first);
  ucp_request_param_t params{};
  void* request = ucp_tag_send_nbx(ep_, bytes.data(), n, next_send_tag(), &params);
  if (UCS_PTR_IS_ERR(request)) broken("cannot send", UCS_PTR_STATUS(request));
  if (request == nullptr) {
    spare_.push_back(std::move(bytes));
  } else {
    sends_bytes_ += n;
    sends_.push_back(Send{std::move(bytes), request});
  }
  return n;
}

uint64_t UcxStream::next_send_tag() { return ucx_stream_tag(self_position_, ++sent_messages_); }

std::span<const std::byte> UcxStream::readable() {
  if (inbox_read_ < inbox_bytes_) return {inbox_.data() + inbox_read_, inbox_bytes_ - inbox_read_};
  check();
  if (inbox_request_ == nullptr) {
    // The next message of this stream, whatever its length: probed, then received into the inbox.
    ucp_worker_progress(worker_);
    ucp_tag_recv_info_t info{};
    const uint64_t tag = ucx_stream_tag(peer_position_, received_ + 1);
    ucp_tag_message_h message = ucp_tag_probe_nb(worker_, tag, ~uint64_t{0}, 1, &info);
    if (message == nullptr) {
      check();
      return {};
    }
    if (inbox_.size() < info.length) inbox_.resize(info.length);
    ucp_request_param_t params{};
    void* request = ucp_tag_msg_recv_nbx(worker_, inbox_.data(), info.length, message, &params);
    if (UCS_PTR_IS_ERR(request)) broken("cannot receive", UCS_PTR_STATUS(request));
    inbox_request_ = request;
    inbox_length_ = info.length;
    if (request == nullptr) return take_inbox();
  }
  if (!done(inbox_request_)) {
    ucp_worker_progress(worker_);
    if (!done(inbox_request_)) return {};
  }
  const ucs_status_t status = status_of(inbox_request_);
  release(inbox_request_);
  inbox_request_ = nullptr;
  if (status != UCS_OK) broken("cannot receive", status);
  return take_inbox();
}

std::span<const std::byte> UcxStream::take_inbox() {
  ++received_;
  inbox_bytes_ = inbox_length_;
  inbox_read_ = 0;
  return {inbox_.data(), inbox_bytes_};
}

void UcxStream::consume(size_t n) { inbox_read_ += n; }

std::optional<ReferenceBody> UcxStream::offer_reference(const std::byte* data, size_t bytes,
                                                        uint64_t ticket) {
  check();
  const uint64_t tag = ucx_reference_tag(self_position_, ticket);
  ucp_request_param_t params{};
  if (registered_) use_registration(params, data, bytes);
  void* request = ucp_tag_send_nbx(ep_, data, bytes, tag, &params);
  if (UCS_PTR_IS_ERR(request)) broken("cannot send a payload", UCS_PTR_STATUS(request));
  offers_.push_back(Offer{ticket, request});
  ReferenceBody body;
  body.key = tag;
  body.address = reinterpret_cast<uint64_t>(data);
  return body;
}

uint64_t UcxStream::references_done() {
  if (offers_.empty()) return references_done_;
  if (!done(offers_.front().request)) ucp_worker_progress(worker_);
  while (!offers_.empty() && done(offers_.front().request)) {
    const Offer o = offers_.front();
    offers_.pop_front();
    const ucs_status_t status = status_of(o.request);
    release(o.request);
    if (status != UCS_OK) broken("a payload was not delivered", status);
    references_done_ = o.ticket;
  }
  check();
  return references_done_;
}

void UcxStream::post_receive(Expected& e) {
  ucp_request_param_t params{};
  params.op_attr_mask = UCP_OP_ATTR_FIELD_RECV_INFO;
  params.recv_info.tag_info = &e.info;
  if (registered_) use_registration(params, e.into, e.bytes);
  void* request = ucp_tag_recv_nbx(worker_, e.into, e.bytes, e.tag, ~uint64_t{0}, &params);
  if (UCS_PTR_IS_ERR(request)) broken("cannot receive a payload", UCS_PTR_STATUS(request));
  e.request = request;
}

void UcxStream::expect_reference(std::byte* dst, size_t bytes) {
  check();
  Expected& e = expected_.emplace_back();
  e.tag = ucx_reference_tag(peer_position_, ++expected_tickets_);
  e.bytes = bytes;
  if (dst == nullptr) {
    if (!spare_receives_.empty()) {
      e.own = std::move(spare_receives_.back());
      spare_receives_.pop_back();
    }
    e.own.resize(bytes);
    dst = e.own.data();
  }
  e.into = dst;
  post_receive(e);
}

void UcxStream::await(void* request, size_t bytes, Waiter& waiter) {
  while (!done(request)) {
    if (ucp_worker_progress(worker_) != 0) {
      waiter.progressed();
      continue;
    }
    check();
    if (waiter.idle()) {
      throw DeadlineExceeded(
          fmt::format("a {}-byte payload from {} did not arrive before the collective timeout "
                      "(SPMD_COLLECTIVE_TIMEOUT, Options::collective_timeout)",
                      bytes, peer_));
    }
  }
}

const std::byte* UcxStream::fetch_reference(const ReferenceBody& body, size_t offset,
                                            std::byte* dst, size_t n, Waiter& waiter) {
  if (!handed_out_.empty()) spare_receives_.push_back(std::move(handed_out_));
  handed_out_.clear();
  if (body.key >> 40 != peer_position_) {
    throw Error(fmt::format("{} sent a by-reference payload with tag {:#x}, not one of its own",
                            peer_, body.key));
  }
  if (expected_.empty()) {  // not announced: received now, into `dst`
    Expected& e = expected_.emplace_back();
    e.tag = ucx_reference_tag(peer_position_, ++expected_tickets_);
    e.bytes = n;
    e.into = dst;
    post_receive(e);
  }
  Expected& e = expected_.front();
  if (body.key != e.tag || offset != 0 || n != e.bytes) {
    throw Error(fmt::format(
        "{} sent by-reference payload {:#x} of {} bytes where {:#x} of {} bytes was expected: "
        "the data stream is corrupt",
        peer_, body.key, n, e.tag, e.bytes));
  }
  check();
  await(e.request, n, waiter);  // on a throw, cancel() ends the receive
  if (e.request != nullptr) {
    const ucs_status_t status = ucp_tag_recv_request_test(e.request, &e.info);
    release(e.request);
    e.request = nullptr;
    if (status != UCS_OK) broken("a payload was not received", status);
  }
  if (e.info.length != n) {
    throw Error(fmt::format("{} sent a {}-byte payload where {} bytes were announced", peer_,
                            e.info.length, n));
  }
  const std::byte* at = e.into;
  handed_out_ = std::move(e.own);
  expected_.pop_front();
  return at;
}

bool UcxStream::settle(void* request, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done(request)) {
    if (ucp_worker_progress(worker_) == 0 && std::chrono::steady_clock::now() > until) return false;
  }
  return true;
}

void UcxStream::cancel() noexcept {
  // A stream send cannot be cancelled: one still using the caller's buffer closes the endpoint.
  bool stuck = direct_request_ != nullptr && !settle(direct_request_, kCloseWait);
  for (Offer& o : offers_) {
    if (done(o.request)) continue;
    ucp_request_cancel(worker_, o.request);
    stuck |= !settle(o.request, kCloseWait);
  }
  for (Expected& e : expected_) {
    if (done(e.request)) continue;
    ucp_request_cancel(worker_, e.request);
    stuck |= !settle(e.request, kCloseWait);
  }
  if (!done(inbox_request_)) {
    ucp_request_cancel(worker_, inbox_request_);
    if (!settle(inbox_request_, kCloseWait)) leaked_.push_back(std::move(inbox_));
  }
  release(inbox_request_);
  inbox_request_ = nullptr;
  if (stuck) close_endpoint(true);
  release(direct_request_);
  direct_request_ = nullptr;
  for (Offer& o : offers_) release(o.request);
  offers_.clear();
  // A receive still in progress frees itself when it completes; its buffer must outlive it.
  for (Expected& e : expected_) {
    if (!done(e.request) && !e.own.empty()) leaked_.push_back(std::move(e.own));
    release(e.request);
  }
  expected_.clear();
}

void UcxStream::close_endpoint(bool force) noexcept {
  if (ep_ == nullptr) return;
  ucp_request_param_t params{};
  params.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  params.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  void* request = ucp_ep_close_nbx(ep_, &params);
  ep_ = nullptr;
  closed_ = true;
  if (UCS_PTR_IS_ERR(request)) return;
  settle(request, kCloseWait);
  release(request);  // released on completion when it has not completed yet
}

}  // namespace spmd
