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
// does: spmd sets none of them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "comm/stream.h"

namespace spmd {

// Whether this build has the UCX transport.
bool ucx_built();

// "UCX 1.13.1: tcp/lo, sysv/memory, …" — the version and the transports UCX may use as its
// variables configure it; "UCX absent from this build" without UCX. For logs and spmd-bench.
std::string ucx_summary();

// Whether UCX reaches other hosts over a fabric other than TCP (InfiniBand, RoCE, a vendor
// network) as its variables configure it. SPMD_TRANSPORT=auto uses UCX across hosts only then:
// over plain TCP spmd's own sockets are as fast (bench/RESULTS.md) and connect faster.
bool ucx_has_fabric();

class UcxWorker {
 public:
  virtual ~UcxWorker() = default;

  // This worker's address, as text for the key-value store.
  virtual std::string address() const = 0;

  // The stream to the peer at group position `peer_position`, whose worker published
  // `peer_address`. `across_hosts`: UCX watches the peer and reports its failure (peer error
  // handling); within a host it may use shared memory, which cannot (UCX 1.13), and the
  // coordination service reports deaths as for every transport. Throws spmd::Error naming the
  // peer when UCX cannot reach it.
  virtual std::unique_ptr<Stream> connect(const std::string& peer_address, std::string peer_name,
                                          uint32_t self_position, uint32_t peer_position,
                                          bool across_hosts) = 0;
};

// A new worker (and the first time, the process's UCP context). Throws FailedPrecondition in a
// build without UCX, spmd::Error when UCX cannot start (saying what it reported).
std::shared_ptr<UcxWorker> open_ucx_worker();

}  // namespace spmd
