// How a contraction (contraction.cc's DotOp, einsum letters) reaches the matrix product
// (kernels/matmul.h) with its operands and result where they lie. Each letter's stride in its
// array is known from the letters and sizes; the letters of one role (batch, contracting, one
// operand's free letters) become one matrix dimension where they are consecutive in memory in
// that order. An operand whose rows are contiguous is read through BLAS's transpose flag, one
// with gaps between rows (a permuted einsum operand: "bqhd" read per head b, h is a q × d matrix
// whose rows lie H·D apart) through its leading dimension, and the batch letters through
// per-operand strides. A result whose columns are not contiguous but whose rows are is computed
// as the transposed product, out = (rhsᵀ · lhsᵀ)ᵀ, the backend's operands swapped. Only what no
// flag or stride describes is copied: an operand into matrix order first, the result after.
// Pure. Internal to jit/ops.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "kernels/matmul.h"

namespace spmd::compiler {

// The roles of a contraction's letters: batch in the result's order, the others in their
// operand's.
struct ContractionLetters {
  std::string batch, contracting, lhs_free, rhs_free;
};

// The letter orders of the matrices the product takes packed and gives.
std::string lhs_matrix_order(const ContractionLetters& c);  // batch, lhs free, contracting
std::string rhs_matrix_order(const ContractionLetters& c);  // batch, contracting, rhs free
std::string product_order(const ContractionLetters& c);     // batch, lhs free, rhs free

struct GemmPlan {
  kernels::MatmulShape shape;  // as the backend takes it (after the swap, where swapped)
  bool arrange_lhs = false;    // copy the lhs into lhs_matrix_order first
  bool arrange_rhs = false;    // copy the rhs into rhs_matrix_order first
  bool arrange_out = false;    // compute into product_order, then copy into the result's order
  bool swap = false;           // the backend's a is the rhs and its b the lhs
};

// The plan for lhs · rhs → out (letters; `sizes` of every letter).
GemmPlan plan_gemm(const std::string& lhs, const std::string& rhs, const std::string& out,
                   const ContractionLetters& c, const std::map<char, int64_t>& sizes);

}  // namespace spmd::compiler
