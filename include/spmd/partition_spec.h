// spmd::PartitionSpec (alias spmd::P) — how each dimension of an array maps onto mesh axes
// (jax.sharding.PartitionSpec).
//
// One entry per leading array dimension: spmd::None (or {}) keeps the dimension whole, one axis
// name splits it over that axis, several names split it over their product, major to minor.
// Dimensions past the last entry are not split. Plain values; thread-safe.
//   spmd::P("devices")            rows over 'devices'
//   spmd::P(spmd::None, "mp")     columns over 'mp'
//   spmd::P(spmd::Axes{"dp", "mp"})   rows over dp x mp, dp major (JAX's P(('dp', 'mp')))
//   spmd::P({"dp", "mp"}, None)   the same tuple, in a spec of two entries
// A one-entry spec whose entry is a tuple needs the type spelled (Axes{…}): a bare P({"x", "y"})
// could also read as a spec of two entries, and does not compile.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace spmd {

// The "not split" entry.
struct NoneType {};
inline constexpr NoneType None{};

// One entry of a PartitionSpec: the axis names a dimension is split over (empty: not split).
class AxisEntry {
 public:
  AxisEntry() = default;  // None
  AxisEntry(NoneType) {}  // NOLINT(google-explicit-constructor): spec literals read like JAX
  AxisEntry(const char* axis) : axes_{axis} {}             // NOLINT(google-explicit-constructor)
  AxisEntry(std::string axis) : axes_{std::move(axis)} {}  // NOLINT(google-explicit-constructor)
  AxisEntry(std::initializer_list<std::string> axes) : axes_(axes) {}  // NOLINT
  // The axes of a list built at run time (one name, several, or none for None).
  explicit AxisEntry(std::vector<std::string> axes) : axes_(std::move(axes)) {}

  const std::vector<std::string>& axes() const { return axes_; }
  bool is_none() const { return axes_.empty() && !absent_; }
  bool operator==(const AxisEntry& o) const { return axes_ == o.axes_ && absent_ == o.absent_; }

  // Marks a constructor argument that was not given (distinct from None).
  static AxisEntry absent() {
    AxisEntry e;
    e.absent_ = true;
    return e;
  }
  bool is_absent() const { return absent_; }

 private:
  std::vector<std::string> axes_;
  bool absent_ = false;
};

// A tuple entry: Axes{"dp", "mp"}.
using Axes = AxisEntry;

class PartitionSpec {
 public:
  // No entries: every dimension whole.
  PartitionSpec() = default;
  // One entry: P("x"), P(Axes{"x", "y"}) (one dimension over x and y, x major), P(None).
  explicit PartitionSpec(AxisEntry e0);
  // Two to eight entries: P(None, "y"), P({"x", "y"}, {}).
  explicit PartitionSpec(AxisEntry e0, AxisEntry e1, AxisEntry e2 = AxisEntry::absent(),
                         AxisEntry e3 = AxisEntry::absent(), AxisEntry e4 = AxisEntry::absent(),
                         AxisEntry e5 = AxisEntry::absent(), AxisEntry e6 = AxisEntry::absent(),
                         AxisEntry e7 = AxisEntry::absent());
  // Any number of entries.
  static PartitionSpec from_entries(std::vector<AxisEntry> entries);

  const std::vector<AxisEntry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  // Every axis named, in order of appearance (repeats kept, for validation).
  std::vector<std::string> axes() const;
  bool operator==(const PartitionSpec& o) const { return entries_ == o.entries_; }
  // E.g. "PartitionSpec(None, ('dp', 'mp'))".
  std::string to_string() const;

 private:
  std::vector<AxisEntry> entries_;
};

using P = PartitionSpec;

}  // namespace spmd
