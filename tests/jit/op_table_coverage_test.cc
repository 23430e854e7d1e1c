// Every kind of operation the compiler's registry knows (element-wise, reduction, scan,
// contraction, select, cast, random, layout, creation, collective) is either checked against JAX
// at the edges by the differential table, tests/numerics/ (where the text named here appears),
// or listed below as not numeric, with the reason. A new kind with neither fails here, as a new
// Python name without a row fails test_every_numeric_name_has_a_row.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "jit/op_registry.h"

namespace spmd::compiler {
namespace {

// Kind -> the text in tests/numerics/ (or tests/shard_map/vma_table.py) that checks it.
const std::map<std::string, std::string> kChecked = {
    {"neg", "Row(\"negative\""},
    {"exp", "Row(\"exp\""},
    {"log", "Row(\"log\""},
    {"tanh", "Row(\"tanh\""},
    {"sqrt", "Row(\"sqrt\""},
    {"rsqrt", "Row(\"rsqrt\""},
    {"abs", "Row(\"abs\""},
    {"sign", "Row(\"sign\""},
    {"relu", "Row(\"relu\""},
    {"logistic", "Row(\"logistic\""},
    {"copy", "\"grad by (0, 1) of a*b*b at (x, x)\""},
    {"stop_gradient", "Row(\"stop_gradient\""},
    {"add", "Row(\"add\""},
    {"sub", "Row(\"subtract\""},
    {"mul", "Row(\"multiply\""},
    {"div", "Row(\"divide\""},
    {"pow", "Row(\"power\""},
    {"max", "Row(\"maximum\""},
    {"min", "Row(\"minimum\""},
    {"eq", "Row(\"equal\""},
    {"ne", "Row(\"not_equal\""},
    {"lt", "Row(\"less\""},
    {"le", "Row(\"less_equal\""},
    {"gt", "Row(\"greater\""},
    {"ge", "Row(\"greater_equal\""},
    {"reduce_sum", "Row(\"sum\""},
    {"reduce_max", "Row(\"max\""},
    {"reduce_prod", "Row(\"prod\""},
    {"reduce_min", "Row(\"min\""},
    {"argmax", "Row(\"argmax\""},
    {"cumsum", "Row(\"cumsum\""},
    {"cumprod", "Row(\"cumprod\""},
    {"sort", "Row(\"sort\""},
    {"argsort", "Row(\"argsort\""},
    {"select", "\"where with a NaN branch under grad\""},
    {"convert", "def test_casts("},
    {"bitcast_convert_type", "Row(\"lax_bitcast_convert_type\""},
    {"atan2", "Row(\"arctan2\""},
    {"dot", "def test_a_half_contraction_split_over_devices_is_the_one_device_value("},
    {"psum", "(\"psum of bool\""},
    // shard_map's collectives: tests/shard_map/vma_table.py, beside JAX on 1 x 4 and 2 x 2.
    {"pmax", "Row(\"pmax of a varying block\""},
    {"pmin", "Row(\"pmin of a replicated w\""},
    {"all_gather", "Row(\"all_gather of a varying block\""},
    {"psum_scatter", "Row(\"psum_scatter, tiled\""},
    {"ppermute", "Row(\"ppermute around the ring\""},
    {"axis_index", "Row(\"axis_index times the block\""},
    {"pvary", "Row(\"pcast to varying, then psum\""},
    {"not", "Row(\"invert\""},
    {"and", "Row(\"bitwise_and\""},
    {"or", "Row(\"bitwise_or\""},
    {"xor", "Row(\"bitwise_xor\""},
    {"rem", "Row(\"fmod\""},
    {"shift_left", "Row(\"left_shift\""},
    {"shift_right", "Row(\"right_shift\""},
    {"floor", "Row(\"floor\""},
    {"ceil", "Row(\"ceil\""},
    {"round", "Row(\"floor_divide\""},
    {"round_nearest_even", "Row(\"rint\""},
    {"sin", "Row(\"sin\""},
    {"cos", "Row(\"cos\""},
    {"tan", "Row(\"tan\""},
    {"cbrt", "Row(\"cbrt\""},
    {"log1p", "Row(\"log1p\""},
    {"expm1", "Row(\"expm1\""},
    {"erf", "Row(\"erf\""},
    {"erfc", "Row(\"erfc\""},
    {"lgamma", "Row(\"lgamma\""},
    {"digamma", "Row(\"digamma\""},
    {"erf_inv", "Row(\"erf_inv\""},
};

// Kind -> why the table has no row for it.
const std::map<std::string, std::string> kNotNumeric = {
    {"broadcast", "moves elements (tests/python compares shapes with JAX)"},
    {"concatenate", "moves elements"},
    {"reshape", "moves elements"},
    {"slice", "moves elements"},
    {"strided_slice", "moves elements (flips and stepped slices beside JAX's in jax_parity)"},
    {"transpose", "moves elements"},
    {"take", "moves elements (random.choice's gather; Random.EqualsJaxBitForBit)"},
    {"cholesky", "a factorization (tests/python/jax_parity/test_numpy.py, linalg)"},
    {"qr", "a factorization (tests/python/jax_parity/test_numpy.py, linalg)"},
    {"triangular_solve", "a triangular solve (tests/python/jax_parity/test_lax.py)"},
    {"scatter_add", "take's transpose (its gradients: tests/python/jax_parity/test_numpy.py)"},
    {"scatter",
     "indexed updates, NaN and signed zeros included, bit for bit beside JAX "
     "(tests/python/jax_parity/test_at.py)"},
    {"debug_callback",
     "calls a host function, computes nothing (tests/jit/host_callback_test.cc, "
     "tests/python/jax_parity/test_callbacks.py)"},
    {"pure_callback",
     "its values are the host function's (tests/jit/host_callback_test.cc, "
     "tests/python/jax_parity/test_callbacks.py)"},
    {"reshard", "moves elements between devices"},
    {"sharding_constraint", "places elements"},
    {"shard_map_in", "places elements"},
    {"shard_map_out", "places elements"},
    {"parameter", "an input"},
    {"constant", "an input"},
    {"full", "a constructor"},
    {"iota", "a constructor"},
    {"multiply_add",
     "made by jit's contraction after fusion, never traced: jit's products and sums beside JAX's "
     "(tests/python/jax_parity/test_jit.py), the kernel over special values "
     "(Chain.AMultiplyAddIsTheProductAndSumRoundedOnce)"},
    {"searchsorted", "integer positions (Random.EqualsJaxBitForBit, through choice)"},
    {"top_k", "integer positions (Random.EqualsJaxBitForBit, through choice)"},
};

std::string numerics_text() {
  std::string all;
  for (const char* file :
       {"numerics/table.py", "numerics/test_table.py", "shard_map/vma_table.py"}) {
    std::ifstream in(std::string(SPMD_SOURCE_DIR) + "/tests/" + file);
    std::stringstream s;
    s << in.rdbuf();
    all += s.str();
  }
  return all;
}

TEST(OpRegistry, EveryKindIsInTheDifferentialTableOrSaysWhyNot) {
  const std::string text = numerics_text();
  ASSERT_NE(text.find("REDUCTIONS"), std::string::npos) << "tests/numerics/table.py not read";
  const std::vector<std::string> kinds = operation_names();
  // Every kind listed here is one the registry knows (a renamed kind leaves no stale entry).
  for (const auto* listed : {&kChecked, &kNotNumeric}) {
    for (const auto& [kind, why] : *listed) {
      EXPECT_TRUE(std::find(kinds.begin(), kinds.end(), kind) != kinds.end())
          << "'" << kind << "' is listed here but no family registers it";
    }
  }
  for (const std::string& kind : kinds) {
    if (kind.rfind("random_", 0) == 0) continue;  // bit for bit: Random.EqualsJaxBitForBit
    const auto checked = kChecked.find(kind);
    if (checked != kChecked.end()) {
      EXPECT_NE(text.find(checked->second), std::string::npos)
          << kind << ": tests/numerics/ no longer holds " << checked->second;
      continue;
    }
    EXPECT_TRUE(kNotNumeric.count(kind) != 0)
        << "operation kind '" << kind << "' has no row in tests/numerics/table.py (add one, or "
        << "say in this test why it is not numeric)";
  }
}

}  // namespace
}  // namespace spmd::compiler
