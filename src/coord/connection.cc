#include "coord/connection.h"

#include <fmt/format.h>

#include <cstring>

namespace spmd {

namespace {
std::string describe_peer(const asio::ip::tcp::socket& socket) {
  asio::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  if (ec) return "unknown peer";
  return fmt::format("{}:{}", ep.address().to_string(), ep.port());
}
}  // namespace

FramedConnection::FramedConnection(asio::ip::tcp::socket socket)
    : socket_(std::move(socket)), peer_(describe_peer(socket_)) {
  asio::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  socket_.non_blocking(true, ignored);
}

namespace {
// The read buffer's initial size: coordination messages are small, and a service holds one
// buffer per process. It grows to hold a larger frame.
constexpr size_t kReadChunk = 2048;
// A buffer grown past this for one large frame (a topology, a big key-value entry) shrinks back.
constexpr size_t kShrinkAbove = 1u << 20;
}  // namespace

void FramedConnection::start(MessageHandler on_message, CloseHandler on_close) {
  on_message_ = std::move(on_message);
  on_close_ = std::move(on_close);
  read_buf_.resize(kReadChunk);
  asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->read_more(); });
}

bool FramedConnection::deliver_frames() {
  while (!closed_) {
    const size_t available = read_end_ - read_begin_;
    if (available < kFrameHeaderBytes) break;
    FrameHeader header;
    std::memcpy(header.data(), read_buf_.data() + read_begin_, kFrameHeaderBytes);
    auto decoded = decode_frame_header(header);
    if (auto* err = std::get_if<FrameError>(&decoded)) {
      finish("invalid frame: " + err->reason);
      return false;
    }
    const uint32_t length = std::get<uint32_t>(decoded);
    if (length > max_frame_bytes_) {
      finish(
          fmt::format("invalid frame: it declares {} bytes, more than the {} this connection "
                      "accepts",
                      length, max_frame_bytes_));
      return false;
    }
    if (available - kFrameHeaderBytes < length) {
      // Make room for the whole frame; the length was bounded by decode_frame_header.
      if (read_buf_.size() < kFrameHeaderBytes + length) {
        read_buf_.resize(kFrameHeaderBytes + length);
      }
      break;
    }
    const char* payload = read_buf_.data() + read_begin_ + kFrameHeaderBytes;
    read_begin_ += kFrameHeaderBytes + length;
    on_message_(std::string_view(payload, length));
  }
  // Move the unconsumed tail to the front so the next read appends after it.
  if (read_begin_ > 0) {
    std::memmove(read_buf_.data(), read_buf_.data() + read_begin_, read_end_ - read_begin_);
    read_end_ -= read_begin_;
    read_begin_ = 0;
  }
  // A large frame grew the buffer; give the memory back once it is delivered.
  if (read_buf_.size() > kShrinkAbove && read_end_ <= kReadChunk) {
    read_buf_.resize(kReadChunk);
    read_buf_.shrink_to_fit();
  }
  return !closed_;
}

void FramedConnection::read_more() {
  socket_.async_read_some(
      asio::buffer(read_buf_.data() + read_end_, read_buf_.size() - read_end_),
      [self = shared_from_this()](asio::error_code ec, size_t n) {
        if (self->closed_) return;
        if (ec) {
          const bool mid_frame = self->read_end_ > self->read_begin_;
          if (ec == asio::error::eof) {
            // The peer has gone and nothing waits to be written: a reset costs both sides least.
            if (!self->writing_) self->set_abortive();
            self->finish(mid_frame ? "connection closed mid-frame" : "connection closed by peer");
          } else {
            self->finish(ec.message());
          }
          return;
        }
        self->read_end_ += n;
        if (self->deliver_frames()) self->read_more();
      });
}

void FramedConnection::send(std::shared_ptr<const std::string> frame) {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this(), frame = std::move(frame)] {
    if (self->closed_ || self->closing_after_writes_) return;
    self->queue_.push_back(frame);
    if (!self->writing_) {
      self->writing_ = true;
      self->write_next();
    }
  });
}

void FramedConnection::write_next() {
  // Most frames fit the socket buffer at once: try a plain non-blocking send first and fall back
  // to an asynchronous write only for what the kernel did not take. This saves a posted
  // completion per message, which dominates a barrier's fan-out to thousands of processes.
  while (!queue_.empty()) {
    const std::string& frame = *queue_.front();
    asio::error_code ec;
    const size_t n = socket_.send(
        asio::buffer(frame.data() + write_offset_, frame.size() - write_offset_), 0, ec);
    if (ec && ec != asio::error::would_block && ec != asio::error::try_again) {
      finish("write failed: " + ec.message());
      return;
    }
    write_offset_ += n;
    if (write_offset_ < frame.size()) break;
    queue_.pop_front();
    write_offset_ = 0;
  }
  if (queue_.empty()) {
    writing_ = false;
    if (closing_after_writes_) finish(closing_reason_);
    return;
  }
  writing_ = true;
  socket_.async_wait(asio::ip::tcp::socket::wait_write,
                     [self = shared_from_this()](asio::error_code ec) {
                       if (self->closed_) return;
                       if (ec) {
                         self->finish("write failed: " + ec.message());
                         return;
                       }
                       self->write_next();
                     });
}

void FramedConnection::close_after_writes(const std::string& reason) {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this(), reason] {
    if (self->closed_) return;
    self->closing_after_writes_ = true;
    self->closing_reason_ = reason;
    if (!self->writing_) self->finish(reason);
  });
}

void FramedConnection::close(const std::string& reason) {
  asio::dispatch(socket_.get_executor(),
                 [self = shared_from_this(), reason] { self->finish(reason); });
}

void FramedConnection::reset(const std::string& reason) {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this(), reason] {
    if (self->closed_) return;
    self->set_abortive();
    self->finish(reason);
  });
}

void FramedConnection::set_abortive() {
  asio::error_code ignored;
  socket_.set_option(asio::socket_base::linger(true, 0), ignored);
  abortive_ = true;
}

void FramedConnection::finish(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  queue_.clear();
  asio::error_code ignored;
  if (!abortive_) socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  on_message_ = nullptr;
  if (on_close_) {
    // Posted, never run here: finish() is reached from inside send() when a write fails at
    // once, and a close handler that sends to other connections (the service announcing a
    // death) would otherwise recurse once per dead peer and exhaust the stack.
    asio::post(socket_.get_executor(),
               [handler = std::move(on_close_), reason] { handler(reason); });
    on_close_ = nullptr;
  }
}

}  // namespace spmd
