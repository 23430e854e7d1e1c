// The partitioner's working state, the interface every operation's sharding rule
// (Operation::partition, in src/jit/ops/) emits its steps through. partition.cc drives it over a
// program; reshard.cc moves a value between layouts. Private to src/jit/.
// Open to lib/: a library's operations state their sharding rules, as ops/ do.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "jit/layout.h"
#include "jit/local_program.h"
#include "jit/program.h"
#include "spmd/mesh.h"

namespace spmd::compiler {

class Partitioner {
 public:
  // The operand slots a lazily defined value needs to be made in layout `want` (define_lazily).
  using MakeOperands = std::function<std::vector<int>(Partitioner& p, const Layout& want)>;

  Partitioner(const Program& program, const Mesh& mesh, std::string name)
      : program_(program),
        mesh_(mesh),
        name_(std::move(name)),
        versions_(program.ops.size()),
        natural_(program.ops.size()),
        lazy_(program.ops.size()),
        result_(mesh) {}

  // The value's first layout (as its defining step made it).
  const Layout& layout(int value) const { return natural_[static_cast<size_t>(value)]; }
  // A slot holding `value` laid out as `want` (resharding, once, when no version has it).
  int slot_with(int value, const Layout& want);
  // Emits program op `value` computed locally from `inputs`, its result laid out as `out`;
  // `local` replaces the program's operation in the step (null: the program's).
  void compute(int value, std::vector<int> inputs, const Layout& out,
               const std::shared_ptr<const Operation>& local = nullptr) {
    define(value, emit_compute(value, std::move(inputs), out, local), out);
  }
  // Emits program op `value` with every operand whole on every device and its result whole
  // too: the rule of the kinds whose kernel needs the whole array (sort, take, scatter).
  void compute_whole(int value) {
    const Op& op = this->op(value);
    std::vector<int> slots;
    for (int in : op.inputs)
      slots.push_back(slot_with(in, Layout::replicated(this->op(in).shape.size())));
    compute(value, std::move(slots), Layout::replicated(op.shape.size()));
  }
  // The same step, its slot returned without defining the value by it (a step follows).
  int emit_compute(int value, std::vector<int> inputs, const Layout& out,
                   const std::shared_ptr<const Operation>& local = nullptr);
  // A collective of `kind` over `axes` on `slot` (value `value`, laid out as `layout` after it);
  // `dim`: the dimension a gather or scatter acts on.
  int emit_collective(StepKind kind, int slot, int value, const Layout& layout,
                      std::vector<int> axes, int dim = -1);
  // Records `slot` as `value` laid out as `layout`.
  void define(int value, int slot, const Layout& layout) {
    if (versions_[static_cast<size_t>(value)].empty())
      natural_[static_cast<size_t>(value)] = layout;
    versions_[static_cast<size_t>(value)].emplace_back(layout, slot);
  }
  // A value computed where it is used, in the layout the use asks for (a broadcast is made at its
  // final size and split instead of whole and then cut); `natural` is the layout propagation
  // reads for it, `operands` gives the operand slots for a wanted layout.
  void define_lazily(int value, const Layout& natural, MakeOperands operands) {
    natural_[static_cast<size_t>(value)] = natural;
    lazy_[static_cast<size_t>(value)] = std::move(operands);
  }
  // Makes `want` the layout later rules read for `value` (a step moving it there follows, for a
  // value that is not made where it is used): the partitioner holding a value to its type
  // (sharding_in_types.h).
  void hold(int value, const Layout& want) {
    const auto v = static_cast<size_t>(value);
    if (natural_[v] == want) return;
    if (!lazy_[v]) slot_with(value, want);
    natural_[v] = want;
  }
  int new_slot() { return result_.slots++; }
  // Every (layout, slot) `value` has been made in so far.
  const std::vector<std::pair<Layout, int>>& versions(int value) const {
    return versions_[static_cast<size_t>(value)];
  }
  // The layout a later constraint or out_sharding asks of `value`, carried back to it (hints.cc);
  // rules use it where forward propagation has nothing to say (every operand replicated).
  const std::optional<Layout>& hint(int value) const { return hints_[static_cast<size_t>(value)]; }
  void set_hints(std::vector<std::optional<Layout>> hints) { hints_ = std::move(hints); }
  LocalProgram& result() { return result_; }
  const Program& program() const { return program_; }
  const Op& op(int value) const { return program_.ops[static_cast<size_t>(value)]; }
  const Mesh& mesh() const { return mesh_; }
  // The local shape of `global` under `layout` (padded where a split is uneven: layout.h).
  Shape local(const Shape& global, const Layout& layout) const {
    return local_shape(global, layout, mesh_);
  }
  // `slot`, value `value` laid out as `layout`, with the padding of those of its dimensions
  // `dims` that the layout splits unevenly overwritten by `fill` (ops/padding.h): what a rule
  // emits before it reduces or contracts along them. `slot` itself when none is padded.
  int fill_padding(int value, int slot, const Layout& layout, const std::vector<int>& dims,
                   PaddingFill fill);

 private:
  // reshard.cc: appends the steps moving `slot` (value `value`, laid out `from`) to `to`.
  int reshard(int value, int slot, Layout from, const Layout& to);
  // Emits a lazily defined value laid out as `want` (see define_lazily).
  int materialize(int value, const Layout& want);
  int emit(Step step);

  const Program& program_;
  const Mesh& mesh_;
  std::string name_;
  std::vector<std::vector<std::pair<Layout, int>>> versions_;
  std::vector<Layout> natural_;
  std::vector<MakeOperands> lazy_;
  std::vector<std::optional<Layout>> hints_;
  LocalProgram result_;
};

// True when some of `axes` are in `used`.
bool overlaps(const std::vector<int>& axes, const std::set<int>& used);

}  // namespace spmd::compiler
