// status.json (status_query.h's status_json), written straight into one string row by row:
// byte for byte the document that a tree of nlohmann::json values gives (its keys sorted, what is
// not UTF-8 replaced), for tables whose names are arbitrary bytes, drawn by rapidcheck.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "coord/status_board.h"
#include "coord/status_query.h"
#include "coord/wire.h"

namespace spmd {
namespace {

// The document as a tree, the way status_json made it before it was streamed.
std::string as_tree(const wire::StatusTable& table) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : table.processes()) {
    rows.push_back(
        {{"process", row.process_id()},
         {"state", StatusBoard::state_name(row.state())},
         {"host", row.hostname()},
         {"pid", row.pid()},
         {"call", row.call()},
         {"since_ms", row.since_ms()},
         {"heartbeat_age_ms", row.heartbeat_age_ms()},
         {"waiting_for", std::vector<int>(row.waiting_for().begin(), row.waiting_for().end())},
         {"waited_for_by", row.waited_for_by()},
         {"detail", row.detail()},
         {"summary", StatusBoard::describe(row)}});
  }
  const nlohmann::json out = {{"num_processes", table.num_processes()}, {"processes", rows}};
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TEST(StatusJson, AnEmptyTableAndAPlainRow) {
  wire::StatusTable table;
  table.set_num_processes(0);
  EXPECT_EQ(status_json(table), R"({"num_processes":0,"processes":[]})");
  table.set_num_processes(2);
  auto* row = table.add_processes();
  row->set_process_id(1);
  row->set_hostname("h\"1\n\xff");
  row->set_pid(42);
  row->set_state(wire::PROCESS_BLOCKED);
  row->set_call("wait_at_barrier(\"b\")");
  row->add_waiting_for(0);
  row->add_waiting_for(3);
  EXPECT_EQ(status_json(table), as_tree(table));
  const auto parsed = nlohmann::json::parse(status_json(table));
  EXPECT_EQ(parsed["processes"][0]["host"], "h\"1\n\xef\xbf\xbd");
  EXPECT_EQ(parsed["processes"][0]["waiting_for"], nlohmann::json::array({0, 3}));
}

RC_GTEST_PROP(StatusJson, IsTheTreesDocumentForAnyTable, ()) {
  wire::StatusTable table;
  const int rows = *rc::gen::inRange(0, 6);
  table.set_num_processes(rows);
  for (int p = 0; p < rows; ++p) {
    auto* row = table.add_processes();
    row->set_process_id(p);
    row->set_hostname(*rc::gen::arbitrary<std::string>());
    row->set_pid(*rc::gen::arbitrary<int64_t>());
    row->set_state(static_cast<wire::ProcessState>(*rc::gen::inRange(0, 8)));
    row->set_call(*rc::gen::arbitrary<std::string>());
    row->set_since_ms(*rc::gen::inRange<int64_t>(-1, 1 << 30));
    row->set_heartbeat_age_ms(*rc::gen::inRange<int64_t>(-1, 1 << 30));
    for (int w : *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 64))) {
      row->add_waiting_for(w);
    }
    row->set_waited_for_by(*rc::gen::inRange(0, 64));
    row->set_detail(*rc::gen::arbitrary<std::string>());
  }
  RC_ASSERT(status_json(table) == as_tree(table));
}

}  // namespace
}  // namespace spmd
