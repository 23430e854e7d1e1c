#include "coord/connection.h"

#include <fmt/format.h>

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
}

void FramedConnection::start(MessageHandler on_message, CloseHandler on_close) {
  on_message_ = std::move(on_message);
  on_close_ = std::move(on_close);
  asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->read_header(); });
}

void FramedConnection::read_header() {
  asio::async_read(socket_, asio::buffer(header_),
                   [self = shared_from_this()](asio::error_code ec, size_t) {
                     if (self->closed_) return;
                     if (ec) {
                       self->finish(ec == asio::error::eof ? "connection closed by peer"
                                                           : ec.message());
                       return;
                     }
                     auto decoded = decode_frame_header(self->header_);
                     if (auto* err = std::get_if<FrameError>(&decoded)) {
                       self->finish("invalid frame: " + err->reason);
                       return;
                     }
                     self->read_payload(std::get<uint32_t>(decoded));
                   });
}

void FramedConnection::read_payload(uint32_t length) {
  payload_.resize(length);
  asio::async_read(socket_, asio::buffer(payload_),
                   [self = shared_from_this()](asio::error_code ec, size_t) {
                     if (self->closed_) return;
                     if (ec) {
                       self->finish(ec == asio::error::eof ? "connection closed mid-frame"
                                                           : ec.message());
                       return;
                     }
                     self->on_message_(std::move(self->payload_));
                     if (!self->closed_) self->read_header();
                   });
}

void FramedConnection::send(std::shared_ptr<const std::string> frame) {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this(), frame = std::move(frame)] {
    if (self->closed_ || self->closing_after_writes_) return;
    self->queue_.push_back(frame);
    if (!self->writing_) self->write_next();
  });
}

void FramedConnection::write_next() {
  if (queue_.empty()) {
    writing_ = false;
    if (closing_after_writes_) finish(closing_reason_);
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(*queue_.front()),
                    [self = shared_from_this()](asio::error_code ec, size_t) {
                      if (self->closed_) return;
                      if (ec) {
                        self->finish("write failed: " + ec.message());
                        return;
                      }
                      self->queue_.pop_front();
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

void FramedConnection::finish(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  queue_.clear();
  asio::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  if (on_close_) {
    auto handler = std::move(on_close_);
    on_close_ = nullptr;
    on_message_ = nullptr;
    handler(reason);
  }
}

}  // namespace spmd
