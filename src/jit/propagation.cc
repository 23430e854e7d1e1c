// Shardy's op-priority propagation over a traced program (propagation.h), each operation's step
// in factor_propagation.cc.
#include "jit/propagation.h"

#include <functional>

#include "jit/factor_propagation.h"
#include "jit/ops/parameter.h"
#include "jit/sharding_in_types.h"

namespace spmd::compiler {
namespace {

using Axes = std::vector<int>;

// A value's sharding as propagation holds it: per dimension its axes and whether it is closed;
// `set` false until something gives it one (JAX's value without a sharding attribute).
struct ValueSharding {
  std::vector<Axes> dims;
  std::vector<bool> closed;
  bool set = false;
};

ValueSharding closed_sharding(const Layout& layout) {
  return {layout.dims, std::vector<bool>(layout.dims.size(), true), true};
}

// A tensor seen through a rule: per factor, its sharding along it.
TensorFactors project(const ValueSharding& s, const std::vector<int>& factors, size_t count) {
  TensorFactors t(count);
  for (size_t d = 0; d < factors.size(); ++d) {
    if (factors[d] < 0) continue;
    FactorSharding& f = t[static_cast<size_t>(factors[d])].emplace();
    if (s.set) f = {s.dims[d], s.closed[d]};
  }
  return t;
}

class Propagation {
 public:
  Propagation(const Program& program, const Mesh& mesh)
      : program_(program),
        mesh_(mesh),
        out_layouts_(asked_output_layouts(program)),
        live_(live_values(program)),
        rules_(program.ops.size()),
        shardings_(program.ops.size()),
        users_(program.ops.size()),
        uses_(program.ops.size(), 0),
        listed_(program.ops.size(), false) {}

  // Finds each live operation's rule; false where one with operands has none.
  bool read_rules();
  // The parameters' and constraints' own layouts.
  void preset();
  void run() {
    for (int priority = 0; priority < 5; ++priority) round(priority);
  }
  std::vector<Layout> layouts() const;

 private:
  void round(int priority);
  // One operation's propagation step; true when a value changed.
  bool step(int value, int priority);
  Direction direction(int value, int factor, int priority) const;
  bool operands_used_once(int value) const;
  // Writes what the step gave `value` through `factors`; true when its sharding changed.
  bool update(int value, const std::vector<int>& factors, const TensorFactors& t);
  // Puts back on the worklist the operations a change of `value` concerns, but not `by`.
  void notify(int value, int by);
  void push(int value);
  // The given out layouts pushed into their values (Shardy's func-result edges).
  void result_edges();

  const Program& program_;
  const Mesh& mesh_;
  const std::vector<std::optional<Layout>> out_layouts_;
  std::vector<bool> live_;
  std::vector<std::optional<FactorRule>> rules_;
  std::vector<ValueSharding> shardings_;
  std::vector<std::vector<int>> users_;  // per value, the operations using it, latest first
  std::vector<int> uses_;                // per value, its uses (returns included)
  std::vector<int> worklist_;            // popped from the back
  std::vector<bool> listed_;
};

bool Propagation::read_rules() {
  for (size_t v = 0; v < program_.ops.size(); ++v) {
    const Op& op = program_.ops[v];
    if (!live_[v] || op.inputs.empty()) continue;
    std::vector<ValueType> operands;
    for (int in : op.inputs) {
      operands.push_back(program_.ops[static_cast<size_t>(in)].type());
      users_[static_cast<size_t>(in)].insert(users_[static_cast<size_t>(in)].begin(),
                                             static_cast<int>(v));
      ++uses_[static_cast<size_t>(in)];
    }
    rules_[v] = op.operation->factor_rule(operands, op.type());
    if (!rules_[v]) return false;
  }
  for (const Output& out : program_.outputs) ++uses_[static_cast<size_t>(out.value)];
  return true;
}

void Propagation::preset() {
  for (size_t v = 0; v < program_.ops.size(); ++v) {
    const Op& op = program_.ops[v];
    if (op.is<ParameterOp>() || (live_[v] && op.is<ConstraintOp>())) {
      shardings_[v] = closed_sharding(layout_of(*op.operation->sharding(), op.shape.size()));
    }
  }
  // A constraint's operand takes its sharding where it has none and no other constraint on it
  // asks for another (Shardy's apply-sharding-constraints).
  for (size_t v = 0; v < program_.ops.size(); ++v) {
    const Op& op = program_.ops[v];
    if (!live_[v] || !op.is<ConstraintOp>()) continue;
    const auto in = static_cast<size_t>(op.inputs[0]);
    if (shardings_[in].set || program_.ops[in].shape.empty()) continue;
    bool agreed = true;
    for (int user : users_[in]) {
      const auto u = static_cast<size_t>(user);
      agreed = agreed &&
               (!program_.ops[u].is<ConstraintOp>() || shardings_[u].dims == shardings_[v].dims);
    }
    if (agreed) shardings_[in] = shardings_[v];
  }
}

void Propagation::round(int priority) {
  result_edges();
  worklist_.clear();
  for (size_t v = program_.ops.size(); v-- > 0;) {
    if (rules_[v]) worklist_.push_back(static_cast<int>(v));
    listed_[v] = static_cast<bool>(rules_[v]);
  }
  while (!worklist_.empty()) {
    const int v = worklist_.back();
    worklist_.pop_back();
    listed_[static_cast<size_t>(v)] = false;
    step(v, priority);
  }
  result_edges();
}

bool Propagation::step(int value, int priority) {
  const Op& op = program_.ops[static_cast<size_t>(value)];
  const FactorRule& rule = *rules_[static_cast<size_t>(value)];
  Projection p;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    p.operands.push_back(project(shardings_[static_cast<size_t>(op.inputs[i])], rule.operands[i],
                                 rule.sizes.size()));
  }
  p.results.push_back(
      project(shardings_[static_cast<size_t>(value)], rule.result, rule.sizes.size()));
  const std::vector<bool> grew = propagate_factors(
      p, rule, [&](int f) { return direction(value, f, priority); }, mesh_);
  bool changed = false;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    if (grew[i] && update(op.inputs[i], rule.operands[i], p.operands[i])) {
      notify(op.inputs[i], value);
      changed = true;
    }
  }
  if (grew.back() && update(value, rule.result, p.results[0])) {
    notify(value, value);
    changed = true;
  }
  return changed;
}

Direction Propagation::direction(int value, int factor, int priority) const {
  const FactorRule& rule = *rules_[static_cast<size_t>(value)];
  using Family = FactorRule::Family;
  const bool moves = rule.family == Family::kElementwise || rule.family == Family::kMovesElements;
  const bool broadcast = rule.family == Family::kBroadcast;
  Direction d = Direction::kNone;
  if (moves && (priority >= 1 || operands_used_once(value))) d = Direction::kBoth;
  if (priority >= 2 && rule.kinds[static_cast<size_t>(factor)] == FactorRule::Kind::kPassThrough)
    d = d | (broadcast ? Direction::kBackward : Direction::kBoth);
  if (priority >= 3) d = d | (broadcast ? Direction::kBackward : Direction::kBoth);
  return priority >= 4 ? Direction::kBoth : d;
}

bool Propagation::operands_used_once(int value) const {
  for (int in : program_.ops[static_cast<size_t>(value)].inputs) {
    const auto i = static_cast<size_t>(in);
    if (!program_.ops[i].shape.empty() && uses_[i] != 1) return false;
  }
  return true;
}

bool Propagation::update(int value, const std::vector<int>& factors, const TensorFactors& t) {
  ValueSharding& s = shardings_[static_cast<size_t>(value)];
  const size_t rank = factors.size();
  std::vector<Axes> dims = s.set ? s.dims : std::vector<Axes>(rank);
  bool any = false;
  for (size_t d = 0; d < rank; ++d) {
    if (factors[d] >= 0) dims[d] = t[static_cast<size_t>(factors[d])]->axes;
    any = any || !dims[d].empty();
  }
  if ((!s.set && !any) || (s.set && dims == s.dims)) return false;
  if (!s.set) s.closed.assign(rank, false);
  s.dims = std::move(dims);
  s.set = true;
  return true;
}

void Propagation::notify(int value, int by) {
  if (value != by && rules_[static_cast<size_t>(value)]) push(value);
  for (int user : users_[static_cast<size_t>(value)]) {
    if (user != by) push(user);
  }
}

void Propagation::push(int value) {
  if (listed_[static_cast<size_t>(value)]) return;
  listed_[static_cast<size_t>(value)] = true;
  worklist_.push_back(value);
}

void Propagation::result_edges() {
  for (size_t i = 0; i < program_.outputs.size(); ++i) {
    if (!out_layouts_[i]) continue;
    const int v = program_.outputs[i].value;
    const Op& op = program_.ops[static_cast<size_t>(v)];
    const FactorRule identity = FactorRule::pointwise(std::vector<ValueType>{op.type()}, op.type());
    Projection p;
    p.operands.push_back(
        project(shardings_[static_cast<size_t>(v)], identity.result, identity.sizes.size()));
    p.results.push_back(project(closed_sharding(out_layouts_[i]->settled()), identity.result,
                                identity.sizes.size()));
    FactorRule edge = identity;
    edge.family = FactorRule::Family::kOther;
    const auto grew = propagate_factors(
        p, edge, [](int) { return Direction::kBoth; }, mesh_);
    if (grew[0]) update(v, identity.result, p.operands[0]);
  }
}

std::vector<Layout> Propagation::layouts() const {
  std::vector<Layout> out;
  out.reserve(shardings_.size());
  for (size_t v = 0; v < shardings_.size(); ++v) {
    const ValueSharding& s = shardings_[v];
    out.push_back(s.set ? Layout{s.dims, {}} : Layout::replicated(program_.ops[v].shape.size()));
  }
  return out;
}

}  // namespace

std::optional<std::vector<Layout>> propagate_like_jax(const Program& program, const Mesh& mesh) {
  if (has_explicit_axes(mesh)) return std::nullopt;
  Propagation propagation(program, mesh);
  if (!propagation.read_rules()) return std::nullopt;
  propagation.preset();
  propagation.run();
  return propagation.layouts();
}

}  // namespace spmd::compiler
