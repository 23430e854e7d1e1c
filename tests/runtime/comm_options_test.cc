// The collectives engine's settings, read once from the environment by the runtime.
#include "runtime/comm_options.h"

#include <gtest/gtest.h>

#include "spmd/error.h"
#include "support/fake_env.h"

namespace spmd {
namespace {

using namespace std::chrono_literals;
using testing::env_of;

std::string error_of(const std::map<std::string, std::string>& vars) {
  try {
    read_comm_options(env_of(vars));
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(CommOptions, UnsetMeansTheDocumentedDefaults) {
  const CommOptions o = read_comm_options(env_of({}));
  EXPECT_EQ(o.transport, CommOptions::Transport::kAuto);
  EXPECT_EQ(o.tcp_streams, 1);
  EXPECT_EQ(o.shm_ring_bytes, size_t{1} << 20);
  EXPECT_FALSE(o.shm_single_copy);
  EXPECT_TRUE(o.shm_map_buffers);
  // Deadlines are on by default: ten minutes.
  EXPECT_EQ(o.collective_timeout, std::chrono::nanoseconds(std::chrono::minutes(10)));
}

TEST(CommOptions, EveryVariableIsRead) {
  const CommOptions o = read_comm_options(env_of({{"SPMD_TRANSPORT", "tcp"},
                                                  {"SPMD_TCP_STREAMS", "4"},
                                                  {"SPMD_SHM_RING_BYTES", "65536"},
                                                  {"SPMD_SHM_SINGLE_COPY", "1"},
                                                  {"SPMD_SHM_MAP_BUFFERS", "0"},
                                                  {"SPMD_COLLECTIVE_TIMEOUT", "2.5"}}));
  EXPECT_EQ(o.transport, CommOptions::Transport::kTcp);
  EXPECT_EQ(o.tcp_streams, 4);
  EXPECT_EQ(o.shm_ring_bytes, 65536u);
  EXPECT_TRUE(o.shm_single_copy);
  EXPECT_FALSE(o.shm_map_buffers);
  EXPECT_EQ(o.collective_timeout, std::chrono::nanoseconds(2500ms));
  EXPECT_FALSE(read_comm_options(env_of({{"SPMD_COLLECTIVE_TIMEOUT", "0"}})).collective_timeout);
}

TEST(CommOptions, ABadValueIsRefusedNamingTheVariable) {
  EXPECT_NE(error_of({{"SPMD_TRANSPORT", "infiniband"}}).find("SPMD_TRANSPORT"), std::string::npos);
  EXPECT_NE(error_of({{"SPMD_TCP_STREAMS", "17"}}).find("SPMD_TCP_STREAMS"), std::string::npos);
  EXPECT_NE(error_of({{"SPMD_SHM_MAP_BUFFERS", "yes"}}).find("SPMD_SHM_MAP_BUFFERS"),
            std::string::npos);
  EXPECT_NE(error_of({{"SPMD_SHM_RING_BYTES", "5000"}}).find("power of two"), std::string::npos);
  EXPECT_NE(error_of({{"SPMD_COLLECTIVE_TIMEOUT", "soon"}}).find("SPMD_COLLECTIVE_TIMEOUT"),
            std::string::npos);
  EXPECT_NE(error_of({{"SPMD_COLLECTIVE_TIMEOUT", "-1"}}), "");
}

TEST(CommOptions, EveryTransportIsReadWhenTheBuildHasUcx) {
  using T = CommOptions::Transport;
  const std::pair<const char*, T> names[] = {{"auto", T::kAuto},      {"shm", T::kAuto},
                                             {"shm+tcp", T::kShmTcp}, {"shm+ucx", T::kShmUcx},
                                             {"tcp", T::kTcp},        {"ucx", T::kUcx}};
  for (const auto& [name, t] : names) {
    EXPECT_EQ(read_comm_options(env_of({{"SPMD_TRANSPORT", name}}), true).transport, t) << name;
    if (t != T::kAuto) {
      EXPECT_STREQ(transport_name(t), name);
    }
  }
  EXPECT_TRUE(CommOptions::shm_within_host(T::kShmUcx));
  EXPECT_FALSE(CommOptions::shm_within_host(T::kUcx));
  EXPECT_TRUE(CommOptions::ucx_required(T::kShmUcx));
  EXPECT_FALSE(CommOptions::ucx_required(T::kAuto));
}

// What a build without libucx-dev answers (the flag is that build's ucx_in_build()).
TEST(CommOptions, UcxInABuildWithoutItSaysHowToGetIt) {
  for (const char* name : {"ucx", "shm+ucx"}) {
    try {
      read_comm_options(env_of({{"SPMD_TRANSPORT", name}}), /*ucx_available=*/false);
      ADD_FAILURE() << name << " accepted without UCX";
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("no UCX transport"), std::string::npos) << what;
      EXPECT_NE(what.find("libucx-dev"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(read_comm_options(env_of({{"SPMD_TRANSPORT", "auto"}}), false).transport,
            CommOptions::Transport::kAuto);
  try {
    parse_transport("ucx", "Options::transport", false);
    ADD_FAILURE() << "accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("Options::transport=ucx"), std::string::npos);
  }
}

}  // namespace
}  // namespace spmd
