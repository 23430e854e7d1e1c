// The UCX transport in one process, over real UCX (two workers of this process, connected as two
// processes' workers are): bytes arrive in order, large payloads go by reference and arrive
// whole, the registration of a pool buffer is made once and dropped with the buffer, the
// exchange engine runs over it unchanged, and a peer that goes away or a payload that never comes
// ends in an error naming the peer, never a hang. Built only with UCX.
#include "comm/ucx_transport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <thread>

#include "comm/exchange.h"
#include "comm/registered_memory.h"
#include "comm/ucx_stream.h"
#include "comm/waiter.h"
#include "spmd/error.h"
#include "test_call.h"

namespace spmd {
namespace {

using namespace std::chrono_literals;

// Two workers, each with a stream to the other: `a` is position 0, `b` position 1.
struct Pair {
  explicit Pair(UcxReach reach = UcxReach::kWithinHost)
      : wa(open_ucx_worker(reach)), wb(open_ucx_worker(reach)) {
    a = wa->connect(wb->address(), "process 1 (host b)", 0, 1);
    b = wb->connect(wa->address(), "process 0 (host a)", 1, 0);
  }
  std::shared_ptr<UcxWorker> wa;
  std::shared_ptr<UcxWorker> wb;
  std::unique_ptr<Stream> a;
  std::unique_ptr<Stream> b;
};

std::vector<std::byte> pattern(size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 131 + seed) & 0xff);
  return v;
}

TEST(UcxStream, BytesArriveInOrderWhateverTheWriteSizes) {
  Pair p;
  const std::vector<std::byte> sent = pattern(3 << 20, 7);
  std::vector<std::byte> got;
  size_t written = 0;
  size_t step = 1;
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (got.size() < sent.size()) {
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "stalled at " << got.size();
    if (written < sent.size()) {
      // Writes of 1 byte up to 256 KiB, header and payload split at odd places.
      const size_t n = std::min(step, sent.size() - written);
      const size_t cut = n / 3;
      written +=
          p.a->write_some({sent.data() + written, cut}, {sent.data() + written + cut, n - cut});
      step = step * 7 % (256 << 10) + 1;
    }
    p.a->readable();  // as the exchange polls every link: progresses the writer's worker
    const std::span<const std::byte> r = p.b->readable();
    const size_t k = std::min<size_t>(r.size(), 5000);  // consume in odd pieces
    got.insert(got.end(), r.begin(), r.begin() + static_cast<std::ptrdiff_t>(k));
    p.b->consume(k);
  }
  EXPECT_EQ(got, sent);
  EXPECT_STREQ(p.a->transport(), "ucx");
}

// The writer's side of a by-reference payload runs on a thread of its own, as in two processes:
// a rendezvous needs both workers progressed.
void send_by_reference(Stream& out, const std::vector<std::byte>& data, uint64_t ticket,
                       ReferenceBody& body, std::atomic<bool>& offered) {
  body = out.offer_reference(data.data(), data.size(), ticket).value();
  offered = true;
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (out.references_done() < ticket && std::chrono::steady_clock::now() < until) {
  }
}

TEST(UcxStream, APayloadByReferenceArrivesWholeAndItsPoolBufferIsRegisteredOnce) {
  Pair p(UcxReach::kAcrossHosts);
  const std::vector<std::byte> data = pattern(8 << 20, 3);
  std::vector<std::byte> dst(data.size());
  note_pool_buffer(const_cast<std::byte*>(data.data()), data.size());
  note_pool_buffer(dst.data(), dst.size());
  const RegistrationStats before = registration_stats();
  for (uint64_t ticket = 1; ticket <= 3; ++ticket) {
    std::fill(dst.begin(), dst.end(), std::byte{0});
    ReferenceBody body;
    std::atomic<bool> offered{false};
    std::thread writer(send_by_reference, std::ref(*p.a), std::cref(data), ticket, std::ref(body),
                       std::ref(offered));
    while (!offered) std::this_thread::yield();
    Waiter w(nullptr, Waiter::Clock::now() + 30s);
    p.b->fetch_reference(body, 0, dst.data(), dst.size(), w);
    writer.join();
    EXPECT_EQ(p.a->references_done(), ticket);
    EXPECT_EQ(dst, data) << "transfer " << ticket;
  }
  const RegistrationStats mid = registration_stats();
  EXPECT_EQ(mid.registrations - before.registrations, 2u);  // the source and the destination
  EXPECT_GE(mid.lookups_hit - before.lookups_hit, 4u);      // the two later transfers
  forget_pool_buffer(dst.data(), dst.size());
  forget_pool_buffer(const_cast<std::byte*>(data.data()), data.size());
  const RegistrationStats after = registration_stats();
  EXPECT_EQ(after.deregistrations - mid.deregistrations, 2u);
  EXPECT_EQ(after.pool_buffers, before.pool_buffers - 2);
}

// Within a host the payload is copied through UCX's shared memory, registered nowhere.
TEST(UcxStream, WithinAHostAPayloadByReferenceArrivesWholeAndNothingIsRegistered) {
  Pair p(UcxReach::kWithinHost);
  Pair across(UcxReach::kAcrossHosts);  // the registrar is installed, but not used here
  const std::vector<std::byte> data = pattern(3 << 20, 5);
  std::vector<std::byte> dst(data.size());
  note_pool_buffer(const_cast<std::byte*>(data.data()), data.size());
  const RegistrationStats before = registration_stats();
  for (uint64_t ticket = 1; ticket <= 2; ++ticket) {
    std::fill(dst.begin(), dst.end(), std::byte{0});
    ReferenceBody body;
    std::atomic<bool> offered{false};
    p.b->expect_reference(dst.data(), dst.size());  // posted before the payload is offered
    std::thread writer(send_by_reference, std::ref(*p.a), std::cref(data), ticket, std::ref(body),
                       std::ref(offered));
    while (!offered) std::this_thread::yield();
    Waiter w(nullptr, Waiter::Clock::now() + 30s);
    EXPECT_EQ(p.b->fetch_reference(body, 0, dst.data(), dst.size(), w), dst.data());
    writer.join();
    EXPECT_EQ(p.a->references_done(), ticket);
    EXPECT_EQ(dst, data) << "transfer " << ticket;
  }
  EXPECT_EQ(registration_stats().registrations, before.registrations);
  forget_pool_buffer(const_cast<std::byte*>(data.data()), data.size());
}

TEST(UcxStream, MemoryOutsideThePoolHasNoRegistrationHere) {
  Pair p(UcxReach::kAcrossHosts);  // makes sure the registrar is installed
  std::vector<std::byte> plain(1 << 20);
  EXPECT_EQ(registration_for(plain.data(), plain.size()), nullptr);
}

Fingerprint call(uint64_t sequence, uint64_t count) { return testing::test_call(sequence, count); }

// The exchange engine over UCX, both ways at once: small messages through the stream; one of
// kByReferenceMin and more into a destination and one through a sink, by reference — by
// rendezvous across hosts, pipelined eagerly within a host.
void round_trips(UcxReach reach) {
  Pair p(reach);
  EXPECT_TRUE(p.a->by_reference());
  std::vector<PeerLink> left(2);
  std::vector<PeerLink> right(2);
  left[1] = PeerLink{1, "process 1 (host b)", p.a.get(), p.a.get(), {}, 0};
  right[0] = PeerLink{0, "process 0 (host a)", p.b.get(), p.b.get(), {}, 0};
  Exchange el(left, 0, 0);
  Exchange er(right, 1, 1);
  const size_t sizes[] = {4, 4100, 100003, (kByReferenceMin / 4) + 13, 1 << 20};
  for (size_t round = 0; round < 3; ++round) {
    std::vector<std::vector<float>> from_left;
    std::vector<std::vector<float>> from_right;
    std::vector<std::vector<float>> at_right;
    std::vector<std::vector<float>> at_left;
    for (size_t n : sizes) {
      from_left.emplace_back(n);
      std::iota(from_left.back().begin(), from_left.back().end(), float(round));
      from_right.emplace_back(n);
      std::iota(from_right.back().begin(), from_right.back().end(), float(round + 1000));
      at_right.emplace_back(n);
      at_left.emplace_back(n);
    }
    Waiter wl(nullptr, Waiter::Clock::now() + 30s);
    Waiter wr(nullptr, Waiter::Clock::now() + 30s);
    el.begin(call(round, 1), &wl);
    er.begin(call(round, 1), &wr);
    std::vector<float> summed(sizes[4], 0.0f);  // the last one through a sink, adding
    auto add = [&](size_t offset, const std::byte* data, size_t n) {
      const auto* f = reinterpret_cast<const float*>(data);
      for (size_t k = 0; k < n / 4; ++k) summed[offset / 4 + k] += f[k];
    };
    for (size_t i = 0; i < std::size(sizes); ++i) {
      el.send(1, from_left[i].data(), sizes[i] * 4);
      er.send(0, from_right[i].data(), sizes[i] * 4);
      el.recv_into(1, at_left[i].data(), sizes[i] * 4);
      if (i + 1 < std::size(sizes)) {
        er.recv_into(0, at_right[i].data(), sizes[i] * 4);
      } else {
        er.recv(0, sizes[i] * 4, 4, add);
      }
    }
    std::thread t([&] { el.run(); });
    er.run();
    t.join();
    for (size_t i = 0; i + 1 < std::size(sizes); ++i) {
      EXPECT_EQ(at_right[i], from_left[i]) << "size " << sizes[i];
    }
    EXPECT_EQ(summed, from_left.back());
    for (size_t i = 0; i < std::size(sizes); ++i) {
      EXPECT_EQ(at_left[i], from_right[i]) << "size " << sizes[i];
    }
  }
}

TEST(UcxExchange, MessagesOfEverySizeRoundTripBothWaysAcrossHosts) {
  round_trips(UcxReach::kAcrossHosts);
}

TEST(UcxExchange, MessagesOfEverySizeRoundTripBothWaysWithinAHost) {
  round_trips(UcxReach::kWithinHost);
}

TEST(UcxStream, APayloadThatNeverComesEndsAtTheDeadlineNamingThePeer) {
  Pair p;
  std::vector<std::byte> dst(1 << 20);
  Waiter w(nullptr, Waiter::Clock::now() + 300ms);
  try {
    p.b->fetch_reference({ucx_reference_tag(0, 1), 0}, 0, dst.data(), dst.size(), w);
    ADD_FAILURE() << "no error";
  } catch (const DeadlineExceeded& e) {
    EXPECT_NE(std::string(e.what()).find("process 0 (host a)"), std::string::npos) << e.what();
  }
}

TEST(UcxStream, AReferenceWithAnotherSendersTagIsRejected) {
  Pair p;
  std::vector<std::byte> dst(64);
  Waiter w(nullptr, Waiter::Clock::now() + 5s);
  try {
    p.b->fetch_reference({ucx_reference_tag(5, 1), 0}, 0, dst.data(), dst.size(), w);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not one of its own"), std::string::npos) << e.what();
  }
}

// Across hosts UCX watches the peer: when its worker goes away, the stream says so, naming it
// (UCX declares the endpoint timed out about 10 s later with its default settings; a dead
// process is usually named sooner by the coordination service).
TEST(UcxStream, APeerThatGoesAwayIsAnErrorNamingIt) {
  Pair p(UcxReach::kAcrossHosts);
  const std::vector<std::byte> hello = pattern(64, 1);
  ASSERT_EQ(p.a->write_some(hello, {}), hello.size());
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (p.b->readable().size() < hello.size() && std::chrono::steady_clock::now() < until) {
  }
  p.b.reset();
  p.wb.reset();
  try {
    while (std::chrono::steady_clock::now() < until + 20s) {
      p.a->readable();
      p.a->write_some(hello, {});
    }
    ADD_FAILURE() << "no error within 30 s of the peer's going away";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("process 1 (host b)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace spmd
