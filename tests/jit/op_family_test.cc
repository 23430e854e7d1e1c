// A new operation family touches one file: this test registers a toy family of its own, "flip"
// (jnp.flip along one axis), defines every rule of operation.h for it here, and runs it through
// tracing, partitioning, execution on 4 CPU devices, grad and the program-text parser. Beside it,
// the device seam: the executor reaches every kernel through the backend it is given, and the
// contraction kernel's letter orders against a reference. Part of jit_property_test (its main
// initializes the devices).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "jit/batching.h"
#include "jit/execute.h"
#include "jit/fuse.h"
#include "jit/op_registry.h"
#include "jit/partition.h"
#include "jit/partitioner.h"
#include "jit/program_parse.h"
#include "jit/trace.h"
#include "kernels/chain.h"
#include "support/counting_backend.h"

namespace {

namespace jnp = spmd::numpy;
namespace compiler = spmd::compiler;
using spmd::Array;
using spmd::Block;
using spmd::HostArray;
using spmd::NamedSharding;
using spmd::P;
using spmd::Shape;
using spmd::Tensor;

// --- the toy family: its whole definition ---

// "test_flip": the operand reversed along `axis`. The axis stays whole on every device; the other
// dimensions keep their splits.
class FlipOp final : public compiler::Operation {
 public:
  explicit FlipOp(int axis) : axis(axis) {}
  const int axis;

  std::string name() const override { return "test_flip"; }
  std::string attributes() const override { return fmt::format("axis={}", axis); }
  compiler::ValueType result_type(std::span<const compiler::ValueType> in) const override {
    if (in.size() != 1 || axis < 0 || axis >= static_cast<int>(in[0].shape.size()))
      throw spmd::InvalidArgument("test_flip: one operand with the axis");
    return in[0];
  }
  void partition(compiler::Partitioner& p, int value, const compiler::Op& op) const override {
    compiler::Layout in = p.layout(op.inputs[0]).settled();
    in.dims[static_cast<size_t>(axis)].clear();
    p.compute(value, {p.slot_with(op.inputs[0], in)}, in);
  }
  // Slices of thickness 1 along the axis, concatenated last first: backend kernels only.
  Block run(const compiler::KernelContext& device, const compiler::Step& step,
            std::span<const Block> in) const override {
    const Shape& shape = in[0].shape();
    const size_t width = spmd::dtype_size(step.dtype);
    std::vector<Block> slices;
    for (int64_t i = shape[static_cast<size_t>(axis)]; i-- > 0;) {
      std::vector<int64_t> start(shape.size(), 0);
      start[static_cast<size_t>(axis)] = i;
      Shape extent = shape;
      extent[static_cast<size_t>(axis)] = 1;
      Block s = device.allocate(step.dtype, extent);
      device.backend.slice(width, in[0].bytes().data(), shape, start, extent,
                           s.mutable_bytes().data());
      slices.push_back(std::move(s));
    }
    std::vector<const std::byte*> parts;
    std::vector<Shape> shapes;
    for (const Block& s : slices) {
      parts.push_back(s.bytes().data());
      shapes.push_back(s.shape());
    }
    Block out = device.allocate(step.dtype, step.shape);
    device.backend.concatenate(width, parts, shapes, axis, out.mutable_bytes().data());
    return out;
  }
  compiler::Cotangents vjp(const compiler::Op& /*op*/, const Tensor& /*result*/,
                           std::span<const Tensor> /*operands*/, const Tensor& g) const override;
  // Each slice flipped along the same axis: the slices first, the axis one further.
  compiler::Batched batch(const compiler::Op& /*op*/, std::span<const compiler::Batched> in,
                          int64_t size) const override {
    return compiler::on_slices_first(compiler::make_operation<FlipOp>(axis + 1), in[0], size);
  }
};

// The family's front end, as spmd::numpy's functions make operations.
Tensor flip(const Tensor& x, int axis) {
  auto trace = compiler::trace_of("flip", {&x});
  return trace->apply(compiler::make_operation<FlipOp>(axis), {x.value()});
}

compiler::Cotangents FlipOp::vjp(const compiler::Op& /*op*/, const Tensor& /*result*/,
                                 std::span<const Tensor> /*operands*/, const Tensor& g) const {
  return {flip(g, axis)};
}

const compiler::OperationRegistration flip_registration("test_flip",
                                                        [](const compiler::AttributeReader& r) {
                                                          return compiler::make_operation<FlipOp>(
                                                              static_cast<int>(r.integer("axis")));
                                                        });

// --- helpers ---

const spmd::Mesh& family_mesh() {
  static const spmd::Mesh m(spmd::devices(), {2, 2}, {"a", "b"});
  return m;
}

HostArray counting(const Shape& shape) {
  std::vector<double> v(static_cast<size_t>(spmd::shape_size(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i) * 0.7 + 0.3);
  return HostArray::from_vector(v, shape);
}

// `h` (rank 2, float64) reversed along `axis`, computed here.
HostArray flipped(const HostArray& h, int axis) {
  HostArray out = h;
  const int64_t rows = h.shape()[0], cols = h.shape()[1];
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t from = axis == 0 ? (rows - 1 - r) * cols + c : r * cols + (cols - 1 - c);
      out.mutable_data<double>()[r * cols + c] = h.data<double>()[from];
    }
  }
  return out;
}

void expect_equal(const HostArray& got, const HostArray& want) {
  ASSERT_EQ(got.shape(), want.shape());
  for (size_t i = 0; i < want.data<double>().size(); ++i) {
    EXPECT_NEAR(got.data<double>()[i], want.data<double>()[i], 1e-12) << "element " << i;
  }
}

// --- the toy family through every stage ---

TEST(OperationFamily, AToyFamilyDefinedInATestIsTracedPartitionedAndRun) {
  const HostArray x = counting({8, 4});
  auto f = spmd::jit([](const Tensor& t) { return flip(t, 0) * 2.0; });
  const Array in = spmd::device_put(x, NamedSharding(family_mesh(), P("a", "b")));
  const std::string text = f.lower(in).as_text();
  EXPECT_NE(text.find("test_flip f64[8,2]"), std::string::npos) << text;  // axis 0 whole
  EXPECT_NE(text.find("all_gather[a] dim=0"), std::string::npos) << text;
  HostArray want = flipped(x, 0);
  for (double& v : want.mutable_data<double>()) v *= 2;
  expect_equal(spmd::multihost::process_allgather(f(in)), want);
  EXPECT_EQ(f(in).sharding().to_string(),
            NamedSharding(family_mesh(), P(spmd::None, "b")).to_string());
}

TEST(OperationFamily, AToyFamilysDerivativeServesGrad) {
  const HostArray x = counting({8, 4});
  const HostArray w = counting({4, 8});
  const Array xs = spmd::device_put(x, NamedSharding(family_mesh(), P("a")));
  const Array ws = spmd::device_put(w, NamedSharding(family_mesh(), P()));
  // d/dx sum(flip(x, 1) * flip(w^T, 1)) is flip(flip(w^T, 1), 1) = w^T.
  auto loss = [](const Tensor& t, const Tensor& u) {
    return jnp::sum(flip(t, 1) * flip(jnp::transpose(u), 1));
  };
  const HostArray g = spmd::multihost::process_allgather(spmd::grad(loss)(xs, ws));
  HostArray want = HostArray::zeros(spmd::DType::kFloat64, {8, 4});
  for (int64_t r = 0; r < 8; ++r) {
    for (int64_t c = 0; c < 4; ++c)
      want.mutable_data<double>()[r * 4 + c] = w.data<double>()[c * 8 + r];
  }
  expect_equal(g, want);
}

TEST(OperationFamily, AToyFamilysBatchingRuleServesVmap) {
  const HostArray x = counting({8, 4});
  const Array in = spmd::device_put(x, NamedSharding(family_mesh(), P("a")));
  // Rows mapped over axis 0 (each row a slice of 4), flipped along their only axis.
  auto rows = spmd::jit(spmd::vmap([](const Tensor& r) { return flip(r, 0); }));
  expect_equal(spmd::multihost::process_allgather(rows(in)), flipped(x, 1));
  // Columns mapped over axis 1, the batch put last: each column flipped.
  auto cols = spmd::jit(spmd::vmap([](const Tensor& c) { return flip(c, 0); }, {1}, {1}));
  expect_equal(spmd::multihost::process_allgather(cols(in)), flipped(x, 0));
}

// Operations with several attributes print them as separate words, which the program's reader
// takes back: each line below reads to an operation that prints the same line.
TEST(OperationFamily, OperationsWithSeveralAttributesReadBackFromTheirText) {
  const std::vector<std::string> lines = {
      "%0 = parameter f32[8,4] index=0 sharding=PartitionSpec()",
      "%1 = parameter i32[8] index=1 sharding=PartitionSpec()",
      "%2 = sort f32[8,4] %0 axis=0 descending=1",
      "%3 = argsort i32[8,4] %0 axis=1 descending=0",
      "%4 = scatter_add f32[8,4] %2 %1 axis=0 size=8",
      "%5 = scatter f32[8,4] %4 %1 %0 combine=max axis=0 unique=false",
      "return %5 %3"};
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  EXPECT_EQ(compiler::parse_program(text, family_mesh()).lines(), lines);
}

TEST(OperationFamily, AToyFamilyIsReadFromProgramTextByItsRegisteredName) {
  const compiler::Program program = compiler::parse_program(
      "%0 = parameter f32[8,4] index=0 sharding=PartitionSpec(None, 'b')\n"
      "%1 = test_flip f32[8,4] %0 axis=1\nreturn %1\n",
      family_mesh());
  EXPECT_EQ(program.lines()[1], "%1 = test_flip f32[8,4] %0 axis=1");
  const compiler::LocalProgram local = compiler::partition(program, family_mesh(), "toy");
  const std::string text = local.as_text();
  EXPECT_NE(text.find("all_gather[b] dim=1 f32[8,4]"), std::string::npos) << text;
}

TEST(OperationFamily, ABooleanAttributeIsTrueOrFalseAndNothingElse) {
  const std::string head =
      "%0 = parameter f32[8,4] index=0 sharding=PartitionSpec('a',)\n"
      "%1 = shard_map_in f32[4,4] %0 spec=PartitionSpec('a',)";
  const compiler::Program unchecked =
      compiler::parse_program(head + " check_vma=false\nreturn %1\n", family_mesh());
  EXPECT_EQ(unchecked.lines()[1],
            "%1 = shard_map_in f32[4,4] %0 spec=PartitionSpec('a',) check_vma=false");
  const compiler::Program checked = compiler::parse_program(head + "\nreturn %1\n", family_mesh());
  EXPECT_EQ(checked.lines()[1], "%1 = shard_map_in f32[4,4] %0 spec=PartitionSpec('a',)");
  try {
    compiler::parse_program(head + " check_vma=flase\nreturn %1\n", family_mesh());
    ADD_FAILURE() << "check_vma=flase was read";
  } catch (const spmd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("attribute 'check_vma' is not true or false: flase"),
              std::string::npos)
        << e.what();
  }
}

// --- the device seam ---

using spmd::testing::CountingBackend;

// `text` (its parameters replicated) partitioned for one device and run on the counting backend:
// the outputs, and the calls that reached it. Partitioned without contraction (jit/contract.h),
// so that a chain fused and its steps run apart round alike: these tests are of the seam and
// the fusion, Fusion.ProductsReadOnlyByASumOrDifference… of the contraction.
struct SeamRun {
  std::vector<Block> out;
  int calls;
  std::string local_text;
};
SeamRun run_on_counting_backend(const std::string& text, std::vector<Block> inputs,
                                bool reads_broadcasts = true) {
  const spmd::Mesh one({spmd::devices()[0]}, {"x"});
  CountingBackend plain_cpu("cpu");
  plain_cpu.contract_multiply_adds(false);
  std::optional<spmd::kernels::BackendOverride> no_contraction(std::in_place, plain_cpu);
  const compiler::LocalProgram local =
      compiler::partition(compiler::parse_program(text, one), one, "seam");
  no_contraction.reset();
  CountingBackend backend;
  if (!reads_broadcasts) backend.refuse_broadcasts_in_place();
  const compiler::KernelContext device{backend, backend.memory(0)};
  std::vector<Block> out = compiler::execute(local, device, inputs);
  return {std::move(out), backend.calls(), local.as_text()};
}

TEST(DeviceSeam, TheExecutorReachesEveryKernelThroughItsBackend) {
  const SeamRun run = run_on_counting_backend(
      "%0 = parameter f32[2,3] index=0 sharding=PartitionSpec()\n"
      "%1 = parameter f32[3,2] index=1 sharding=PartitionSpec()\n"
      "%2 = dot f32[2,2] %0 %1 einsum=mk,kn->mn\n"
      "%3 = exp f32[2,2] %2\n"
      "%4 = reduce_sum f32[2] %3 axes={1}\n"
      "return %4\n",
      {Block::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}),
       Block::from_vector(std::vector<float>{1, 0, 0, 1, 1, 1}, {3, 2})});
  ASSERT_NE(run.local_text.find("fused_reduce f32[2]"), std::string::npos) << run.local_text;
  EXPECT_EQ(run.calls, 2);  // matmul, then exp and its sum in one call: nothing around the seam
  // rows of x·w: (1+3, 2+3) and (4+6, 5+6)
  const auto got = run.out[0].data<float>();
  EXPECT_NEAR(got[0], std::exp(4.0f) + std::exp(5.0f), 1e-2);
  EXPECT_NEAR(got[1], std::exp(10.0f) + std::exp(11.0f), 1e1);
}

TEST(DeviceSeam, AFusedChainReachesTheBackendAsOneCall) {
  std::vector<float> a(3000), b(3000);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i % 13) * 0.1f;
    b[i] = static_cast<float>(i % 7) * 0.2f - 0.5f;
  }
  const SeamRun run = run_on_counting_backend(
      "%0 = parameter f32[3000] index=0 sharding=PartitionSpec()\n"
      "%1 = parameter f32[3000] index=1 sharding=PartitionSpec()\n"
      "%2 = mul f32[3000] %0 %1\n"
      "%3 = exp f32[3000] %2\n"
      "%4 = add f32[3000] %3 %0\n"
      "return %4\n",
      {Block::from_vector(a, {3000}), Block::from_vector(b, {3000})});
  ASSERT_NE(run.local_text.find("fused f32[3000]"), std::string::npos) << run.local_text;
  EXPECT_EQ(run.calls, 1);  // the whole chain, not a call per step or per block
  const auto got = run.out[0].data<float>();
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_NEAR(got[i], std::exp(a[i] * b[i]) + a[i], 1e-5f * (1 + std::exp(a[i] * b[i]))) << i;
  }
}

// Adam's bias correction, a scalar computation read by one update chain, joins that chain: the
// convert, pow and sub are no launches of their own (on a GPU each cost a launch), with the bits
// of the scalar steps run apart.
TEST(DeviceSeam, AScalarComputationJoinsTheChainThatReadsIt) {
  std::vector<float> m(3000);
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(i % 29) * 0.03f;
  const std::string program =
      "%0 = parameter i32[] index=0 sharding=PartitionSpec()\n"
      "%1 = parameter f32[3000] index=1 sharding=PartitionSpec()\n"
      "%2 = full f32[] value=0.999\n"
      "%3 = convert f32[] %0\n"
      "%4 = pow f32[] %2 %3\n"
      "%5 = full f32[] value=1\n"
      "%6 = sub f32[] %5 %4\n"
      "%7 = div f32[3000] %1 %6\n"
      "%8 = sqrt f32[3000] %7\n";
  const std::vector<Block> inputs = {Block::from_vector(std::vector<int32_t>{7}, {}),
                                     Block::from_vector(m, {3000})};
  const SeamRun run = run_on_counting_backend(program + "return %8\n", inputs);
  ASSERT_NE(run.local_text.find("fused f32[3000]"), std::string::npos) << run.local_text;
  EXPECT_EQ(run.local_text.find("= pow f32[]"), std::string::npos) << run.local_text;
  EXPECT_EQ(run.local_text.find("fused f32[]"), std::string::npos) << run.local_text;
  // 1 - b^t an output too: it is made apart, its three steps one scalar chain of their own.
  const SeamRun apart = run_on_counting_backend(program + "return %8 %6\n", inputs);
  ASSERT_NE(apart.local_text.find("fused f32[]"), std::string::npos) << apart.local_text;
  EXPECT_EQ(run.calls + 1, apart.calls);
  const auto fused = run.out[0].data<float>();
  const auto separate = apart.out[0].data<float>();
  for (size_t i = 0; i < m.size(); ++i) ASSERT_EQ(fused[i], separate[i]) << i;
}

// No chain passes what a GPU launch carries (kernels/chain.h: kMaxChainSteps steps,
// kMaxChainInputs inputs): a longer one is cut into chains that each fit, with the same values.
TEST(DeviceSeam, NoFusedChainPassesTheBackendsLimits) {
  const int64_t n = 100;
  std::string text;
  std::vector<Block> inputs;
  for (int i = 0; i < 20; ++i) {
    text += fmt::format("%{} = parameter f32[{}] index={} sharding=PartitionSpec()\n", i, n, i);
    inputs.push_back(Block::from_vector(std::vector<float>(n, static_cast<float>(i + 1)), {n}));
  }
  // More adds than a chain takes steps: the first 19 read a parameter each, the rest parameter
  // 0 again.
  const int adds = 2 * spmd::kernels::kMaxChainSteps + 10;
  int last = 0;
  for (int k = 1; k <= adds; ++k) {
    const int next = 19 + k;
    text += fmt::format("%{} = add f32[{}] %{} %{}\n", next, n, last, k < 20 ? k : 0);
    last = next;
  }
  const SeamRun run = run_on_counting_backend(text + fmt::format("return %{}\n", last), inputs);
  // The chains' bodies, each within the limits.
  size_t chains = 0;
  for (size_t at = run.local_text.find("= fused "); at != std::string::npos;
       at = run.local_text.find("= fused ", at + 1)) {
    ++chains;
    const size_t open = run.local_text.find('{', at), close = run.local_text.find('}', at);
    const std::string head = run.local_text.substr(at, open - at);
    const std::string body = run.local_text.substr(open, close - open);
    EXPECT_LE(std::count(body.begin(), body.end(), '\n') - 1, spmd::kernels::kMaxChainSteps)
        << body;
    EXPECT_LE(std::count(head.begin(), head.end(), '%'), spmd::kernels::kMaxChainInputs) << head;
  }
  EXPECT_GE(chains, 3u) << run.local_text;
  EXPECT_EQ(static_cast<size_t>(run.calls), chains) << run.local_text;
  // 1 + 2 + … + 20, then the other adds of parameter 0's 1.
  const float want = 20.0f * 21.0f / 2.0f + static_cast<float>(adds - 19);
  for (float v : run.out[0].data<float>()) ASSERT_EQ(v, want);
}

// A chain whose result only a reduction of its last axis reads reaches the backend as one call
// (fuse.h: fuse_reductions), the other axes after it, with the values of the steps run apart.
TEST(DeviceSeam, AChainAndTheReductionOfItsLastAxisReachTheBackendAsOneCall) {
  std::vector<float> a(size_t{6} * 700);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 17) * 0.05f - 0.4f;
  const SeamRun run = run_on_counting_backend(
      "%0 = parameter f32[2,3,700] index=0 sharding=PartitionSpec()\n"
      "%1 = exp f32[2,3,700] %0\n"
      "%2 = mul f32[2,3,700] %1 %0\n"
      "%3 = reduce_sum f32[3] %2 axes={0,2}\n"
      "return %3\n",
      {Block::from_vector(a, {2, 3, 700})});
  ASSERT_NE(run.local_text.find("fused_reduce f32[3]"), std::string::npos) << run.local_text;
  EXPECT_EQ(run.calls, 2);  // the chain with the last axis's sums, then axis 0
  const SeamRun apart = run_on_counting_backend(  // the product is an output too: not fused
      "%0 = parameter f32[2,3,700] index=0 sharding=PartitionSpec()\n"
      "%1 = exp f32[2,3,700] %0\n"
      "%2 = mul f32[2,3,700] %1 %0\n"
      "%3 = reduce_sum f32[3] %2 axes={0,2}\n"
      "return %3 %2\n",
      {Block::from_vector(a, {2, 3, 700})});
  ASSERT_EQ(apart.local_text.find("fused_reduce"), std::string::npos) << apart.local_text;
  const auto fused = run.out[0].data<float>();
  const auto separate = apart.out[0].data<float>();
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(fused[i], separate[i]) << i;
}

// A chain whose result only a reduction of a leading axis reads (a bias gradient's sum over the
// batch) reaches the backend as one call, with the bits of the steps run apart: sums, and a max
// and a min over the first of two axes, reduced from the last of them (axis 1) in the fused call.
// Its function is sin, whose formula is XLA's inside and outside the fusion; a tanh would be
// YNNPACK's in the fused call and XLA's apart, as in JAX (kernels/ynn_fusion.h).
TEST(DeviceSeam, AChainAndTheReductionOfALeadingAxisReachTheBackendAsOneCall) {
  std::vector<float> a(size_t{300} * 2 * 96), b(96);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37f * static_cast<float>(i)) * 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
  for (const char* op : {"reduce_sum", "reduce_max", "reduce_min"}) {
    const std::string chain = std::string(
                                  "%0 = parameter f32[300,2,96] index=0 sharding=PartitionSpec()\n"
                                  "%1 = parameter f32[96] index=1 sharding=PartitionSpec()\n"
                                  "%2 = broadcast f32[300,2,96] %1 dims={2}\n"
                                  "%3 = sin f32[300,2,96] %0\n"
                                  "%4 = mul f32[300,2,96] %3 %2\n"
                                  "%5 = ") +
                              op + " f32[96] %4 axes={0,1}\n";
    const std::vector<Block> in{Block::from_vector(a, {300, 2, 96}), Block::from_vector(b, {96})};
    const SeamRun run = run_on_counting_backend(chain + "return %5\n", in);
    ASSERT_NE(run.local_text.find("fused_reduce f32[96]"), std::string::npos) << run.local_text;
    // the chain, reading the broadcast row in place, with axis 1's sums; then axis 0
    EXPECT_EQ(run.calls, 2) << op;
    const SeamRun apart = run_on_counting_backend(chain + "return %5 %4\n", in);
    ASSERT_EQ(apart.local_text.find("fused_reduce"), std::string::npos) << apart.local_text;
    const auto fused = run.out[0].data<float>();
    const auto separate = apart.out[0].data<float>();
    for (size_t i = 0; i < 96; ++i) EXPECT_EQ(fused[i], separate[i]) << op << " " << i;
  }
}

// A broadcast that a chain alone reads joins it (fuse.h) and is read in place: one call, the
// bits of the broadcast made whole; a bias row, a column of maxima and a scalar's.
TEST(DeviceSeam, ABroadcastReadByAChainJoinsItAndIsNeverMadeWhole) {
  std::vector<float> a(size_t{200} * 96), row(96), column(200);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37f * static_cast<float>(i)) * 3;
  for (size_t i = 0; i < row.size(); ++i) row[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
  for (size_t i = 0; i < column.size(); ++i) column[i] = std::cos(static_cast<float>(i));
  const std::string body =
      "%0 = parameter f32[200,96] index=0 sharding=PartitionSpec()\n"
      "%1 = parameter f32[96] index=1 sharding=PartitionSpec()\n"
      "%2 = parameter f32[200,1] index=2 sharding=PartitionSpec()\n"
      "%3 = broadcast f32[200,96] %1\n"
      "%4 = broadcast f32[200,96] %2\n"
      "%5 = tanh f32[200,96] %0\n"
      "%6 = mul f32[200,96] %5 %3\n"
      "%7 = sub f32[200,96] %6 %4\n";
  const std::vector<Block> in{Block::from_vector(a, {200, 96}), Block::from_vector(row, {96}),
                              Block::from_vector(column, {200, 1})};
  const SeamRun run = run_on_counting_backend(body + "return %7\n", in);
  ASSERT_EQ(run.local_text.find("broadcast f32"), std::string::npos) << run.local_text;
  ASSERT_NE(run.local_text.find(" = broadcast %1\n"), std::string::npos) << run.local_text;
  ASSERT_NE(run.local_text.find(" = broadcast %2\n"), std::string::npos) << run.local_text;
  EXPECT_EQ(run.calls, 1);  // the chain, reading both broadcasts in place
  const SeamRun apart = run_on_counting_backend(body + "return %7 %3 %4\n", in);
  ASSERT_NE(apart.local_text.find("broadcast f32"), std::string::npos) << apart.local_text;
  // A backend that cannot read them in place (a GPU's) is handed them made whole.
  const SeamRun made = run_on_counting_backend(body + "return %7\n", in, false);
  EXPECT_EQ(made.calls, 3);  // both broadcasts, then the chain
  const auto fused = run.out[0].data<float>();
  const auto separate = apart.out[0].data<float>();
  const auto whole = made.out[0].data<float>();
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(fused[i], separate[i]) << i;
    ASSERT_EQ(whole[i], separate[i]) << i;
  }
}

// A value several steps of a chain read (x · y used four times) is computed inside it, and a
// step repeating an earlier one (the second exp) is dropped (common_steps.h): one call, one exp,
// with the bits of the steps run apart (each of the value's readers an output).
TEST(DeviceSeam, AValueReadBySeveralStepsOfAChainAndARepeatedStepAreComputedOnce) {
  std::vector<float> a(3000), b(3000);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = std::sin(0.37f * static_cast<float>(i));
    b[i] = std::cos(0.11f * static_cast<float>(i)) * 2;
  }
  const std::string body =
      "%0 = parameter f32[3000] index=0 sharding=PartitionSpec()\n"
      "%1 = parameter f32[3000] index=1 sharding=PartitionSpec()\n"
      "%2 = mul f32[3000] %0 %1\n"
      "%3 = exp f32[3000] %2\n"
      "%4 = exp f32[3000] %2\n"
      "%5 = mul f32[3000] %2 %3\n"
      "%6 = add f32[3000] %5 %4\n"
      "%7 = gt bool[3000] %2 %0\n"
      "%8 = select f32[3000] %7 %6 %2\n";
  const std::vector<Block> in{Block::from_vector(a, {3000}), Block::from_vector(b, {3000})};
  const SeamRun run = run_on_counting_backend(body + "return %8\n", in);
  EXPECT_EQ(run.calls, 1) << run.local_text;
  size_t exps = 0;
  for (size_t at = run.local_text.find("= exp"); at != std::string::npos;
       at = run.local_text.find("= exp", at + 1)) {
    ++exps;
  }
  EXPECT_EQ(exps, 1U) << run.local_text;
  const SeamRun apart = run_on_counting_backend(body + "return %8 %2 %3 %5 %6 %7\n", in);
  EXPECT_GT(apart.calls, 1) << apart.local_text;
  const auto fused = run.out[0].data<float>();
  const auto separate = apart.out[0].data<float>();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(fused[i], separate[i]) << i;
  // The repeated step's readers read the first: two outputs of one value are equal.
  const SeamRun both = run_on_counting_backend(body + "return %3 %4\n", in);
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(both.out[0].data<float>()[i], both.out[1].data<float>()[i]) << i;
  }
}

// A scalar that a chain's step reads directly and a broadcast member of the same chain reads too
// stays a slot (the broadcast reads its operand from one): the bits of the steps run apart.
TEST(DeviceSeam, AValueABroadcastOfTheChainReadsIsNotMadeInternal) {
  std::vector<float> a(3000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37f * static_cast<float>(i));
  const std::string body =
      "%0 = parameter f32[3000] index=0 sharding=PartitionSpec()\n"
      "%1 = parameter f32[] index=1 sharding=PartitionSpec()\n"
      "%2 = exp f32[] %1\n"
      "%3 = broadcast f32[3000] %2\n"
      "%4 = mul f32[3000] %0 %2\n"
      "%5 = add f32[3000] %4 %3\n";
  const std::vector<Block> in{Block::from_vector(a, {3000}),
                              Block::from_vector(std::vector<float>{0.75f}, {})};
  const SeamRun run = run_on_counting_backend(body + "return %5\n", in);
  const SeamRun apart = run_on_counting_backend(body + "return %5 %2 %4\n", in);
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(run.out[0].data<float>()[i], apart.out[0].data<float>()[i]) << i << run.local_text;
  }
}

// Which broadcasts a chain reads in place, and how (fuse.h: broadcast_read).
TEST(Fusion, ABroadcastIsReadInPlaceWhereItsOperandIsOneRunOfTheResult) {
  using compiler::broadcast_read;
  const auto read = [](const Shape& from, const Shape& to) {
    const auto r = broadcast_read(from, to);
    return r ? fmt::format("{}/{}", r->period, r->repeat) : std::string("none");
  };
  EXPECT_EQ(read({96}, {200, 96}), "96/1");        // a bias row
  EXPECT_EQ(read({200, 1}, {200, 96}), "200/96");  // a column
  EXPECT_EQ(read({4, 1}, {3, 4, 5}), "4/5");       // a middle dimension
  EXPECT_EQ(read({1, 4, 5}, {3, 4, 5}), "20/1");   // leading ones
  EXPECT_EQ(read({}, {3, 4}), "1/12");             // a scalar
  EXPECT_EQ(read({1, 1}, {3, 4}), "1/12");
  EXPECT_EQ(read({3, 4}, {3, 4}), "12/1");        // no broadcast at all
  EXPECT_EQ(read({3, 1, 5}, {3, 4, 5}), "none");  // two runs
  EXPECT_EQ(read({2, 3, 4}, {3, 4}), "none");     // more dimensions than the result
}

// jit/contract.h: a float product read by nothing but one sum or difference of a chain becomes
// a multiply_add of the form LLVM makes of it under XLA, on a CPU with FMA instructions; a
// backend that says it contracts nothing gets the steps as they are.
TEST(Fusion, ProductsReadOnlyByASumOrDifferenceBecomeMultiplyAddsAsXlaContractsThem) {
  const auto local_text = [](const std::string& dtype, const std::string& steps) {
    const std::string t = dtype + "[3000]";
    const std::string text = fmt::format(
        "%0 = parameter {0} index=0 sharding=PartitionSpec()\n"
        "%1 = parameter {0} index=1 sharding=PartitionSpec()\n"
        "%2 = parameter {0} index=2 sharding=PartitionSpec()\n"
        "%3 = parameter {1}[] index=3 sharding=PartitionSpec()\n{2}",
        t, dtype, fmt::format(fmt::runtime(steps), t, dtype + "[]"));
    const spmd::Mesh one({spmd::devices()[0]}, {"x"});
    return compiler::partition(compiler::parse_program(text, one), one, "contract").as_text();
  };
  const auto has = [](const std::string& text, const std::string& line) {
    return text.find(line) != std::string::npos;
  };
  if (!spmd::kernels::cpu_backend().contracts_multiply_add()) {
    GTEST_SKIP() << "this CPU has no FMA instructions: XLA contracts nothing on it, nor does jit";
  }
  // c - a * b: the product's sign flipped (form 1); a * b - c: the addend's (form 2).
  std::string text = local_text("f32",
                                "%4 = mul {0} %0 %1\n%5 = sub {0} %2 %4\n"
                                "%6 = mul {0} %5 %1\n%7 = sub {0} %6 %0\nreturn %7\n");
  EXPECT_TRUE(has(text, "%5 = multiply_add %0 %1 %2 form=1")) << text;
  EXPECT_TRUE(has(text, "%7 = multiply_add %5 %1 %0 form=2")) << text;
  // Of a sum of two products, the left one; a float64 sum too.
  text = local_text("f64",
                    "%4 = mul {0} %0 %1\n%5 = mul {0} %2 %0\n%6 = add {0} %4 %5\n"
                    "return %6\n");
  EXPECT_TRUE(has(text, "%5 = mul %2 %0")) << text;
  EXPECT_TRUE(has(text, "%6 = multiply_add %0 %1 %5 form=0")) << text;
  // Not: a product read twice, a half type's, a product of scalars in a longer chain.
  for (const auto& [dtype, steps] : std::vector<std::pair<std::string, std::string>>{
           {"f32", "%4 = mul {0} %0 %1\n%5 = add {0} %4 %2\n%6 = mul {0} %5 %4\nreturn %6\n"},
           {"bf16", "%4 = mul {0} %0 %1\n%5 = add {0} %4 %2\nreturn %5\n"},
           {"f32", "%4 = mul {1} %3 %3\n%5 = add {0} %0 %4\nreturn %5\n"}}) {
    text = local_text(dtype, steps);
    EXPECT_FALSE(has(text, "multiply_add")) << text;
    EXPECT_TRUE(has(text, "fused")) << text;  // the steps still chain
  }
  // A backend that contracts nothing, as a CPU without FMA instructions.
  CountingBackend counting{"cpu"};
  counting.contract_multiply_adds(false);
  const spmd::kernels::BackendOverride override(counting);
  text = local_text("f32", "%4 = mul {0} %0 %1\n%5 = add {0} %4 %2\nreturn %5\n");
  EXPECT_FALSE(has(text, "multiply_add")) << text;
}

TEST(DeviceSeam, ABackendForAPlatformThisBuildLacksIsAClearError) {
  try {
    spmd::kernels::backend_for("gpu");
    ADD_FAILURE() << "a backend for gpu in a CPU-only build";
  } catch (const spmd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no kernel backend for devices of platform 'gpu'"),
              std::string::npos)
        << e.what();
  }
  const compiler::KernelContext device{spmd::kernels::cpu_backend(), spmd::MemorySpace::device(0)};
  EXPECT_THROW(device.allocate(spmd::DType::kFloat32, {4}), spmd::InvalidArgument);
}

// The contraction kernel for letters in every order an operand may hold them (read transposed by
// BLAS, or transposed first), split over the mesh, against a product computed here.
TEST(DeviceSeam, ContractionsInAnyLetterOrderMatchTheirDefinition) {
  const HostArray a = counting({4, 6});  // letters i, j
  const HostArray b = counting({6, 8});  // letters j, k
  auto at = [](const HostArray& h, int64_t r, int64_t c) {
    return h.data<double>()[r * h.shape()[1] + c];
  };
  auto transposed = [](const HostArray& h) {
    HostArray t = HostArray::zeros(h.dtype(), {h.shape()[1], h.shape()[0]});
    for (int64_t r = 0; r < h.shape()[0]; ++r) {
      for (int64_t c = 0; c < h.shape()[1]; ++c)
        t.mutable_data<double>()[c * h.shape()[0] + r] = h.data<double>()[r * h.shape()[1] + c];
    }
    return t;
  };
  struct Case {
    std::string spec;
    bool a_t, b_t, out_t;  // whether the operands and the result are stored transposed
  };
  for (const Case& c :
       {Case{"ij,jk->ik", false, false, false}, Case{"ji,jk->ik", true, false, false},
        Case{"ij,kj->ik", false, true, false}, Case{"ji,kj->ki", true, true, true}}) {
    SCOPED_TRACE(c.spec);
    const Array x =
        spmd::device_put(c.a_t ? transposed(a) : a, NamedSharding(family_mesh(), P("a")));
    const Array y =
        spmd::device_put(c.b_t ? transposed(b) : b, NamedSharding(family_mesh(), P("b")));
    auto f = spmd::jit([&](const Tensor& p, const Tensor& q) { return jnp::einsum(c.spec, p, q); });
    HostArray got = spmd::multihost::process_allgather(f(x, y));
    if (c.out_t) got = transposed(got);
    ASSERT_EQ(got.shape(), (Shape{4, 8}));
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t k = 0; k < 8; ++k) {
        double want = 0;
        for (int64_t j = 0; j < 6; ++j) want += at(a, i, j) * at(b, j, k);
        EXPECT_NEAR(got.data<double>()[i * 8 + k], want, 1e-12) << i << "," << k;
      }
    }
  }
}

}  // namespace
