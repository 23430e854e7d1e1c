// coord/utf8.h: the UTF-8 the coordination protocol's text fields must hold.
#include "coord/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace spmd {
namespace {

TEST(Utf8, ValidTextPassesAndTheFirstBadByteIsFound) {
  EXPECT_EQ(invalid_utf8_at(""), std::string::npos);
  EXPECT_EQ(invalid_utf8_at("barrier/step-7"), std::string::npos);
  EXPECT_EQ(invalid_utf8_at("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"), std::string::npos);
  EXPECT_EQ(invalid_utf8_at("\x1b[2J\n"), std::string::npos);  // controls are valid UTF-8
  EXPECT_EQ(invalid_utf8_at("ok\xff"), 2u);
  EXPECT_EQ(invalid_utf8_at("a\x80"), 1u);             // a stray continuation byte
  EXPECT_EQ(invalid_utf8_at("\xc0\xaf"), 0u);          // an overlong '/'
  EXPECT_EQ(invalid_utf8_at("\xe0\x80\xaf"), 0u);      // an overlong '/', three bytes
  EXPECT_EQ(invalid_utf8_at("x\xed\xa0\x80"), 1u);     // a surrogate
  EXPECT_EQ(invalid_utf8_at("\xf4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(invalid_utf8_at("ab\xe2\x9c"), 2u);        // cut short
}

}  // namespace
}  // namespace spmd
