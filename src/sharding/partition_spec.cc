#include "spmd/partition_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace spmd {

PartitionSpec::PartitionSpec(AxisEntry e0) {
  if (!e0.is_absent()) entries_.push_back(std::move(e0));
}

PartitionSpec::PartitionSpec(AxisEntry e0, AxisEntry e1, AxisEntry e2, AxisEntry e3, AxisEntry e4,
                             AxisEntry e5, AxisEntry e6, AxisEntry e7) {
  for (AxisEntry* e : {&e0, &e1, &e2, &e3, &e4, &e5, &e6, &e7}) {
    if (e->is_absent()) break;
    entries_.push_back(std::move(*e));
  }
}

PartitionSpec PartitionSpec::from_entries(std::vector<AxisEntry> entries) {
  PartitionSpec spec;
  spec.entries_ = std::move(entries);
  std::erase_if(spec.entries_, [](const AxisEntry& e) { return e.is_absent(); });
  return spec;
}

std::vector<std::string> PartitionSpec::axes() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.insert(out.end(), e.axes().begin(), e.axes().end());
  return out;
}

std::string PartitionSpec::to_string() const {
  std::vector<std::string> parts;
  for (const auto& e : entries_) {
    if (e.axes().empty()) {
      parts.emplace_back("None");
    } else if (e.axes().size() == 1) {
      parts.push_back(fmt::format("'{}'", e.axes()[0]));
    } else {
      std::vector<std::string> quoted;
      for (const auto& a : e.axes()) quoted.push_back(fmt::format("'{}'", a));
      parts.push_back(fmt::format("({})", fmt::join(quoted, ", ")));
    }
  }
  if (parts.size() == 1) return fmt::format("PartitionSpec({},)", parts[0]);
  return fmt::format("PartitionSpec({})", fmt::join(parts, ", "));
}

}  // namespace spmd
