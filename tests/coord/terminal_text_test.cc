// coord/terminal_text.h and the status table it guards (status_query.h's status_text): names a
// process chose — escape sequences, newlines followed by a row's text, invalid UTF-8, 10 KB —
// print as visible escapes, cut to their columns, one line per process (issue 56, "names are
// data"). The names are drawn by rapidcheck as arbitrary bytes too.
#include "coord/terminal_text.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>

#include "coord/status_query.h"
#include "coord/wire.h"

namespace spmd {
namespace {

TEST(TerminalText, ControlCharactersAndInvalidUtf8BecomeVisibleEscapes) {
  EXPECT_EQ(terminal_safe("barrier\x1b]0;title\x07\x1b[2J"), "barrier\\x1b]0;title\\x07\\x1b[2J");
  EXPECT_EQ(terminal_safe("a\nprocess 9 dead"), "a\\x0aprocess 9 dead");
  EXPECT_EQ(terminal_safe("\xff\xfe ok"), "\\xff\\xfe ok");
  EXPECT_EQ(terminal_safe("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93");  // café ✓
  EXPECT_EQ(terminal_safe("\xc2\x9b"), "\\xc2\\x9b");  // C1 CSI, which terminals obey
  EXPECT_EQ(terminal_safe("\xc0\xaf"), "\\xc0\\xaf");  // an overlong '/'
  EXPECT_EQ(terminal_safe("\x7f"), "\\x7f");
  // Line separators (Python's splitlines breaks on them) and a right-to-left override.
  EXPECT_EQ(terminal_safe("a\xe2\x80\xa8"
                          "b\xe2\x80\xa9"),
            "a\\xe2\\x80\\xa8b\\xe2\\x80\\xa9");
  EXPECT_EQ(terminal_safe("\xe2\x80\xae"
                          "9 dead"),
            "\\xe2\\x80\\xae9 dead");
  EXPECT_EQ(terminal_safe("\xe2\x81\xa6x\xe2\x81\xa9"), "\\xe2\\x81\\xa6x\\xe2\\x81\\xa9");
  EXPECT_EQ(terminal_safe("\xe2\x80\x94"), "\xe2\x80\x94");  // an em dash stays
}

TEST(TerminalText, ACellIsCutToItsWidthWithAMark) {
  EXPECT_EQ(terminal_safe("short", 10), "short");
  EXPECT_EQ(terminal_safe("exactly10!", 10), "exactly10!");
  EXPECT_EQ(terminal_safe("one too many", 11), "one too ma…");
  EXPECT_EQ(terminal_safe("ab\x1b\x1b\x1b", 8), "ab\\x1b…");
  EXPECT_EQ(terminal_safe(std::string(10000, 'x'), 32).size(), 31 + std::string("…").size());
}

// What is wrong with what status_text prints for a table whose processes named themselves and
// their calls with `hostile` ("" when nothing): only newlines may be control characters, and
// there is one line per process plus the header and the waited-for line.
std::string table_problem(const std::string& hostile) {
  wire::StatusTable table;
  table.set_num_processes(3);
  for (int p = 0; p < 3; ++p) {
    auto* row = table.add_processes();
    row->set_process_id(p);
    row->set_hostname(p == 1 ? hostile : "host");
    row->set_call(p == 2 ? hostile : "barrier");
    row->set_state(p == 2 ? wire::PROCESS_RUNNING : wire::PROCESS_BLOCKED);
    row->set_waited_for_by(p == 2 ? 2 : 0);
    row->set_detail(hostile);
  }
  const std::string text = status_text(table);
  size_t lines = 0;
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '\n') ++lines;
    if ((b < 0x20 && c != '\n') || b == 0x7f) return "a control byte in:\n" + text;
  }
  // The header, three rows, one "processes wait for it" line.
  if (lines != 5) return std::to_string(lines) + " lines:\n" + text;
  for (size_t at = 0, next; at < text.size(); at = next + 1) {
    next = text.find('\n', at);
    if (next - at >= 1000) return "a line of " + std::to_string(next - at) + " bytes";
  }
  return "";
}

TEST(TerminalText, HostileNamesCannotClearTheScreenOrForgeARow) {
  EXPECT_EQ(table_problem("\x1b]0;pwned\x07\x1b[2J\n      9  dead            host      1  x"), "");
  EXPECT_EQ(table_problem(std::string("\xff\xfe\x00\x1b", 4) + std::string(10000, 'A')), "");
}

RC_GTEST_PROP(TerminalText, AnyBytesAsNamesKeepOneLinePerProcess, (const std::string& name)) {
  const std::string problem = table_problem(name);
  RC_ASSERT(problem.empty());
}

}  // namespace
}  // namespace spmd
