// An io_context with a thread of its own running it, for the runtime's networking: heartbeats
// and failure notices are handled there, whatever the user's threads are doing. RAII: the
// destructor stops the loop and joins the thread.
#pragma once

#include <pthread.h>

#include <asio.hpp>
#include <thread>

namespace spmd {

class IoThread {
 public:
  IoThread()
      : work_(asio::make_work_guard(io_)), thread_([this] {
          pthread_setname_np(pthread_self(), "spmd-io");
          io_.run();
        }) {}
  ~IoThread() {
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  asio::io_context& context() { return io_; }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
};

}  // namespace spmd
