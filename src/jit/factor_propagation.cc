// Shardy's aggressive factor propagation for whole mesh axes (factor_propagation.h).
#include "jit/factor_propagation.h"

#include <algorithm>
#include <tuple>

#include "jit/layout.h"

namespace spmd::compiler {
namespace {

using Axes = std::vector<int>;

bool is_prefix(const Axes& a, const Axes& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}
bool is_strict_prefix(const Axes& a, const Axes& b) {
  return a.size() < b.size() && is_prefix(a, b);
}
bool holds(const Axes& axes, int axis) {
  return std::find(axes.begin(), axes.end(), axis) != axes.end();
}

// Shardy's getCompatibleMajorAxesInternal: `agreed` cut where `next` differs from it, grown by
// the rest of `next` while growing is allowed; returns whether it still is.
bool agree(Axes& agreed, const Axes& next, bool can_grow) {
  for (size_t i = 0; i < agreed.size() && i < next.size(); ++i) {
    if (agreed[i] != next[i]) {
      agreed.resize(i);
      return false;
    }
  }
  if (can_grow && next.size() > agreed.size())
    agreed.insert(agreed.end(), next.begin() + static_cast<std::ptrdiff_t>(agreed.size()),
                  next.end());
  return can_grow;
}

// The axes factor `f` may grow to, before any tensor's own conflicts (getCompatibleMajorAxes).
Axes candidates(const Projection& p, int f, Direction direction) {
  if (direction == Direction::kNone) return {};
  const bool backward = direction == Direction::kBackward;
  Axes axes;
  bool can_grow = true;
  for (const TensorFactors& t : backward ? p.results : p.operands) {
    if (t[static_cast<size_t>(f)])
      can_grow = agree(axes, t[static_cast<size_t>(f)]->axes, can_grow);
  }
  if (direction != Direction::kBoth) can_grow = false;
  for (const TensorFactors& t : backward ? p.operands : p.results) {
    if (t[static_cast<size_t>(f)])
      can_grow = agree(axes, t[static_cast<size_t>(f)]->axes, can_grow);
  }
  return axes;
}

struct Source {
  int64_t size = -1;  // the product of the source tensor's factor sizes
  int index = -1;     // operands first, then results
};

// Per factor, the largest tensor whose axes along it start with the candidates (the first such
// on a tie).
std::vector<Source> sources(const Projection& p, const FactorRule& rule,
                            const std::vector<Axes>& candidate) {
  std::vector<Source> source(rule.sizes.size());
  int index = 0;
  auto visit = [&](const TensorFactors& t) {
    int64_t size = 1;
    for (size_t f = 0; f < t.size(); ++f) size *= t[f] ? rule.sizes[f] : 1;
    for (size_t f = 0; f < t.size(); ++f) {
      if (!t[f] || candidate[f].empty() || !is_prefix(candidate[f], t[f]->axes)) continue;
      if (size > source[f].size) source[f] = {size, index};
    }
    ++index;
  };
  for (const TensorFactors& t : p.operands) visit(t);
  for (const TensorFactors& t : p.results) visit(t);
  return source;
}

// The order Shardy takes the factors in to settle conflicts between them.
std::vector<int> factor_order(const FactorRule& rule, const std::vector<Axes>& candidate,
                              const std::vector<Source>& source, const Mesh& mesh) {
  std::vector<int> order(rule.sizes.size());
  for (size_t f = 0; f < order.size(); ++f) order[f] = static_cast<int>(f);
  const bool elementwise = rule.family == FactorRule::Family::kElementwise;
  auto key = [&](int f) {
    const auto i = static_cast<size_t>(f);
    const int64_t sharded = elementwise ? axes_size(candidate[i], mesh) : 0;
    return std::make_tuple(-source[i].size, -sharded, source[i].index, f);
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  return order;
}

// What tensor `t` takes along factor `f` (getPropagatedFactorSharding): the candidates, cut
// before an axis its closed dimension lacks, only if its own axes are a strict prefix of them,
// then cut before an axis another of its factors holds. Empty: nothing.
Axes taken(const TensorFactors& t, int f, const Axes& candidate) {
  const auto& mine = t[static_cast<size_t>(f)];
  if (!mine) return {};
  Axes axes = candidate;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (mine->closed && !holds(mine->axes, axes[i])) {
      axes.resize(i);
      break;
    }
  }
  if (!is_strict_prefix(mine->axes, axes)) return {};
  auto held_elsewhere = [&](int axis) {
    for (size_t g = 0; g < t.size(); ++g) {
      if (static_cast<int>(g) != f && t[g] && holds(t[g]->axes, axis)) return true;
    }
    return false;
  };
  const auto cut = std::find_if(axes.begin(), axes.end(), held_elsewhere);
  axes.erase(cut, axes.end());
  return axes;
}

}  // namespace

std::vector<bool> propagate_factors(Projection& projection, const FactorRule& rule,
                                    const std::function<Direction(int)>& direction,
                                    const Mesh& mesh) {
  const size_t operands = projection.operands.size();
  std::vector<bool> grew(operands + projection.results.size(), false);
  std::vector<Axes> candidate(rule.sizes.size());
  bool any = false;
  for (size_t f = 0; f < candidate.size(); ++f) {
    candidate[f] = candidates(projection, static_cast<int>(f), direction(static_cast<int>(f)));
    any = any || !candidate[f].empty();
  }
  if (!any) return grew;
  const std::vector<int> order =
      factor_order(rule, candidate, sources(projection, rule, candidate), mesh);
  const bool elementwise = rule.family == FactorRule::Family::kElementwise;
  auto grow = [&](std::vector<TensorFactors>& tensors, size_t first, bool are_operands) {
    for (size_t t = 0; t < tensors.size(); ++t) {
      for (int f : order) {
        Axes axes = taken(tensors[t], f, candidate[static_cast<size_t>(f)]);
        if (axes.empty()) continue;
        for (const TensorFactors& r : projection.results) {
          const auto& theirs = r[static_cast<size_t>(f)];
          if (are_operands && elementwise && theirs && is_strict_prefix(theirs->axes, axes))
            axes = theirs->axes;
        }
        auto& mine = tensors[t][static_cast<size_t>(f)];
        if (!is_strict_prefix(mine->axes, axes)) continue;
        mine->axes = std::move(axes);
        grew[first + t] = true;
      }
    }
  };
  grow(projection.results, operands, false);
  grow(projection.operands, 0, true);
  return grew;
}

}  // namespace spmd::compiler
