#include "spmd-bench/result_row.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

namespace spmd::bench {

std::string ResultRow::key() const {
  return op + "|" + std::to_string(bytes) + "|" + impl + "|" + transport;
}

ResultRow reference_row(std::string op, std::string transport, int processes, size_t bytes,
                        std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  const double p50 = seconds[seconds.size() / 2];
  ResultRow row;
  row.op = std::move(op);
  row.impl = "reference";
  row.transport = std::move(transport);
  row.processes = processes;
  row.bytes = bytes;
  row.p50_us = p50 * 1e6;
  row.p99_us = seconds[std::min(seconds.size() - 1, seconds.size() * 99 / 100)] * 1e6;
  row.algbw_GBps = static_cast<double>(bytes) / p50 / 1e9;
  row.busbw_GBps = row.algbw_GBps;
  row.correct = true;
  return row;
}

std::string to_json_line(const ResultRow& row) {
  nlohmann::ordered_json j;
  j["op"] = row.op;
  j["impl"] = row.impl;
  j["transport"] = row.transport;
  j["processes"] = row.processes;
  j["bytes"] = row.bytes;
  j["p50_us"] = row.p50_us;
  j["p99_us"] = row.p99_us;
  j["algbw_GBps"] = row.algbw_GBps;
  j["busbw_GBps"] = row.busbw_GBps;
  j["correct"] = row.correct;
  if (row.iterations > 0) j["iterations"] = row.iterations;
  if (row.fresh_buffers) j["fresh_buffers"] = *row.fresh_buffers;
  if (row.rounds > 0) j["rounds"] = row.rounds;
  return j.dump();
}

std::optional<ResultRow> parse_row(const std::string& line) {
  const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  try {
    ResultRow row;
    row.op = j.at("op").get<std::string>();
    row.impl = j.at("impl").get<std::string>();
    row.transport = j.at("transport").get<std::string>();
    row.processes = j.at("processes").get<int>();
    row.bytes = j.at("bytes").get<size_t>();
    row.p50_us = j.at("p50_us").get<double>();
    row.p99_us = j.at("p99_us").get<double>();
    row.algbw_GBps = j.at("algbw_GBps").get<double>();
    row.busbw_GBps = j.at("busbw_GBps").get<double>();
    row.correct = j.at("correct").get<bool>();
    row.iterations = j.value("iterations", 0);
    if (j.contains("fresh_buffers")) row.fresh_buffers = j.at("fresh_buffers").get<bool>();
    row.rounds = j.value("rounds", 0);
    return row;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace spmd::bench
