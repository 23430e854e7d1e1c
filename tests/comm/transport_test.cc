// The transports and the exchange engine in one process, over real shared memory and real
// loopback TCP: streams keep bytes in order across wrap-around, and bad bytes from a peer are
// rejected with an error naming it — never a crash, never garbage in the output.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <numeric>
#include <thread>

#include "comm/exchange.h"
#include "comm/shm_ring.h"
#include "comm/shm_segment.h"
#include "comm/tcp_handshake.h"
#include "comm/tcp_stream.h"
#include "runtime/fast_exit.h"
#include "spmd/error.h"
#include "test_call.h"

namespace spmd {
namespace {

using namespace std::chrono_literals;

// A connected pair of loopback TCP sockets.
std::pair<int, int> tcp_pair() {
  DataListener listener("127.0.0.1");
  const std::string& ep = listener.endpoint();
  const int port = std::stoi(ep.substr(ep.rfind(':') + 1));
  const int a = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(a, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const int b = ::accept(listener.fd(), nullptr, nullptr);
  return {a, b};
}

Fingerprint call(uint64_t sequence, uint64_t count) { return testing::test_call(sequence, count); }

// One peer (position 1) reached through `stream`; this process is position 0.
struct OnePeer {
  explicit OnePeer(std::unique_ptr<Stream> stream) : links(2) {
    links[1].process = 1;
    links[1].name = "process 1 (host test)";
    links[1].out = links[1].in = stream.get();
    links[1].streams.push_back(std::move(stream));
    ex = std::make_unique<Exchange>(links, 0, 0);
  }
  std::vector<PeerLink> links;
  std::unique_ptr<Exchange> ex;
};

TEST(ShmRing, BytesArriveInOrderAcrossManyWrapArounds) {
  const size_t capacity = 4096;
  ShmSegment seg =
      ShmSegment::create("/spmd-test-ring-" + std::to_string(::getpid()), ring_footprint(capacity));
  seg.unlink();
  ShmRingWriter w(seg.data(), capacity, "reader");
  ShmRingReader r(seg.data(), capacity, "writer");
  std::vector<std::byte> sent(1 << 20);
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<std::byte>(i * 131 % 251);
  std::vector<std::byte> got;
  size_t at = 0;
  while (got.size() < sent.size()) {
    // Odd write sizes so that pieces straddle the end of the ring.
    const size_t want = std::min<size_t>(1237, sent.size() - at);
    at += w.write_some({sent.data() + at, want}, {});
    auto piece = r.readable();
    got.insert(got.end(), piece.begin(), piece.end());
    r.consume(piece.size());
  }
  EXPECT_EQ(got, sent);
}

// A process killed between creating its segment and unlinking it leaves the name behind; a later
// process that gets the same pid (and so the same name) replaces it instead of failing with
// "File exists" (the cause of an occasional TrainMlp.layouts failure after the fault tests).
TEST(ShmSegment, ALeftoverOfADeadProcessWithTheSamePidIsReplaced) {
  const std::string name = "/spmd-test-leftover-" + std::to_string(::getpid());
  const int stale = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(stale, 0) << std::strerror(errno);
  ASSERT_EQ(::ftruncate(stale, 100), 0);
  ::close(stale);
  ShmSegment seg = ShmSegment::create(name, 8192);
  EXPECT_EQ(seg.size(), 8192u);
  EXPECT_EQ(seg.data()[8191], std::byte{0});  // a fresh, zero-filled segment of the new size
  ShmSegment again = ShmSegment::open(name, 8192);
  EXPECT_EQ(again.size(), 8192u);
}

bool named_in_dev_shm(const std::string& name) {
  return ::access(("/dev/shm" + name).c_str(), F_OK) == 0;
}

// An exit that skips destructors (a peer's failure) runs the fast-exit cleanups: the names go,
// the mapping stays usable until the process ends.
TEST(ShmSegment, TheFastExitCleanupRemovesTheNamesOfSegmentsStillNamed) {
  const std::string kept = "/spmd-" + std::to_string(::getpid()) + "-test-fast-exit-a";
  const std::string gone = "/spmd-" + std::to_string(::getpid()) + "-test-fast-exit-b";
  ShmSegment a = ShmSegment::create(kept, 4096);
  ShmSegment b = ShmSegment::create(gone, 4096);
  b.unlink();  // already unlinked: not named any more
  ASSERT_TRUE(named_in_dev_shm(kept));
  ASSERT_FALSE(named_in_dev_shm(gone));
  run_fast_exit_cleanups();
  EXPECT_FALSE(named_in_dev_shm(kept));
  a.data()[4095] = std::byte{7};  // still mapped
  EXPECT_EQ(a.data()[4095], std::byte{7});
}

// What spmdrun does for a process it started that was killed: the names holding its pid go, and
// only those (pid 99999999 is not pid 999999990). Both are above Linux's largest pid (2^22), so no
// process running beside the test can own these names.
TEST(ShmSegment, TheNamesAKilledProcessLeftAreRemovedAndOnlyThose) {
  const long dead = 99999999;
  const std::vector<std::string> theirs = {"/spmd-99999999-00000000000000aa",
                                           "/spmd-99999999-00000000000000bb"};
  const std::string other = "/spmd-999999990-00000000000000aa";
  for (const std::string& name : {theirs[0], theirs[1], other}) {
    ::shm_unlink(name.c_str());
    const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    ASSERT_GE(fd, 0) << name << ": " << std::strerror(errno);
    ::close(fd);
  }
  EXPECT_EQ(ShmSegment::unlink_left_by(dead), 2);
  EXPECT_FALSE(named_in_dev_shm(theirs[0]));
  EXPECT_FALSE(named_in_dev_shm(theirs[1]));
  EXPECT_TRUE(named_in_dev_shm(other));
  ::shm_unlink(other.c_str());
  EXPECT_EQ(ShmSegment::unlink_left_by(dead), 0);
}

TEST(ShmRing, ACorruptTailFromThePeerIsAnErrorNotAnOverread) {
  const size_t capacity = 4096;
  ShmSegment seg = ShmSegment::create("/spmd-test-corrupt-" + std::to_string(::getpid()),
                                      ring_footprint(capacity));
  ShmRingReader r(seg.data(), capacity, "process 1");
  reinterpret_cast<RingControl*>(seg.data())->tail.store(capacity * 3);
  EXPECT_THROW(r.readable(), Error);
}

// Writes of every size from 1 byte up, read back in pieces of every size: the stream switches
// between its lanes (small writes into one-line slots while the ring is drained, larger ones
// into the ring) and never reorders a byte.
TEST(ShmRing, SmallAndLargeWritesKeepTheirOrderAcrossBothLanes) {
  const size_t capacity = 4096;
  ShmSegment seg = ShmSegment::create("/spmd-test-lanes-" + std::to_string(::getpid()),
                                      ring_footprint(capacity));
  seg.unlink();
  ShmRingWriter w(seg.data(), capacity, "reader");
  ShmRingReader r(seg.data(), capacity, "writer");
  std::vector<std::byte> sent(1 << 19);
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<std::byte>(i * 131 % 251);
  std::vector<std::byte> got;
  size_t at = 0;
  size_t turn = 0;
  while (got.size() < sent.size()) {
    ++turn;
    // Sizes cycling through 1..300 bytes, as two pieces; reads of 1..97 bytes at a time, so
    // slots are consumed in parts and the writer often finds a lane not yet drained.
    const size_t want = std::min<size_t>(1 + turn * 7 % 300, sent.size() - at);
    const size_t split = want / 3;
    at += w.write_some({sent.data() + at, split}, {sent.data() + at + split, want - split});
    // Every other turn the reader catches up, so that the ring drains and the lane is used.
    for (int reads = 0; reads < (turn % 2 == 0 ? 1000 : 2); ++reads) {
      auto piece = r.readable();
      const size_t n = std::min<size_t>(piece.size(), 1 + turn * 13 % 97);
      got.insert(got.end(), piece.begin(), piece.begin() + static_cast<ptrdiff_t>(n));
      r.consume(n);
    }
  }
  EXPECT_EQ(got, sent);
  const auto* control = reinterpret_cast<const RingControl*>(seg.data());
  EXPECT_GT(control->lane_head.load(), 100u) << "the small writes never used the lane";
  EXPECT_GT(control->tail.load(), sent.size() / 2) << "the large writes never used the ring";
}

TEST(ShmRing, AFullLaneMakesTheWriterWaitAndLosesNothing) {
  const size_t capacity = 4096;
  ShmSegment seg = ShmSegment::create("/spmd-test-full-lane-" + std::to_string(::getpid()),
                                      ring_footprint(capacity));
  seg.unlink();
  ShmRingWriter w(seg.data(), capacity, "reader");
  ShmRingReader r(seg.data(), capacity, "writer");
  std::vector<std::byte> one(8);
  size_t written = 0;
  for (size_t i = 0; i < kLaneSlots + 5; ++i) {
    one.assign(8, static_cast<std::byte>(i));
    written += w.write_some(one, {}) / 8;
  }
  EXPECT_EQ(written, kLaneSlots);
  // Nor may anything go into the ring past the unread slots.
  std::vector<std::byte> big(1000, std::byte{0x7f});
  EXPECT_EQ(w.write_some(big, {}), 0u);
  for (size_t i = 0; i < kLaneSlots; ++i) {
    auto piece = r.readable();
    ASSERT_EQ(piece.size(), 8u);
    EXPECT_EQ(piece[0], static_cast<std::byte>(i));
    r.consume(8);
  }
  EXPECT_TRUE(r.readable().empty());
  EXPECT_EQ(w.write_some(big, {}), big.size());
  EXPECT_EQ(r.readable().size(), big.size());
}

TEST(ShmRing, ACorruptLaneSlotFromThePeerIsAnErrorNotAnOverread) {
  const size_t capacity = 4096;
  ShmSegment seg = ShmSegment::create("/spmd-test-bad-slot-" + std::to_string(::getpid()),
                                      ring_footprint(capacity));
  seg.unlink();
  auto* slots = reinterpret_cast<LaneSlot*>(seg.data() + sizeof(RingControl));
  {
    // A stamp for the expected slot claiming more bytes than a slot holds.
    ShmRingReader r(seg.data(), capacity, "process 1");
    slots[0].stamp.store(uint64_t{1} << 8 | 200);
    EXPECT_THROW(r.readable(), Error);
  }
  {
    // A slot while ring bytes are unread: the writer broke the one-lane rule.
    ShmRingReader r(seg.data(), capacity, "process 1");
    slots[0].stamp.store(uint64_t{1} << 8 | 8);
    reinterpret_cast<RingControl*>(seg.data())->tail.store(64);
    EXPECT_THROW(r.readable(), Error);
    reinterpret_cast<RingControl*>(seg.data())->tail.store(0);
  }
  {
    // A stale stamp (another slot's number) is not data.
    slots[0].stamp.store(uint64_t{33} << 8 | 8);
    ShmRingReader r(seg.data(), capacity, "process 1");
    EXPECT_TRUE(r.readable().empty());
  }
  {
    // The writer, told that more slots were consumed than it wrote.
    ShmRingWriter w(seg.data(), capacity, "process 1");
    std::vector<std::byte> one(8);
    ASSERT_EQ(w.write_some(one, {}), 8u);
    reinterpret_cast<RingControl*>(seg.data())->lane_head.store(5);
    std::vector<std::byte> big(1000);
    EXPECT_THROW(w.write_some(big, {}), Error);
  }
}

TEST(Exchange, MessagesRoundTripOverTcpWithPayloadsOfOddLengths) {
  auto [a, b] = tcp_pair();
  OnePeer left(std::make_unique<TcpStream>(a, "right"));
  OnePeer right(std::make_unique<TcpStream>(b, "left"));
  std::vector<float> data(100003);
  std::iota(data.begin(), data.end(), 0.0f);
  std::vector<float> out(data.size());
  Waiter wl(nullptr, std::nullopt);
  Waiter wr(nullptr, std::nullopt);
  left.ex->begin(call(0, data.size()), &wl);
  left.ex->send(1, data.data(), data.size() * 4);
  left.ex->send(1, data.data(), 12);
  right.ex->begin(call(0, data.size()), &wr);
  right.ex->recv_into(1, out.data(), out.size() * 4);
  std::vector<float> tail(3);
  right.ex->recv_into(1, tail.data(), 12);
  std::thread sender([&] { left.ex->run(); });
  right.ex->run();
  sender.join();
  EXPECT_EQ(out, data);
  EXPECT_EQ(tail, std::vector<float>({0.0f, 1.0f, 2.0f}));
}

// Writes raw bytes to the peer socket and expects the receiving exchange to throw `E` with
// `text` in its message.
template <class E>
void expect_rejected(const std::string& bytes, const std::string& text, size_t expect_len = 64) {
  auto [a, b] = tcp_pair();
  OnePeer receiver(std::make_unique<TcpStream>(b, "x"));
  ASSERT_EQ(::send(a, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  Waiter w(nullptr, Waiter::Clock::now() + 5s);
  std::vector<std::byte> out(expect_len);
  receiver.ex->begin(call(7, 16), &w);
  receiver.ex->recv_into(1, out.data(), out.size());
  try {
    receiver.ex->run();
    ADD_FAILURE() << "no error for bad bytes";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("process 1"), std::string::npos) << e.what();
  }
  ::close(a);
}

std::string header_bytes(const MessageHeader& h) {
  return std::string(reinterpret_cast<const char*>(&h), sizeof(h));
}

TEST(Exchange, GarbageOnATcpConnectionIsRejectedAsMalformed) {
  expect_rejected<Error>(std::string(48, 'x'), "malformed message header");
}

TEST(Exchange, AHeaderClaimingAnotherLengthIsRejectedBeforeThePayloadIsRead) {
  MessageHeader h;
  h.fingerprint = encode(call(7, 16));
  h.length = uint64_t{1} << 40;  // would overrun any buffer
  expect_rejected<Error>(header_bytes(h), "1099511627776-byte message where 64 bytes");
}

TEST(Exchange, AnUndecodableFingerprintIsRejected) {
  MessageHeader h;
  h.fingerprint.fill(0xff);
  h.length = 64;
  expect_rejected<Error>(header_bytes(h), "undecodable call fingerprint");
}

TEST(Exchange, ADifferentCallFromThePeerIsACollectiveMismatchNamingBoth) {
  MessageHeader h;
  h.fingerprint = encode(call(7, 17));
  h.length = 68;
  expect_rejected<CollectiveMismatch>(header_bytes(h), "float32 x 17");
}

TEST(Exchange, APeerThatNeverSendsTimesOutNamingIt) {
  auto [a, b] = tcp_pair();
  OnePeer receiver(std::make_unique<TcpStream>(b, "x"));
  Waiter w(nullptr, Waiter::Clock::now() + 300ms);
  std::vector<std::byte> out(8);
  receiver.ex->begin(call(3, 2), &w);
  receiver.ex->recv_into(1, out.data(), out.size());
  try {
    receiver.ex->run();
    ADD_FAILURE() << "no timeout";
  } catch (const DeadlineExceeded& e) {
    EXPECT_NE(std::string(e.what()).find("process 1 (host test) did not arrive"), std::string::npos)
        << e.what();
  }
  ::close(a);
}

TEST(TcpHandshake, StrangersAreDroppedAndTheRealPeerStillGetsIn) {
  DataListener listener("127.0.0.1");
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  std::thread strangers([&] {
    // Garbage, then a handshake for another group, then the real peer.
    Handshake bad;
    bad.magic = 0x12345678;
    ::close(connect_peer(listener.endpoint(), bad, deadline));
    Handshake other;
    other.group = 99;
    other.from = 1;
    other.nonce = 42;
    ::close(connect_peer(listener.endpoint(), other, deadline));
    Handshake good;
    good.group = 7;
    good.from = 1;
    good.to = 0;
    good.nonce = 42;
    const int fd = connect_peer(listener.endpoint(), good, deadline);
    std::this_thread::sleep_for(200ms);
    ::close(fd);
  });
  int rejected = 0;
  auto got = accept_peers(listener, 7, 0, 42, {1}, 1, deadline, nullptr, &rejected);
  strangers.join();
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got.contains(1));
  ASSERT_EQ(got[1].size(), 1u);
  EXPECT_GE(got[1][0], 0);
  EXPECT_EQ(rejected, 2);
  for (auto& [p, fds] : got) ::close(fds[0]);
}

}  // namespace
}  // namespace spmd
