// What the element-wise family (elementwise.cc) offers the other element-wise kinds: the shape
// rule they share. Its operations are made through lax.h (unary, binary).
#pragma once

#include "jit/operation.h"

namespace spmd::compiler {

// The shape element-wise operands make: the operands' of highest rank, which every other
// operand of positive rank must equal. Throws InvalidArgument naming `what` otherwise.
Shape elementwise_shape(std::string_view what, std::span<const ValueType> operands);

// "multiply_add" (ops/multiply_add.cc): a × b + c rounded once, after flipping the signs `form`
// flags (kernels::MultiplyAddSign); float32 or float64 operands of one dtype.
std::shared_ptr<const Operation> multiply_add_operation(uint8_t form);

}  // namespace spmd::compiler
