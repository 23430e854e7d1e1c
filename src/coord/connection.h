// A framed message connection over one TCP socket (frames as in frame.h).
//
// Reads run in a loop on the socket's executor and hand each payload to the message handler;
// writes are queued, so send() may be called from any thread and frames never interleave. The
// close handler runs exactly once, with the reason: a peer's EOF, an I/O error, an invalid frame
// header, or close() from this side. Handlers run on the socket's executor, one at a time, and
// the close handler always as a handler of its own: never inside send(), close() or another
// handler's call into this connection, so closing can never recurse.
#pragma once

#include <asio.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "coord/frame.h"

namespace spmd {

class FramedConnection : public std::enable_shared_from_this<FramedConnection> {
 public:
  // The payload points into the read buffer and is valid only during the call.
  using MessageHandler = std::function<void(std::string_view payload)>;
  using CloseHandler = std::function<void(const std::string& reason)>;

  explicit FramedConnection(asio::ip::tcp::socket socket);

  // Starts reading. Must be called once, before any send().
  void start(MessageHandler on_message, CloseHandler on_close);

  // The largest payload a frame may declare (at most kMaxFrameBytes, the default); a longer one
  // closes the connection as an invalid frame. Call before start() or from a handler.
  void set_max_frame_bytes(uint32_t bytes) { max_frame_bytes_ = bytes; }

  // Queues an encoded frame (encode_frame()). Shared frames let one buffer go to many peers.
  void send(std::shared_ptr<const std::string> frame);

  // Closes once the queued frames are written (or at once on a write error).
  void close_after_writes(const std::string& reason);

  // Closes now; queued frames are dropped.
  void close(const std::string& reason);
  // Closes now with a reset (SO_LINGER 0): no farewell, and no TIME_WAIT left on this side. For
  // connections dropped for what they sent or failed to send, which are owed nothing: a flood of
  // them costs the kernel least this way.
  void reset(const std::string& reason);

  // "address:port" of the peer, for logs; fixed at construction.
  const std::string& peer() const { return peer_; }

 private:
  void read_more();
  // Hands every complete frame in the buffer to the handler; false once the connection closed.
  bool deliver_frames();
  void write_next();
  void finish(const std::string& reason);
  // The next close resets the connection (SO_LINGER 0) instead of shutting it down.
  void set_abortive();

  asio::ip::tcp::socket socket_;
  std::string peer_;
  MessageHandler on_message_;
  CloseHandler on_close_;
  // Bytes read but not yet consumed: [read_begin_, read_end_) of read_buf_. One recv often
  // brings several frames, and a header never costs a system call of its own.
  std::vector<char> read_buf_;
  size_t read_begin_ = 0;
  size_t read_end_ = 0;
  uint32_t max_frame_bytes_ = kMaxFrameBytes;
  std::deque<std::shared_ptr<const std::string>> queue_;
  size_t write_offset_ = 0;  // bytes of queue_.front() already sent
  bool writing_ = false;
  bool closing_after_writes_ = false;
  std::string closing_reason_;
  bool closed_ = false;
  bool abortive_ = false;  // reset(): closed without shutdown, so the linger of 0 resets it
};

}  // namespace spmd
