// The UCX transport as group setup (group_setup.cc) sees it: one UCP worker per process group,
// which the group's other processes reach by its address (published in the group's setup record
// in the key-value store, as TCP endpoints are), and one stream per peer over a UCP endpoint.
//
// The streams carry spmd's framed messages unchanged (as numbered tagged UCP messages), so the
// algorithms, fingerprints, deadlines and failure reports are those of every transport. Across
// hosts, payloads of kByReferenceMin bytes and more go by reference as tagged messages of their
// own, which UCX sends by rendezvous — zero copy from registered memory on fabrics that offer it
// (verbs, RoCE).
//
// Built from ucx_worker.cc when spmd was compiled with UCX (Debian's libucx-dev), from
// ucx_absent.cc otherwise. UCX reads its own variables (UCX_TLS, UCX_NET_DEVICES, …) as it always
// does; spmd has defaults of its own for four of them, used only where they are not set
// (UcxReach).
// Open to tools/: spmd-bench collectives names the UCX settings in force.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "comm/stream.h"

namespace spmd {

// Where a worker's peers are. Each has a UCP context of its own, because UCX's choice of
// protocol is per context, and each has spmd's defaults for a few of UCX's variables, applied
// only where the user did not set them (when the user set one of TCP's two, both are left to
// UCX; ucx_settings() lists them):
// - kAcrossHosts: UCX's protocols as it configures them. Large messages go by rendezvous, zero
//   copy from registered memory on fabrics (verbs, RoCE); UCX watches the peer and reports its
//   failure. spmd's defaults touch only UCX's TCP: larger send and receive segments
//   (UCX_TCP_TX_SEG_SIZE=64k, UCX_TCP_RX_SEG_SIZE=256k).
// - kWithinHost: UCX_RNDV_THRESH=inf and 32 KiB shared-memory segments. Over shared memory UCX
//   then pipelines every message through its FIFO, the sender's core copying in while the
//   receiver's copies out into the receive posted in advance — spmd's own rings' scheme. UCX's
//   rendezvous there (one process_vm_readv by the receiver, then the receiver's second copy)
//   measured 2.5× slower than spmd's rings at 1 MiB, the pipelined path about 1.2–1.4×
//   (bench/RESULTS.md). Deaths are the coordination service's to report, as for spmd's shared
//   memory.
enum class UcxReach { kWithinHost, kAcrossHosts };

// Whether this build has the UCX transport.
bool ucx_built();

// "UCX 1.13.1: tcp/lo, sysv/memory, …" — the version and the transports UCX may use as its
// variables configure it; "UCX absent from this build" without UCX. For logs and spmd-bench.
std::string ucx_summary();

// The UCX variables spmd sets a default for at `reach`, and their values: "UCX_RNDV_THRESH=inf
// (spmd's default), UCX_MM_SEG_SIZE=32832 (spmd's default)", or a variable's value "(as set)"
// where the user set it. For the startup log and spmd-bench; empty in a build without UCX.
std::string ucx_settings(UcxReach reach);

// Whether UCX reaches other hosts over a fabric other than TCP (InfiniBand, RoCE, a vendor
// network) as its variables configure it. SPMD_TRANSPORT=auto uses UCX across hosts only then:
// over plain TCP spmd's own sockets are faster for small messages, about as fast for large ones
// (bench/RESULTS.md), and connect faster.
bool ucx_has_fabric();

class UcxWorker {
 public:
  virtual ~UcxWorker() = default;

  // This worker's address, as text for the key-value store.
  virtual std::string address() const = 0;

  // The stream to the peer at group position `peer_position`, whose worker (of the same reach)
  // published `peer_address`. Throws spmd::Error naming the peer when UCX cannot reach it.
  virtual std::unique_ptr<Stream> connect(const std::string& peer_address, std::string peer_name,
                                          uint32_t self_position, uint32_t peer_position) = 0;
};

// A new worker for peers at `reach` (and the first time, the process's UCP context for that
// reach). Throws FailedPrecondition in a build without UCX, spmd::Error when UCX cannot start
// (saying what it reported).
std::shared_ptr<UcxWorker> open_ucx_worker(UcxReach reach);

}  // namespace spmd
