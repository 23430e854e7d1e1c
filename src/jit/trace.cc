#include "jit/trace.h"

#include <fmt/format.h>

#include <utility>

#include "jit/sharding_in_types.h"
#include "spmd/error.h"

namespace spmd::compiler {
namespace {

thread_local std::shared_ptr<Trace> current_trace;

}  // namespace

Tensor Trace::apply(std::shared_ptr<const Operation> operation, std::vector<int> inputs) {
  std::vector<ValueType> types;
  types.reserve(inputs.size());
  for (int in : inputs) types.push_back(op(in).type());
  ValueType result = typed_result(*operation, types, mesh());
  const bool effect = operation->has_effect();
  program_.ops.push_back(Op{.operation = std::move(operation),
                            .inputs = std::move(inputs),
                            .shape = std::move(result.shape),
                            .dtype = result.dtype,
                            .spec = std::move(result.spec)});
  const int value = static_cast<int>(program_.ops.size()) - 1;
  if (effect) program_.effects.push_back(value);
  return Tensor(shared_from_this(), value);
}

std::shared_ptr<Trace> Trace::current(std::string_view what) {
  if (!current_trace) {
    throw InvalidArgument(fmt::format(
        "spmd::numpy::{} outside a function traced by spmd::jit: Tensors exist only inside one",
        what));
  }
  return current_trace;
}

std::shared_ptr<Trace> Trace::current_or_null() { return current_trace; }

TraceScope::TraceScope(std::shared_ptr<Trace> trace)
    : trace_(std::move(trace)), previous_(std::exchange(current_trace, trace_)) {}

TraceScope::~TraceScope() {
  trace_->close();
  current_trace = std::move(previous_);
}

std::shared_ptr<Trace> trace_of(std::string_view what,
                                std::initializer_list<const Tensor*> tensors) {
  std::shared_ptr<Trace> trace;
  for (const Tensor* t : tensors) {
    if (!t->trace()) {
      throw InvalidArgument(fmt::format("{}: a default-constructed Tensor holds no value", what));
    }
    if (!t->trace()->open()) {
      throw InvalidArgument(fmt::format(
          "{}: Tensor %{} is used outside the spmd::jit call that traced it (a Tensor exists only "
          "while its jitted function is being traced; return it instead of keeping it)",
          what, t->value()));
    }
    if (trace && trace != t->trace()) {
      throw InvalidArgument(fmt::format(
          "{}: Tensors of two different jit traces are combined (%{} belongs to another one)", what,
          t->value()));
    }
    trace = t->trace();
  }
  return trace;
}

}  // namespace spmd::compiler

namespace spmd {

Shape Tensor::shape() const {
  return compiler::trace_of("Tensor::shape", {this})->op(value_).shape;
}

DType Tensor::dtype() const {
  return compiler::trace_of("Tensor::dtype", {this})->op(value_).dtype;
}

NamedSharding Tensor::sharding() const {
  const auto trace = compiler::trace_of("Tensor::sharding", {this});
  const compiler::Op& op = trace->op(value_);
  if (trace->mesh() == nullptr) {
    throw InvalidArgument("Tensor::sharding: this Tensor's trace has no mesh");
  }
  std::vector<AxisEntry> entries = compiler::type_entries(op.type());
  return NamedSharding(*trace->mesh(), PartitionSpec::from_entries(std::move(entries)));
}

int64_t Tensor::size() const { return shape_size(shape()); }

std::string Tensor::to_string() const {
  const auto trace = compiler::trace_of("Tensor::to_string", {this});
  const compiler::Op& op = trace->op(value_);
  return fmt::format("Tensor({}, %{})", compiler::typed_text(op.type()), value_);
}

}  // namespace spmd
