// Contraction of products into fused multiply-adds in a per-device program's element-wise chains,
// as JAX's jit rounds them.
//
// XLA compiles a fusion with LLVM's floating-point contraction always allowed, so on a CPU with
// FMA instructions (and on a GPU) a float product read by nothing but one sum or difference in
// the same fusion is not rounded: a * b + c is fma(a, b, c), and JAX's jit of it differs from
// its eager value (and from spmd's chains, which rounded every step) in about a quarter of the
// elements. Here such a pair of steps in one chain becomes one "multiply_add" step, chosen as
// LLVM's instruction combiner chooses (DAGCombiner's visitFADDForFMACombine and
// visitFSUBForFMACombine):
// - the product has no other reader in the chain and is not its result;
// - of a sum or difference of two such products, the left one is taken and the right one is
//   rounded (its own step);
// - a - b * c is fma(-b, c, a), and a * b - c is fma(a, b, -c);
// - float32 and float64 only: a half type's steps round to it between them (XLA converts around
//   each), so there is nothing to contract;
// - the product has as many elements as the sum: a product of scalars in a chain over many
//   elements is computed once, outside XLA's loop (LLVM hoists it), so it is rounded.
// A chain feeding a reduction (kFusedReduce) is contracted where XLA's own loop computes the
// reduction: below 4,096 elements. From there XLA hands the reduction, with the element-wise
// work feeding it, to YNNPACK (float64 too, as measured), and YNNPACK fuses no multiply-add. A last
// product feeding the reduction's own sum stays rounded, as in JAX (sum(a * b) equals it).
#pragma once

#include "jit/local_program.h"

namespace spmd::compiler {

// Rewrites the bodies of `local`'s kFused, kPsumThen and kFusedReduce steps (those not
// YNNPACK's) in place, after fuse.h's passes.
// Values change only where a product is contracted: there they are JAX's jit's, rounded once.
void contract_multiply_adds(LocalProgram& local);

}  // namespace spmd::compiler
