#include "cluster/slurm_nodelist.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdint>

#include "spmd/error.h"

namespace spmd {
namespace {

// One piece of a host pattern: literal text, or a bracket's list of numbers.
struct Segment {
  std::string literal;
  struct Range {
    uint64_t lo = 0;
    uint64_t hi = 0;
    size_t width = 0;  // zero padding
  };
  std::vector<Range> ranges;  // empty for a literal
};
using Pattern = std::vector<Segment>;

// The largest number a range bound may have; more digits than this are not a node number.
constexpr size_t kMaxDigits = 18;

class Parser {
 public:
  Parser(std::string_view list, std::string_view variable) : list_(list), variable_(variable) {}

  std::vector<Pattern> parse() {
    if (list_.empty()) fail("it is empty");
    std::vector<Pattern> hosts;
    Pattern current;
    std::string literal;
    size_t i = 0;
    while (i < list_.size()) {
      const char c = list_[i];
      if (c == ',') {
        finish_host(hosts, current, literal);
        ++i;
      } else if (c == '[') {
        if (!literal.empty()) current.push_back(Segment{std::move(literal), {}});
        literal.clear();
        const size_t close = list_.find(']', i);
        if (close == std::string_view::npos) fail("'[' without a closing ']'");
        const std::string_view body = list_.substr(i + 1, close - i - 1);
        if (body.find('[') != std::string_view::npos) fail("brackets do not nest");
        current.push_back(Segment{"", parse_ranges(body)});
        i = close + 1;
      } else if (c == ']') {
        fail("']' without an opening '['");
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        fail("it contains whitespace");
      } else {
        literal.push_back(c);
        ++i;
      }
    }
    finish_host(hosts, current, literal);
    return hosts;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw InvalidArgument(
        fmt::format("{}='{}' is not a valid Slurm node list: {}", variable_, list_, why));
  }

 private:
  void finish_host(std::vector<Pattern>& hosts, Pattern& current, std::string& literal) {
    if (!literal.empty()) current.push_back(Segment{std::move(literal), {}});
    literal.clear();
    if (current.empty()) fail("it has an empty host name");
    hosts.push_back(std::move(current));
    current.clear();
  }

  uint64_t number(std::string_view text) const {
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || text.size() > kMaxDigits || ec != std::errc() ||
        ptr != text.data() + text.size()) {
      fail(fmt::format("'{}' is not a node number", text));
    }
    return v;
  }

  std::vector<Segment::Range> parse_ranges(std::string_view body) const {
    if (body.empty()) fail("'[]' is empty");
    std::vector<Segment::Range> ranges;
    size_t start = 0;
    while (true) {
      const size_t comma = body.find(',', start);
      const std::string_view item = body.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      const size_t dash = item.find('-');
      Segment::Range r;
      if (dash == std::string_view::npos) {
        r.lo = r.hi = number(item);
        r.width = item.size();
      } else {
        r.lo = number(item.substr(0, dash));
        r.hi = number(item.substr(dash + 1));
        r.width = dash;
        if (r.lo > r.hi) fail(fmt::format("the range '{}' runs backwards", item));
      }
      ranges.push_back(r);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return ranges;
  }

  std::string_view list_;
  std::string_view variable_;
};

std::string render(uint64_t n, size_t width) { return fmt::format("{:0{}}", n, width); }

// Appends every host of `pattern` from segment `i` on, prefixed by `prefix`.
void expand(const Pattern& pattern, size_t i, const std::string& prefix,
            std::vector<std::string>& out, size_t limit, const Parser& parser) {
  if (i == pattern.size()) {
    if (out.size() >= limit) parser.fail(fmt::format("it names more than {} hosts", limit));
    out.push_back(prefix);
    return;
  }
  const Segment& s = pattern[i];
  if (s.ranges.empty()) return expand(pattern, i + 1, prefix + s.literal, out, limit, parser);
  for (const auto& r : s.ranges) {
    for (uint64_t n = r.lo; n <= r.hi; ++n) {
      expand(pattern, i + 1, prefix + render(n, r.width), out, limit, parser);
    }
  }
}

}  // namespace

std::string first_slurm_host(std::string_view list, std::string_view variable) {
  Parser parser(list, variable);
  const std::vector<Pattern> hosts = parser.parse();
  std::string host;
  for (const Segment& s : hosts.front()) {
    host += s.ranges.empty() ? s.literal : render(s.ranges.front().lo, s.ranges.front().width);
  }
  return host;
}

std::vector<std::string> expand_slurm_hosts(std::string_view list, std::string_view variable,
                                            size_t limit) {
  Parser parser(list, variable);
  std::vector<std::string> out;
  for (const Pattern& p : parser.parse()) expand(p, 0, "", out, limit, parser);
  return out;
}

}  // namespace spmd
