// One measured point of `spmd-bench collectives`: what each implementation's rank 0 prints (one
// JSON object a line, for --json and for the bench that started it) and what the bench reads
// back to take medians, print the table and compare implementations.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace spmd::bench {

struct ResultRow {
  std::string op;         // "all_reduce", …, or "memcpy" for the reference
  std::string impl;       // "spmd", "mpi", "gloo", "reference"
  std::string transport;  // "shm", "tcp", "vader", "memory", …
  int processes = 0;
  size_t bytes = 0;  // the larger buffer of the op, as nccl-tests counts it
  double p50_us = 0;
  double p99_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  bool correct = false;
  int iterations = 0;                 // timed calls; 0 when not reported
  std::optional<bool> fresh_buffers;  // whether calls rotated through a cold pool
  int rounds = 0;                     // the rounds this row is the median of; 0: one run

  // op, bytes, impl and transport: a row's identity across rounds.
  std::string key() const;
};

// A reference's row (impl "reference", correct) from its per-call seconds (not empty): p50,
// p99, and bandwidth = bytes / p50 for both algbw and busbw.
ResultRow reference_row(std::string op, std::string transport, int processes, size_t bytes,
                        std::vector<double> seconds);

// One line of JSON.
std::string to_json_line(const ResultRow& row);

// The row a line holds, or nullopt when the line is not a well-formed row (a log line, or a
// truncated one); every field is type-checked.
std::optional<ResultRow> parse_row(const std::string& line);

}  // namespace spmd::bench
