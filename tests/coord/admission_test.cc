// Who may hold a connection to the service (admission.h): strangers have a room of their own,
// one per process yet to register plus a spare margin, and the oldest leaves when one more
// arrives; authenticating takes a connection out of it; tools are bounded on their own.
#include "coord/admission.h"

#include <gtest/gtest.h>

#include <vector>

#include "coord/service_context.h"

namespace spmd {
namespace {

using SessionPtr = Admission::SessionPtr;

std::vector<SessionPtr> sessions(size_t n) {
  std::vector<SessionPtr> out;
  for (size_t i = 0; i < n; ++i) out.push_back(std::make_shared<ServiceSession>());
  return out;
}

TEST(Admission, StrangersBeyondTheirRoomLeaveOldestFirst) {
  Admission admission;
  const size_t room = 3 + Admission::kSpareStrangers;
  auto s = sessions(room + 5);
  for (size_t i = 0; i < room; ++i) EXPECT_TRUE(admission.admit(s[i], 3).empty());
  for (size_t i = room; i < room + 5; ++i) {
    const auto dropped = admission.admit(s[i], 3);
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_EQ(dropped[0], s[i - room]) << "the oldest goes first";
    EXPECT_EQ(dropped[0]->arrival, 0u);
  }
  EXPECT_EQ(admission.strangers(), room);
}

TEST(Admission, AProcessThatRegisteredIsNeverDroppedAndItsPlaceShrinksTheRoom) {
  Admission admission;
  auto s = sessions(Admission::kSpareStrangers + 3);
  admission.admit(s[0], 2);
  admission.registered(*s[0]);
  admission.admit(s[1], 1);
  admission.registered(*s[1]);
  EXPECT_EQ(admission.strangers(), 0u);
  // Every process has registered: the strangers get the spare places only.
  for (size_t i = 2; i < s.size(); ++i) {
    for (const auto& d : admission.admit(s[i], 0)) {
      EXPECT_NE(d, s[0]);
      EXPECT_NE(d, s[1]);
      EXPECT_EQ(d, s[2]);
    }
  }
  EXPECT_EQ(admission.strangers(), Admission::kSpareStrangers);
}

TEST(Admission, ClosedStrangersFreeTheirPlace) {
  Admission admission;
  auto s = sessions(Admission::kSpareStrangers + 1);
  for (size_t i = 0; i < Admission::kSpareStrangers; ++i) admission.admit(s[i], 0);
  admission.closed(*s[0]);
  EXPECT_TRUE(admission.admit(s.back(), 0).empty());
  admission.closed(*s[0]);  // twice is harmless
  EXPECT_EQ(admission.strangers(), Admission::kSpareStrangers);
}

TEST(Admission, ToolsAreBoundedAndLeaveTheStrangers) {
  Admission admission;
  auto s = sessions(Admission::kMaxTools + 1);
  for (const auto& t : s) admission.admit(t, 0);
  for (size_t i = 0; i < Admission::kMaxTools; ++i) EXPECT_TRUE(admission.became_tool(*s[i]));
  EXPECT_FALSE(admission.became_tool(*s.back()));
  EXPECT_EQ(admission.tools(), Admission::kMaxTools);
  EXPECT_EQ(admission.strangers(), 1u);
  admission.closed(*s[0]);
  EXPECT_EQ(admission.tools(), Admission::kMaxTools - 1);
  EXPECT_TRUE(admission.became_tool(*s.back()));
  EXPECT_EQ(admission.strangers(), 0u);
}

}  // namespace
}  // namespace spmd
