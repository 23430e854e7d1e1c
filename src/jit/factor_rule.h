// An operation's sharding rule as Shardy states it (its OpShardingRuleAttr): the operation's
// factors, the independent index dimensions its operands and result share, each with a size and
// a kind, and for every operand and the result the factor behind each dimension. Propagation
// (propagation.h) moves a factor's mesh axes between every tensor that has it, as JAX's
// compiler does before it partitions; an operation without such a rule stops it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace spmd::compiler {

struct ValueType;

struct FactorRule {
  // Shardy's factor types that propagation tells apart: a pass-through factor is in the result;
  // a reduction factor is in operands only (contracted or reduced away).
  enum class Kind : uint8_t { kPassThrough, kReduction };
  // How Shardy's op-priority schedule ranks the operation: element-wise kinds and those that
  // only move elements (reshape, transpose) first, broadcasts' results last (op_priority.cc).
  enum class Family : uint8_t { kElementwise, kMovesElements, kBroadcast, kOther };

  std::vector<int64_t> sizes;              // per factor
  std::vector<Kind> kinds;                 // per factor
  std::vector<std::vector<int>> operands;  // per operand, per dimension: its factor or -1
  std::vector<int> result;                 // per result dimension: its factor or -1
  Family family = Family::kOther;

  // Appends a factor; returns its index.
  int add(int64_t size, Kind kind = Kind::kPassThrough);
  // Every operand of the result's rank maps dimension d to factor d; rank-0 operands, which
  // JAX broadcasts first, have none.
  static FactorRule pointwise(std::span<const ValueType> operands, const ValueType& result);
};

}  // namespace spmd::compiler
