// gamma with the form of its result named (kernels/random_samplers.h: GammaForm), for the
// compositions that need YNNPACK's logarithms (dirichlet from 4,096 values). Internal to
// lib/random/.
#pragma once

#include "kernels/random_samplers.h"
#include "spmd/tensor.h"

namespace spmd::random {

// random::gamma (spmd/random.h) giving `form`: samples, or their logarithms by XLA's log or by
// YNNPACK's. The same checks and errors as gamma's.
Tensor gamma_in_form(const Tensor& key, const Tensor& a, kernels::GammaForm form);

}  // namespace spmd::random
