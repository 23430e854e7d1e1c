// The primitives' builders (lax.h): each applies one operation of its family.
#include "jit/lax.h"

#include <utility>

#include "jit/trace.h"

namespace spmd::compiler::lax {

Tensor bind(std::shared_ptr<const Operation> operation, const std::vector<Tensor>& operands) {
  std::vector<int> values;
  values.reserve(operands.size());
  for (const Tensor& t : operands) values.push_back(t.value());
  return operands.front().trace()->apply(std::move(operation), std::move(values));
}

}  // namespace spmd::compiler::lax
