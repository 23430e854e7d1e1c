// The partitioner on its own: each file of tests/jit/golden/ states a mesh, a program's text whose
// parameters carry the input layouts, and the two texts the partitioner must make of it — the
// global program with each value's layout, and the per-device program with its collectives. No
// processes, no initialize(): the mesh is made of Device values, the program is parsed from text.
// SPMD_UPDATE_GOLDEN=1 rewrites the expected texts from what the partitioner makes now (then read
// the diff: it is the change in behaviour).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "jit/layout.h"
#include "jit/ops/parameter.h"
#include "jit/partition.h"
#include "jit/program_parse.h"
#include "jit/propagation.h"
#include "spmd/error.h"
#include "spmd/mesh.h"
#include "support/counting_backend.h"

namespace {

namespace fs = std::filesystem;
using spmd::Mesh;
using spmd::compiler::LocalProgram;
using spmd::compiler::Program;

// A golden file's parts, between the lines "== program", "== global" and "== per device".
struct Golden {
  std::string head;  // comments and the "mesh a=2 b=2" line
  std::string program;
  std::string global;
  std::string per_device;
};

Golden read_golden(const fs::path& path) {
  std::ifstream in(path);
  Golden g;
  std::string* part = &g.head;
  for (std::string line; std::getline(in, line);) {
    if (line == "== program") {
      part = &g.program;
    } else if (line == "== global") {
      part = &g.global;
    } else if (line == "== per device") {
      part = &g.per_device;
    } else {
      *part += line + "\n";
    }
  }
  return g;
}

void write_golden(const fs::path& path, const Golden& g) {
  std::ofstream(path) << g.head << "== program\n"
                      << g.program << "== global\n"
                      << g.global << "== per device\n"
                      << g.per_device;
}

// "mesh dp=2 mp=2": a mesh of fabricated CPU devices, two per process, its axes Auto;
// "mesh dp=2:explicit mp=2" makes dp Explicit (sharding in types).
Mesh abstract_mesh(const std::string& head) {
  std::istringstream lines(head);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("mesh ", 0) != 0) continue;
    std::istringstream words(line.substr(5));
    std::vector<std::string> names;
    std::vector<int64_t> sizes;
    std::vector<spmd::AxisType> types;
    for (std::string w; words >> w;) {
      names.push_back(w.substr(0, w.find('=')));
      sizes.push_back(std::stoll(w.substr(w.find('=') + 1)));
      types.push_back(w.ends_with(":explicit") ? spmd::AxisType::kExplicit : spmd::AxisType::kAuto);
    }
    int64_t count = 1;
    for (int64_t s : sizes) count *= s;
    std::vector<spmd::Device> devices;
    for (int i = 0; i < count; ++i) devices.emplace_back(i, i / 2, i % 2, "cpu", "host");
    return Mesh(devices, sizes, names, types);
  }
  throw spmd::InvalidArgument("a golden file without a 'mesh' line");
}

// The partitioner's two texts for the golden file's program: the parameters start in their own
// shardings, the outputs leave in those their return line asks for, else in the propagated ones.
LocalProgram partition_text(const Program& program, const Mesh& mesh) {
  return spmd::compiler::partition(program, mesh, "golden");
}

// The sharding of the per-device program's output `k`, as its text prints it.
std::string output_text(const LocalProgram& local, size_t k) {
  const spmd::compiler::Edge& out = local.outputs.at(k);
  return spmd::compiler::layout_text(spmd::compiler::layout_of(*out.sharding, out.shape.size()),
                                     local.mesh);
}

std::vector<std::string> golden_files() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(SPMD_GOLDEN_DIR)) {
    if (e.path().extension() == ".txt") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class PartitionGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(PartitionGolden, MakesTheExpectedGlobalAndPerDevicePrograms) {
  const fs::path path = fs::path(SPMD_GOLDEN_DIR) / (GetParam() + ".txt");
  Golden g = read_golden(path);
  const Mesh mesh = abstract_mesh(g.head);
  const Program program = spmd::compiler::parse_program(g.program, mesh);
  // The text reads back into the same program.
  std::string lines;
  for (const std::string& l : program.lines()) lines += l + "\n";
  EXPECT_EQ(lines, g.program);
  // Products contracted into multiply-adds (jit/contract.h) on every machine, whether or not its
  // CPU has FMA instructions: the same text everywhere.
  spmd::testing::CountingBackend contracting("cpu");
  contracting.contract_multiply_adds(true);
  const spmd::kernels::BackendOverride installed(contracting);
  const LocalProgram local = partition_text(program, mesh);
  const char* update = std::getenv("SPMD_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    g.global = local.global_text;
    g.per_device = local.as_text();
    write_golden(path, g);
    GTEST_SKIP() << "rewrote " << path;
  }
  EXPECT_EQ(local.global_text, g.global);
  EXPECT_EQ(local.as_text(), g.per_device);
}

INSTANTIATE_TEST_SUITE_P(Files, PartitionGolden, ::testing::ValuesIn(golden_files()),
                         [](const auto& info) { return info.param; });

// The text parser refuses what it cannot type, naming the line.
void expect_refused(const std::string& text, const std::string& fragment) {
  const Mesh mesh = abstract_mesh("mesh a=2\n");
  try {
    spmd::compiler::parse_program(text, mesh);
    ADD_FAILURE() << "accepted:\n" << text;
  } catch (const spmd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ProgramText, AnUnknownOperationIsRefusedNamingIt) {
  expect_refused(
      "%0 = parameter f32[4] index=0 sharding=PartitionSpec()\n%1 = frobnicate f32[4] %0\n"
      "return %1\n",
      "line 2 (%1 = frobnicate f32[4] %0): no operation is named 'frobnicate'");
}

TEST(ProgramText, ADeclaredTypeTheRuleDoesNotGiveIsRefused) {
  expect_refused(
      "%0 = parameter f32[4,2] index=0 sharding=PartitionSpec()\n"
      "%1 = reduce_sum f32[2,2] %0 axes={0}\nreturn %1\n",
      "declares f32[2,2], but reduce_sum's rules give f32[2]");
}

TEST(ProgramText, AMissingAttributeIsRefusedNamingIt) {
  expect_refused(
      "%0 = parameter f32[4,2] index=0 sharding=PartitionSpec()\n"
      "%1 = transpose f32[2,4] %0\nreturn %1\n",
      "transpose: attribute 'permutation' is missing");
}

TEST(ProgramText, AnOperandThatIsNotEarlierIsRefused) {
  expect_refused(
      "%0 = parameter f32[4] index=0 sharding=PartitionSpec()\n%1 = neg f32[4] %1\n"
      "return %1\n",
      "%1 is not an earlier value");
}

TEST(ProgramText, AnOutputsShardingMustFollowItsOutputOnceAndFitIt) {
  const std::string param = "%0 = parameter f32[4] index=0 sharding=PartitionSpec()\n";
  expect_refused(param + "return sharding=PartitionSpec('a',) %0\n",
                 "'sharding=PartitionSpec('a',)' follows no output of its own");
  expect_refused(param + "return %0 sharding=PartitionSpec() sharding=PartitionSpec()\n",
                 "follows no output of its own");
  expect_refused(param + "return %0 sharding=PartitionSpec('a'\n",
                 "the sharding of %0 is not PartitionSpec(…)");
  expect_refused(param + "return %0 sharding=PartitionSpec(None, 'a')\n", "rank");
  expect_refused(param + "return %0 sharding=PartitionSpec('c',)\n", "'c'");
}

TEST(ProgramText, ParametersAreNumberedFromZeroEachOnce) {
  expect_refused("%0 = parameter f32[4] index=1 sharding=PartitionSpec()\nreturn %0\n",
                 "%0 is parameter index=1, but a program of 1 parameters numbers them 0 to 0");
  expect_refused(
      "%0 = parameter f32[4] index=0 sharding=PartitionSpec()\n"
      "%1 = parameter f32[4] index=0 sharding=PartitionSpec()\nreturn %1\n",
      "%1 is parameter index=0");
}

TEST(ProgramText, AConstantCannotBeWrittenAsText) {
  expect_refused("%0 = constant f32[4] bytes=#0\nreturn %0\n", "use full or iota");
}

// --- The outputs' layouts are those jax.jit gives (src/jit/propagation.h). Each expectation is
// what JAX 0.10.2 gives the same program on 8 host devices; tests/python/test_property.py
// compares random programs with JAX itself.

// The layout partition() gives the program's only output, as text.
std::string output_layout(const std::string& mesh_line, const std::string& text) {
  const Mesh mesh = abstract_mesh(mesh_line);
  return output_text(partition_text(spmd::compiler::parse_program(text, mesh), mesh), 0);
}

TEST(OutputLayout, AnOperationWhoseOperandsHaveOneUseEachGoesFirst) {
  // a*a + b: the add (operands used once) gives its result b's split over y before the product,
  // whose operand is used twice, may give it a's split over z; the two then conflict.
  EXPECT_EQ(output_layout("mesh x=2 y=2 z=2",
                          "%0 = parameter f32[16,16] index=0 sharding=PartitionSpec('z',)\n"
                          "%1 = parameter f32[16,16] index=1 sharding=PartitionSpec('y',)\n"
                          "%2 = mul f32[16,16] %0 %0\n%3 = add f32[16,16] %2 %1\nreturn %3\n"),
            "PartitionSpec('y',)");
}

TEST(OutputLayout, OperandsSplitOverDifferentAxesLeaveTheDimensionWhole) {
  EXPECT_EQ(output_layout("mesh x=4 y=2",
                          "%0 = parameter f32[16,16] index=0 sharding=PartitionSpec('y',)\n"
                          "%1 = parameter f32[16,16] index=1 sharding=PartitionSpec('x',)\n"
                          "%2 = add f32[16,16] %0 %1\nreturn %2\n"),
            "PartitionSpec()");
}

TEST(OutputLayout, AMatmulsRowsTakeTheAxisBeforeItsColumnsDo) {
  // Both free dimensions could take y: the lhs's factor comes first, so the columns stay whole.
  EXPECT_EQ(output_layout("mesh x=2 y=4",
                          "%0 = parameter f32[16,16] index=0 sharding=PartitionSpec('y', 'x')\n"
                          "%1 = parameter f32[16,16] index=1 sharding=PartitionSpec(None, 'y')\n"
                          "%2 = dot f32[16,16] %0 %1 einsum=mk,kn->mn\nreturn %2\n"),
            "PartitionSpec('y',)");
  EXPECT_EQ(output_layout("mesh x=2 y=4",
                          "%0 = parameter f32[16,16] index=0 sharding=PartitionSpec('x',)\n"
                          "%1 = parameter f32[16,16] index=1 sharding=PartitionSpec(None, 'y')\n"
                          "%2 = dot f32[16,16] %0 %1 einsum=mk,kn->mn\nreturn %2\n"),
            "PartitionSpec('x', 'y')");
}

TEST(OutputLayout, AReducedDimensionsAxesLeaveTheResult) {
  EXPECT_EQ(output_layout("mesh x=2 y=4",
                          "%0 = parameter f32[16,16] index=0 sharding=PartitionSpec('x', 'y')\n"
                          "%1 = parameter f32[16,16] index=1 sharding=PartitionSpec('y',)\n"
                          "%2 = dot f32[16,16] %0 %1 einsum=mk,kn->mn\n"
                          "%3 = reduce_sum f32[16] %2 axes={0}\nreturn %3\n"),
            "PartitionSpec()");
}

TEST(OutputLayout, AGivenOutLayoutReachesBackToTheValueButNotToAParameter) {
  const Mesh mesh = abstract_mesh("mesh x=2");
  const Program program = spmd::compiler::parse_program(
      "%0 = parameter f32[8,8] index=0 sharding=PartitionSpec()\n%1 = tanh f32[8,8] %0\n"
      "%2 = neg f32[8,8] %1\nreturn %2 sharding=PartitionSpec('x',)\n",
      mesh);
  const spmd::compiler::Layout rows{{{0}, {}}, {}};
  const auto layouts = spmd::compiler::propagate_like_jax(program, mesh);
  ASSERT_TRUE(layouts.has_value());
  EXPECT_EQ(layouts->at(2), rows);
  EXPECT_EQ(layouts->at(1), rows);
  EXPECT_EQ(layouts->at(0), spmd::compiler::Layout::replicated(2));
}

TEST(OutputLayout, WithoutAFactorRuleOrOnExplicitAxesPropagationStepsAside) {
  const Mesh mesh = abstract_mesh("mesh dp=2");
  const Program merge = spmd::compiler::parse_program(
      "%0 = parameter f32[8,6] index=0 sharding=PartitionSpec('dp',)\n"
      "%1 = reshape f32[48] %0\nreturn %1\n",
      mesh);
  EXPECT_FALSE(spmd::compiler::propagate_like_jax(merge, mesh));
  // partition() then keeps the layout its own rules give (the split survives the merge).
  EXPECT_EQ(output_text(partition_text(merge, mesh), 0), "PartitionSpec('dp',)");
  const Mesh typed = abstract_mesh("mesh x=2:explicit");
  const Program add = spmd::compiler::parse_program(
      "%0 = parameter f32[8@x] index=0 sharding=PartitionSpec('x',)\n"
      "%1 = neg f32[8@x] %0\nreturn %1\n",
      typed);
  EXPECT_FALSE(spmd::compiler::propagate_like_jax(add, typed));
}

}  // namespace
