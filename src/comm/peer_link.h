// The link from this process to one other process of a group: the streams that carry messages
// each way and the names errors use. Built by group_setup.cc; shm links are a pair of rings,
// tcp links one socket used both ways.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/stream.h"

namespace spmd {

struct PeerLink {
  int process = -1;  // the peer's process index
  std::string name;  // "process 2 (host node7, pid 4242)"
  Stream* out = nullptr;
  Stream* in = nullptr;
  std::vector<std::unique_ptr<Stream>> streams;  // owns out and in
  uint64_t references_sent = 0;                  // by-reference payloads sent on `out`, ever

  bool connected() const { return out != nullptr && in != nullptr; }
};

}  // namespace spmd
