// vmap (spmd/vmap.h) against the same function applied slice by slice: every operation family,
// in_axes and out_axes, trees, nesting, grad both ways, a sharded mapped axis, and the errors.
// Values are small integers where the family allows, so that a batched result equal to the
// slices' is equal bit for bit. Part of jit_property_test (its main initializes 4 CPU devices).
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "jit/program_parse.h"
#include "lib/random/ops.h"

namespace {

namespace jnp = spmd::numpy;
namespace random = spmd::random;
using spmd::Array;
using spmd::DType;
using spmd::HostArray;
using spmd::NamedSharding;
using spmd::P;
using spmd::Shape;
using spmd::Tensor;
using spmd::VmapAxes;

const spmd::Mesh& vmap_line() {
  static const spmd::Mesh m(spmd::devices(), {4}, {"x"});
  return m;
}

// Integers -3 … 3 as float32, replicated (or laid out as `spec`).
Array vmap_values(const Shape& shape, int seed, const P& spec = P()) {
  std::vector<float> v(static_cast<size_t>(spmd::shape_size(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 5 + seed) % 7) - 3.0f;
  return spmd::device_put(HostArray::from_vector(v, shape), NamedSharding(vmap_line(), spec));
}

Array vmap_put(const HostArray& h) { return spmd::device_put(h, NamedSharding(vmap_line(), P())); }

// The extents of `shape` before, at and after `axis`, in bytes for the inner part.
struct Split3 {
  int64_t outer = 1, n = 1, inner = 1;
};
Split3 split3(const HostArray& a, int axis) {
  Split3 s;
  const Shape& shape = a.shape();
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    const int64_t e = shape[static_cast<size_t>(d)];
    (d < axis ? s.outer : d == axis ? s.n : s.inner) *= e;
  }
  s.inner *= static_cast<int64_t>(spmd::dtype_size(a.dtype()));
  return s;
}

// Slice `index` of `a` along `axis`, without that axis.
HostArray take(const HostArray& a, int axis, int64_t index) {
  Shape shape = a.shape();
  shape.erase(shape.begin() + axis);
  HostArray out = HostArray::zeros(a.dtype(), shape);
  const Split3 s = split3(a, axis);
  for (int64_t o = 0; o < s.outer; ++o) {
    std::memcpy(out.mutable_bytes().data() + o * s.inner,
                a.bytes().data() + (o * s.n + index) * s.inner, static_cast<size_t>(s.inner));
  }
  return out;
}

// `parts` (of one shape) stacked along a new `axis`.
HostArray stack(const std::vector<HostArray>& parts, int axis) {
  Shape shape = parts.at(0).shape();
  shape.insert(shape.begin() + axis, static_cast<int64_t>(parts.size()));
  HostArray out = HostArray::zeros(parts[0].dtype(), shape);
  const Split3 s = split3(out, axis);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.n; ++i) {
      std::memcpy(out.mutable_bytes().data() + (o * s.n + i) * s.inner,
                  parts[static_cast<size_t>(i)].bytes().data() + o * s.inner,
                  static_cast<size_t>(s.inner));
    }
  }
  return out;
}

void vmap_expect_close(const HostArray& got, const HostArray& want, double tolerance,
                       const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  if (tolerance == 0 || got.dtype() != DType::kFloat32) {
    EXPECT_TRUE(std::equal(got.bytes().begin(), got.bytes().end(), want.bytes().begin()))
        << what << " differs bit for bit";
    return;
  }
  for (size_t i = 0; i < got.data<float>().size(); ++i) {
    const float a = got.data<float>()[i], b = want.data<float>()[i];
    EXPECT_NEAR(a, b, tolerance * std::max(1.0f, std::abs(b))) << what << " at " << i;
  }
}

using PairFn = std::function<std::vector<Tensor>(const Tensor&, const Tensor&)>;

// jit(vmap(fn, in_axes, {out_axis})) on a and b equals fn applied to each slice (jit per slice)
// with the results stacked along out_axis: bit for bit, or within `tolerance` (relative) where
// the batched program sums in another order.
void expect_slice_by_slice(const PairFn& fn, const Array& a, const Array& b,
                           const VmapAxes& in_axes, int out_axis = 0, double tolerance = 0) {
  const std::vector<Array> batched = spmd::jit(spmd::vmap(fn, in_axes, {out_axis}))(a, b);
  const HostArray ha = a.to_host(), hb = b.to_host();
  const auto normal = [](std::optional<int> axis, const HostArray& h) {
    const int x = axis.value_or(0);
    return x < 0 ? x + static_cast<int>(h.shape().size()) : x;
  };
  const int axis_a = normal(in_axes[0], ha), axis_b = normal(in_axes[1], hb);
  const int64_t size = in_axes[0] ? ha.shape()[static_cast<size_t>(axis_a)]
                                  : hb.shape()[static_cast<size_t>(axis_b)];
  auto per_slice = spmd::jit(fn);
  std::vector<std::vector<HostArray>> parts(batched.size());
  for (int64_t i = 0; i < size; ++i) {
    const Array sa = in_axes[0] ? vmap_put(take(ha, axis_a, i)) : a;
    const Array sb = in_axes[1] ? vmap_put(take(hb, axis_b, i)) : b;
    const std::vector<Array> out = per_slice(sa, sb);
    for (size_t k = 0; k < out.size(); ++k) parts[k].push_back(out[k].to_host());
  }
  for (size_t k = 0; k < batched.size(); ++k) {
    vmap_expect_close(batched[k].to_host(), stack(parts[k], out_axis), tolerance,
                      "result " + std::to_string(k));
  }
}

const std::optional<int> kShared = std::nullopt;

TEST(Vmap, ElementwiseFamilyMatchesSliceBySlice) {
  const PairFn f = [](const Tensor& x, const Tensor& w) -> std::vector<Tensor> {
    const Tensor positive = w * w + 1.0f;
    const Tensor y = jnp::maximum(x, w) * 2.0f - jnp::abs(x) / positive + 0.5f;
    const Tensor z =
        jnp::where(x > 0.0f, y, jnp::astype(jnp::astype(-x, DType::kInt32), y.dtype()));
    return {z, jnp::astype(jnp::less(x, w), DType::kInt32), jnp::tanh(x) * jnp::exp(w * 0.1f)};
  };
  expect_slice_by_slice(f, vmap_values({5, 3, 4}, 0), vmap_values({3, 4}, 1), {0, kShared});
  expect_slice_by_slice(f, vmap_values({3, 5, 4}, 2), vmap_values({3, 4}, 3), {1, kShared});
  expect_slice_by_slice(f, vmap_values({5, 3, 4}, 4), vmap_values({3, 4, 5}, 5), {0, -1}, 2);
  expect_slice_by_slice(f, vmap_values({3, 4}, 6), vmap_values({3, 4, 5}, 7), {kShared, 2}, 1);
  // A batched rank-0 operand: one scalar per slice.
  const PairFn scale = [](const Tensor& x, const Tensor& s) -> std::vector<Tensor> {
    return {x * s, s + 1.0f};
  };
  expect_slice_by_slice(scale, vmap_values({3, 4}, 8), vmap_values({5}, 9), {kShared, 0});
}

TEST(Vmap, ReductionFamilyMatchesSliceBySlice) {
  const PairFn f = [](const Tensor& x, const Tensor& /*unused*/) -> std::vector<Tensor> {
    return {jnp::sum(x, {1}),  jnp::sum(x),       jnp::max(x, {0}, true), jnp::min(x, {1}),
            jnp::mean(x, {0}), jnp::argmax(x, 1), jnp::argmax(x)};
  };
  expect_slice_by_slice(f, vmap_values({5, 3, 4}, 0), vmap_values({1}, 0), {0, kShared});
  expect_slice_by_slice(f, vmap_values({3, 4, 6}, 1), vmap_values({1}, 0), {2, kShared});
  const PairFn soft = [](const Tensor& x, const Tensor& /*unused*/) -> std::vector<Tensor> {
    return {jnp::softmax(x, 1), jnp::logsumexp(x, {0})};
  };
  expect_slice_by_slice(soft, vmap_values({5, 3, 4}, 2), vmap_values({1}, 0), {0, kShared}, 0,
                        1e-6);
}

TEST(Vmap, ContractionFamilyMatchesSliceBySlice) {
  const PairFn f = [](const Tensor& x, const Tensor& w) -> std::vector<Tensor> {
    return {jnp::dot(x, w), jnp::einsum("i,ij->j", x, w), jnp::einsum("i,ij->ji", x * x, w)};
  };
  expect_slice_by_slice(f, vmap_values({6, 4}, 0), vmap_values({4, 3}, 1),
                        {0, kShared});  // shared weights
  expect_slice_by_slice(f, vmap_values({4}, 2), vmap_values({6, 4, 3}, 3),
                        {kShared, 0});  // shared input
  expect_slice_by_slice(f, vmap_values({4, 6}, 4), vmap_values({4, 6, 3}, 5), {1, 1},
                        1);  // both batched
  const PairFn bmm = [](const Tensor& a, const Tensor& b) -> std::vector<Tensor> {
    return {jnp::matmul(a, b), jnp::einsum("bij,bjk->bik", a, b), jnp::einsum("bij,bij->", a, a)};
  };
  expect_slice_by_slice(bmm, vmap_values({5, 2, 3, 4}, 6), vmap_values({5, 2, 4, 3}, 7), {0, 0});
}

TEST(Vmap, LayoutAndCreationFamiliesMatchSliceBySlice) {
  const PairFn f = [](const Tensor& x, const Tensor& w) -> std::vector<Tensor> {
    return {jnp::reshape(x, {2, 6}),
            jnp::transpose(x),
            jnp::broadcast_to(x, {2, 3, 4}),
            jnp::squeeze(jnp::expand_dims(x, 1), {1}),
            jnp::slice(x, {1, 0}, {3, 2}),
            jnp::concatenate({x, w, x}, 0),
            jnp::concatenate({w, x}, 1),
            x + jnp::astype(jnp::arange(4), DType::kFloat32) + jnp::zeros_like(x) +
                jnp::full({3, 4}, 2.0f)};
  };
  expect_slice_by_slice(f, vmap_values({5, 3, 4}, 0), vmap_values({3, 4}, 1), {0, kShared});
  expect_slice_by_slice(f, vmap_values({3, 5, 4}, 2), vmap_values({3, 4, 5}, 3), {1, 2}, 2);
}

TEST(Vmap, RandomFamilyDrawsEachKeysOwnNumbers) {
  const Array keys = vmap_put(random::split(random::PRNGKey(7), 6).to_host());  // u32[6, 2]
  const PairFn f = [](const Tensor& k, const Tensor& /*unused*/) -> std::vector<Tensor> {
    return {random::normal(k, {3, 4}),
            random::uniform(k, {5}, DType::kFloat32, -1.0, 2.0),
            random::randint(k, {4}, 0, 10),
            random::bits(k, {3}, DType::kUInt64),
            random::split(k, 3),
            random::bernoulli(k, 0.3, {7}),
            random::gumbel(random::fold_in(k, 5u), {2}),
            random::permutation(k, 5)};
  };
  expect_slice_by_slice(f, keys, vmap_values({1}, 0), {0, kShared});
  expect_slice_by_slice(f, vmap_put(jnp::transpose(random::split(random::PRNGKey(8), 5)).to_host()),
                        vmap_values({1}, 0), {1, kShared}, 1);
  // Shared keys and mapped data: fold_in of each slice's number, permutation of each slice.
  const PairFn g = [](const Tensor& k, const Tensor& x) -> std::vector<Tensor> {
    return {random::fold_in(k, jnp::astype(x, DType::kInt32)),
            random::permutation(k, jnp::reshape(x, {1})),
            random::bernoulli(k, x * 0.1f + 0.5f, {})};
  };
  expect_slice_by_slice(g, vmap_put(random::PRNGKey(3).to_host()), vmap_values({6}, 1),
                        {kShared, 0});
  // Mapped keys and mapped data, nested: each (key, slice) pair its own permutation.
  const PairFn h = [](const Tensor& k, const Tensor& x) -> std::vector<Tensor> {
    return {random::permutation(k, x, 1),
            random::fold_in(k, jnp::astype(jnp::sum(x), DType::kInt32))};
  };
  expect_slice_by_slice(h, keys, vmap_values({6, 2, 5}, 2), {0, 0});
}

TEST(Vmap, SamplesOfMappedKeysSplitOverDevicesAsWhole) {
  // 10 keys over 4 devices: each computes its own keys' samples, the padding of the last blocks
  // included, and the values are those of the unsplit batch.
  const Array keys = vmap_put(random::split(random::PRNGKey(11), 10).to_host());
  const auto draw = spmd::vmap([](const Tensor& k) { return random::normal(k, {3}); });
  auto split = spmd::jit(draw, {.out_shardings = {NamedSharding(vmap_line(), P("x"))}});
  const Array got = split(keys);
  EXPECT_EQ(dynamic_cast<const NamedSharding&>(got.sharding()).spec(), P("x"));
  const std::string text = split.lower(keys).as_text();
  EXPECT_NE(text.find("random_normal f32[3,3] %0 blocks=[x,_]"), std::string::npos) << text;
  vmap_expect_close(got.to_host(), spmd::jit(draw)(keys).to_host(), 0, "split vs whole");
}

TEST(Vmap, BatchedRandomOperationsReadBackFromTheirText) {
  const spmd::compiler::Program program = spmd::compiler::parse_program(
      "%0 = parameter u32[5,2] index=0 sharding=PartitionSpec()\n"
      "%1 = random_normal f32[5,3] %0\n"
      "%2 = random_bits u32[5,4,2] %0 bits=keys\nreturn %1 %2\n",
      vmap_line());
  EXPECT_EQ(program.lines()[1], "%1 = random_normal f32[5,3] %0");
  EXPECT_EQ(program.lines()[2], "%2 = random_bits u32[5,4,2] %0 bits=keys");
  const auto* normal = program.ops[1].as<spmd::compiler::RandomSampleOp>();
  ASSERT_NE(normal, nullptr);
  EXPECT_EQ(normal->batch_shape, (Shape{5}));
  EXPECT_EQ(normal->shape, (Shape{3}));
  EXPECT_THROW(spmd::compiler::parse_program("%0 = parameter u32[5,2] index=0 "
                                             "sharding=PartitionSpec()\n"
                                             "%1 = random_normal f32[4,3] %0\nreturn %1\n",
                                             vmap_line()),
               spmd::InvalidArgument);
}

}  // namespace

namespace {

// A per-example loss: x f32[4], w f32[4, 3].
Tensor loss(const Tensor& w, const Tensor& x) { return jnp::sum(jnp::tanh(jnp::dot(x, w))); }

TEST(Vmap, GradComposesBothWays) {
  const Array w = vmap_values({4, 3}, 0), xs = vmap_values({6, 4}, 1);
  const auto per_example = [](const Tensor& w, const Tensor& x) { return loss(w, x); };
  // grad of the summed batch against the per-example gradients summed: each way round.
  auto outer = spmd::jit([&](const Tensor& w, const Tensor& xs) {
    return spmd::grad([&](const Tensor& w, const Tensor& xs) {
      return jnp::sum(spmd::vmap(per_example, {kShared, 0})(w, xs));
    })(w, xs);
  });
  auto inner = spmd::jit([&](const Tensor& w, const Tensor& xs) {
    return jnp::sum(spmd::vmap(spmd::grad(per_example), {kShared, 0})(w, xs), {0});
  });
  vmap_expect_close(outer(w, xs).to_host(), inner(w, xs).to_host(), 1e-5,
                    "grad(vmap) vs vmap(grad)");
  // Per-example gradients, and gradients with respect to the mapped input, slice by slice.
  const PairFn grads = [](const Tensor& x, const Tensor& w) -> std::vector<Tensor> {
    return {spmd::grad<0>(loss)(w, x), spmd::grad<1>(loss)(w, x)};
  };
  expect_slice_by_slice(grads, xs, w, {0, kShared}, 0, 1e-6);
  auto input_grads = spmd::jit([](const Tensor& w, const Tensor& xs) {
    return spmd::grad<1>([](const Tensor& w, const Tensor& xs) {
      return jnp::sum(spmd::vmap(loss, {kShared, 0})(w, xs));
    })(w, xs);
  });
  auto mapped = spmd::jit([](const Tensor& w, const Tensor& xs) {
    return spmd::vmap(spmd::grad<1>(loss), {kShared, 0})(w, xs);
  });
  vmap_expect_close(input_grads(w, xs).to_host(), mapped(w, xs).to_host(), 1e-6, "input gradients");
}

TEST(Vmap, NestsAndTakesTreesAndPairs) {
  // Pairwise differences: vmap over rows of a, then over rows of b.
  auto pairwise = spmd::jit([](const Tensor& a, const Tensor& b) {
    const auto diff = [](const Tensor& u, const Tensor& v) { return jnp::sum(u - v); };
    return spmd::vmap(
        [&](const Tensor& u, const Tensor& bs) {
          return spmd::vmap(diff, {kShared, 0})(u, bs);
        },
        {0, kShared})(a, b);
  });
  const Array a = vmap_values({3, 4}, 0), b = vmap_values({5, 4}, 1);
  const HostArray got = pairwise(a, b).to_host();
  ASSERT_EQ(got.shape(), (Shape{3, 5}));
  const HostArray ha = a.to_host(), hb = b.to_host();
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 5; ++j) {
      float want = 0;
      for (int k = 0; k < 4; ++k) want += ha.data<float>()[i * 4 + k] - hb.data<float>()[j * 4 + k];
      EXPECT_EQ(got.data<float>()[i * 5 + j], want) << i << "," << j;
    }
  }
  // A map argument and a pair result, the second leaf shared (out_axes per leaf).
  auto f = spmd::jit([](const std::map<std::string, Tensor>& p) {
    const auto one = [](const std::map<std::string, Tensor>& q) {
      return std::pair{q.at("x") * q.at("y"), jnp::sum(q.at("y"))};
    };
    const auto [prod, total] = spmd::vmap(one, {1}, {0, 0})(p);
    return std::vector<Tensor>{prod, total};
  });
  const std::vector<Array> out =
      f(std::map<std::string, Array>{{"x", vmap_values({2, 5}, 2)}, {"y", vmap_values({2, 5}, 3)}});
  EXPECT_EQ(out[0].shape(), (Shape{5, 2}));
  EXPECT_EQ(out[1].shape(), (Shape{5}));
}

TEST(Vmap, OutAxesPlaceOrShareTheResult) {
  auto f = spmd::jit([](const Tensor& xs, const Tensor& w) {
    const auto one = [](const Tensor& x, const Tensor& w) {
      return std::vector<Tensor>{x + w, w * 2.0f};
    };
    return spmd::vmap(one, {0, kShared}, {-1, std::nullopt})(xs, w);
  });
  const std::vector<Array> out = f(vmap_values({5, 3}, 0), vmap_values({3}, 1));
  EXPECT_EQ(out[0].shape(), (Shape{3, 5}));
  EXPECT_EQ(out[1].shape(), (Shape{3}));  // shared: no slices' axis
  // A result that is the same for every slice, asked with an axis, is broadcast to the slices.
  auto g = spmd::jit([](const Tensor& xs, const Tensor& w) {
    return spmd::vmap([](const Tensor&, const Tensor& w) { return w; }, {0, kShared})(xs, w);
  });
  EXPECT_EQ(g(vmap_values({5, 3}, 0), vmap_values({3}, 1)).shape(), (Shape{5, 3}));
}

TEST(Vmap, AMappedAxisStaysSplitWithNoCommunication) {
  const Array w = vmap_values({4, 3}, 0);
  auto f = spmd::jit(spmd::vmap(
      [](const Tensor& x, const Tensor& w) { return jnp::softmax(jnp::dot(jnp::tanh(x), w), 0); },
      {0, kShared}));
  for (const Shape& shape : {Shape{8, 4}, Shape{10, 4}}) {  // even, and uneven as XLA tiles it
    const Array split = f(vmap_values(shape, 1, P("x")), w);
    const Array whole = f(vmap_values(shape, 1), w);
    // Within rounding, not bit for bit: a block of 2 rows and one of 8 may take different GEMM
    // kernels (oneDNN's on AVX2 do), which sum the products in other orders.
    vmap_expect_close(split.to_host(), whole.to_host(), 1e-6, "split vs whole");
    const auto& sharding = dynamic_cast<const NamedSharding&>(split.sharding());
    EXPECT_EQ(sharding.spec(), P("x")) << sharding.spec().to_string();
    const std::string text = f.lower(vmap_values(shape, 1, P("x")), w).as_text();
    for (const char* collective : {"psum", "all_gather", "all_to_all", "pmax", "local_slice"}) {
      EXPECT_EQ(text.find(collective), std::string::npos) << text;
    }
  }
}

TEST(Vmap, InsideAShardMapBodyAndAConstraint) {
  // Each device maps over its block's rows, then psum completes each row's sum.
  auto f = spmd::jit([](const Tensor& x) {
    return spmd::lax::shard_map(
        [](const Tensor& block) {
          const auto row = [](const Tensor& r) { return spmd::lax::psum(jnp::sum(r), "x"); };
          return spmd::vmap(row)(block);
        },
        vmap_line(), {P(spmd::None, "x")}, P())(x);
  });
  const Array x = vmap_values({5, 8}, 0, P(spmd::None, "x"));
  vmap_expect_close(f(x).to_host(), jnp::sum(x, {1}).to_host(), 0, "row sums");
  // A constraint on each slice constrains the batch with the slices' axis left free.
  auto g = spmd::jit(spmd::vmap([](const Tensor& r) {
    return spmd::lax::with_sharding_constraint(r * 2.0f, NamedSharding(vmap_line(), P("x")));
  }));
  const Array y = g(vmap_values({5, 8}, 1));
  EXPECT_EQ(dynamic_cast<const NamedSharding&>(y.sharding()).spec(), P(spmd::None, "x"));
  vmap_expect_close(y.to_host(), jnp::add(vmap_values({5, 8}, 1), vmap_values({5, 8}, 1)).to_host(),
                    0, "2x");
}

TEST(Vmap, CalledWithArraysRunsAsItsOwnJit) {
  auto f =
      spmd::vmap([](const Tensor& x, const Tensor& w) { return jnp::dot(x, w); }, {0, kShared});
  const Array xs = vmap_values({6, 4}, 0), w = vmap_values({4, 3}, 1);
  vmap_expect_close(f(xs, w).to_host(), jnp::matmul(xs, w).to_host(), 0, "rows times w");
}

// Throws InvalidArgument whose message contains `part`.
template <class Call>
void expect_error(const Call& call, const std::string& part) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one containing \"" << part << "\"";
  } catch (const spmd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Vmap, RefusesWhatJaxRefuses) {
  const Array a = vmap_values({5, 3}, 0), b = vmap_values({4, 3}, 1), s = vmap_values({}, 2);
  const auto add = [](const Tensor& x, const Tensor& y) { return x + y; };
  expect_error([&] { spmd::jit(spmd::vmap(add))(a, b); }, "argument 0 has size 5 along axis 0");
  expect_error([&] { spmd::jit(spmd::vmap(add, {std::nullopt}))(a, a); }, "no argument is mapped");
  expect_error([&] { spmd::jit(spmd::vmap(add, {2, 0}))(a, a); }, "has no axis 2");
  expect_error([&] { spmd::jit(spmd::vmap(add, {0, kShared}))(s, s); }, "rank-0");
  expect_error([&] { spmd::jit(spmd::vmap(add, {0, 0, 0}))(a, a); }, "3 entries for 2 arguments");
  expect_error([&] { spmd::jit(spmd::vmap(add, {0}, {std::nullopt}))(a, a); },
               "depends on a mapped argument");
  expect_error([&] { spmd::jit(spmd::vmap(add, {0}, {3}))(a, a); }, "out_axes 3 is out of range");
  const auto with_shard_map = [](const Tensor& x) {
    return spmd::lax::shard_map([](const Tensor& b) { return b; }, vmap_line(), {P()}, P())(x);
  };
  expect_error([&] { spmd::jit(spmd::vmap(with_shard_map))(a); }, "shard_map inside a vmapped");
}

}  // namespace
