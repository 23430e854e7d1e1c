// Asking a running job's coordination service for its live view (status_board.h), as
// spmd-status and spmdrun --status do: one connection, one StatusRequest carrying the job's auth
// token, one StatusTable back. Thread-safe (each call has its own connection and event loop).
// Open to tools/: spmd-status and spmdrun --status ask a running job for its view.
#pragma once

#include <chrono>
#include <string>

#include "coord/wire.h"

namespace spmd {

// Throws InvalidArgument for a malformed address, PermissionDenied for a wrong token,
// DeadlineExceeded when the service cannot be reached or does not answer within `timeout`
// (sooner, after 5 refused connections in a row, when none was ever accepted). Connections the
// service closes or refuses while it sheds strangers are made again until the deadline.
wire::StatusTable query_status(const std::string& address, const std::string& auth_token,
                               std::chrono::milliseconds timeout);

// The table for a terminal: one line per process (state, host, pid, call, since, last
// heartbeat, who waits for it), then one sentence per process that others wait for. What the
// processes named (hosts, calls and their keys) is escaped and cut (terminal_text.h): the text
// holds no control character but the newline ending each line.
std::string status_text(const wire::StatusTable& table);

// The table as JSON, for the web page (status_http.h): {"num_processes", "processes": [row…]}.
std::string status_json(const wire::StatusTable& table);

// One row as status_json writes it: {"call", "detail", "heartbeat_age_ms", "host", "pid",
// "process", "since_ms", "state", "summary" (StatusBoard::describe), "waited_for_by",
// "waiting_for"}.
void append_status_row_json(std::string& out, const wire::ProcessStatus& row);
// `text` as a JSON string; what is not UTF-8 is replaced (U+FFFD), as the processes' words may be
// any bytes.
void append_json_string(std::string& out, const std::string& text);

}  // namespace spmd
