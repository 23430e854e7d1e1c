#include "jit/op_registry.h"

#include <fmt/format.h>

#include <charconv>
#include <mutex>

#include "spmd/error.h"

namespace spmd::compiler {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, OperationParser, std::less<>> parsers;
};

// A function-local static: families register during static initialisation, in any order.
Registry& registry() {
  static Registry r;
  return r;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The parts of `s` between top-level commas (outside parentheses).
std::vector<std::string_view> split_top(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')') --depth;
    if (s[i] == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (!trim(s.substr(start)).empty()) parts.push_back(trim(s.substr(start)));
  return parts;
}

// "'a'" -> a; nullopt for anything else.
std::optional<std::string> quoted(std::string_view s) {
  if (s.size() < 3 || s.front() != '\'' || s.back() != '\'') return std::nullopt;
  return std::string(s.substr(1, s.size() - 2));
}

}  // namespace

AttributeReader::AttributeReader(std::string op, std::map<std::string, std::string> values,
                                 ValueType result, std::vector<ValueType> operands,
                                 const Mesh& mesh)
    : op_(std::move(op)),
      values_(std::move(values)),
      result_(std::move(result)),
      operands_(std::move(operands)),
      mesh_(mesh) {}

void AttributeReader::refuse(const std::string& key, const std::string& why) const {
  throw InvalidArgument(fmt::format("{}: attribute '{}' {}", op_, key, why));
}

const std::string& AttributeReader::text(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) refuse(key, "is missing");
  return it->second;
}

int64_t AttributeReader::integer(const std::string& key) const {
  const std::string& s = text(key);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) refuse(key, "is not an integer: " + s);
  return v;
}

bool AttributeReader::boolean(const std::string& key, bool absent) const {
  if (!has(key)) return absent;
  const std::string& s = text(key);
  if (s != "true" && s != "false") refuse(key, "is not true or false: " + s);
  return s == "true";
}

double AttributeReader::number(const std::string& key) const {
  const std::string& s = text(key);
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    refuse(key, "is not a number: " + s);
  }
  if (used != s.size()) refuse(key, "is not a number: " + s);
  return v;
}

std::vector<int64_t> AttributeReader::integers(const std::string& key) const {
  const std::string& s = text(key);
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') refuse(key, "is not {…}: " + s);
  std::vector<int64_t> out;
  for (std::string_view part : split_top(std::string_view(s).substr(1, s.size() - 2))) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size()) refuse(key, "holds a non-integer");
    out.push_back(v);
  }
  return out;
}

PartitionSpec AttributeReader::spec(const std::string& key) const {
  try {
    return parse_partition_spec(text(key));
  } catch (const InvalidArgument& e) {
    refuse(key, e.what());
  }
}

PartitionSpec parse_partition_spec(std::string_view s) {
  const std::string_view head = "PartitionSpec(";
  if (!s.starts_with(head) || !s.ends_with(')')) {
    throw InvalidArgument(fmt::format("is not PartitionSpec(…): {}", s));
  }
  std::vector<AxisEntry> entries;
  for (std::string_view part : split_top(s.substr(head.size(), s.size() - head.size() - 1))) {
    if (part == "None") {
      entries.emplace_back();
    } else if (auto name = quoted(part)) {
      entries.emplace_back(*name);
    } else if (part.size() > 2 && part.front() == '(' && part.back() == ')') {
      std::vector<std::string> axes;
      for (std::string_view a : split_top(part.substr(1, part.size() - 2))) {
        auto name_in_tuple = quoted(a);
        if (!name_in_tuple) throw InvalidArgument(fmt::format("has a malformed axis: {}", a));
        axes.push_back(*name_in_tuple);
      }
      entries.emplace_back(std::move(axes));
    } else {
      throw InvalidArgument(fmt::format("has a malformed entry: {}", part));
    }
  }
  return PartitionSpec::from_entries(std::move(entries));
}

void register_operation(std::string_view name, OperationParser parse) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (!r.parsers.emplace(std::string(name), std::move(parse)).second) {
    throw InvalidArgument(fmt::format("the operation name '{}' is registered twice", name));
  }
}

const OperationParser* find_operation(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.parsers.find(name);
  return it == r.parsers.end() ? nullptr : &it->second;
}

std::vector<std::string> operation_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<std::string> out;
  for (const auto& [name, parse] : r.parsers) out.push_back(name);
  return out;
}

}  // namespace spmd::compiler
