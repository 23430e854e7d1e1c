// lax::shard_map's typing by varying axes (JAX 0.10.2's check_vma) on a 2 x 2 mesh of 4 CPU
// devices: each collective on varying and on invariant values, against the same computation on
// the global arrays; gradients by replicated parameters (summed over the batch axis, as JAX's);
// check_vma = false; pcast; axis_names; and the errors. Part of jit_property_test (its main
// initializes the devices). tests/shard_map/vma_table.py compares the same cases with JAX itself.
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <cmath>
#include <string>

namespace {

namespace jnp = spmd::numpy;
namespace lax = spmd::lax;
using spmd::Array;
using spmd::HostArray;
using spmd::NamedSharding;
using spmd::P;
using spmd::Tensor;

const spmd::Mesh& vma_mesh() {
  static const spmd::Mesh m(spmd::devices(), {2, 2}, {"dp", "mp"});
  return m;
}

Array vma_values(const spmd::Shape& shape, const spmd::PartitionSpec& spec, double seed) {
  std::vector<double> v(static_cast<size_t>(spmd::shape_size(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(seed * 5.1 + static_cast<double>(i) * 0.7);
  return spmd::device_put(HostArray::from_vector(v, shape), NamedSharding(vma_mesh(), spec));
}

void vma_expect_close(const Array& got, const Array& want, double tol = 1e-12) {
  const HostArray g = spmd::multihost::process_allgather(got);
  const HostArray w = spmd::multihost::process_allgather(want);
  ASSERT_EQ(g.shape(), w.shape());
  for (size_t i = 0; i < g.data<double>().size(); ++i) {
    EXPECT_NEAR(g.data<double>()[i], w.data<double>()[i], tol) << "element " << i;
  }
}

using VmaFn = std::function<Tensor(const Tensor&)>;

// fn under jit of x, or the InvalidArgument's text.
std::string refusal(const VmaFn& fn, const Array& x) {
  try {
    spmd::jit(fn)(x);
  } catch (const spmd::InvalidArgument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(VaryingAxes, ReductionsOfVaryingAndInvariantValues) {
  const Array x = vma_values({4, 3}, P("dp"), 1), w = vma_values({3}, P(), 2);
  auto reduce = [](const Tensor& x) {
    return std::vector<Tensor>{jnp::max(x, {0}), jnp::sum(x, {0}) / 2.0};
  };
  auto in_map = spmd::jit([](const Tensor& x, const Tensor& w) {
    return lax::shard_map(
        [](const Tensor& b, const Tensor& v) {
          return std::vector<Tensor>{lax::pmax(jnp::max(b, {0}), "dp"),
                                     lax::pmean(jnp::sum(b, {0}), "dp"), lax::psum(v, {"dp", "mp"}),
                                     lax::pmean(v, "dp"), lax::pmin(v, "mp")};
        },
        vma_mesh(), {P("dp"), P()}, {P(), P(), P(), P(), P()})(x, w);
  });
  const auto got = in_map(x, w);
  const auto want = spmd::jit(reduce)(x);
  vma_expect_close(got[0], want[0]);
  vma_expect_close(got[1], want[1]);
  // psum of an invariant value multiplies it by the group size; pmean and pmin keep it.
  vma_expect_close(got[2], spmd::jit([](const Tensor& w) { return w * 4.0; })(w));
  vma_expect_close(got[3], w);
  vma_expect_close(got[4], w);
}

TEST(VaryingAxes, GatherScatterPermuteAndIndexVaryOverTheirAxes) {
  const Array x = vma_values({4, 2}, P("dp"), 3);
  auto in_map = spmd::jit([](const Tensor& x) {
    return lax::shard_map(
        [](const Tensor& b) {
          const Tensor gathered = lax::all_gather(b, "dp", 0, true);  // the whole x
          const Tensor summed = lax::psum_scatter(gathered, "dp", 0, true);
          const Tensor moved = lax::ppermute(b, "dp", {{0, 1}, {1, 0}});
          const Tensor index = lax::axis_index("dp");
          return std::vector<Tensor>{gathered, summed, moved,
                                     b * jnp::astype(index, spmd::DType::kFloat64)};
        },
        vma_mesh(), {P("dp")}, {P("dp"), P("dp"), P("dp"), P("dp")})(x);
  });
  const auto got = in_map(x);
  auto reference = spmd::jit([](const Tensor& x) {
    const Tensor top = jnp::slice(x, {0, 0}, {2, 2}), bottom = jnp::slice(x, {2, 0}, {4, 2});
    return std::vector<Tensor>{jnp::concatenate({x, x}), x * 2.0, jnp::concatenate({bottom, top}),
                               jnp::concatenate({top * 0.0, bottom})};
  });
  const auto want = reference(x);
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    vma_expect_close(got[i], want[i]);
  }
  // all_gather's result varies over its axis: it cannot leave as the same on every device.
  const std::string gathered = refusal(
      [](const Tensor& t) {
        return lax::shard_map([](const Tensor& b) { return lax::all_gather(b, "dp", 0, true); },
                              vma_mesh(), {P("dp")}, P())(t);
      },
      x);
  EXPECT_NE(gathered.find("result 0 varies over mesh axes (dp)"), std::string::npos) << gathered;
}

// grad by a replicated parameter is summed over the axis the loss varies along (JAX's transpose
// of the implicit pvary), inside the shard_map and around it.
TEST(VaryingAxes, TheGradientOfAReplicatedParameterIsSummedOverTheBatchAxis) {
  const Array w = vma_values({3}, P(), 4), x = vma_values({4, 3}, P("dp"), 5);
  auto inside = spmd::jit([](const Tensor& w, const Tensor& x) {
    return lax::shard_map(
        [](const Tensor& wb, const Tensor& xb) {
          return spmd::grad([&](const Tensor& v) { return jnp::sum(v * xb); })(wb);
        },
        vma_mesh(), {P(), P("dp")}, P())(w, x);
  });
  auto around = spmd::jit([](const Tensor& w, const Tensor& x) {
    return spmd::grad([&](const Tensor& v) {
      return lax::shard_map(
          [](const Tensor& vb, const Tensor& xb) { return lax::pmean(jnp::sum(vb * xb), "dp"); },
          vma_mesh(), {P(), P("dp")}, P())(v, x);
    })(w);
  });
  auto column_sums = spmd::jit([](const Tensor& x) { return jnp::sum(x, {0}); });
  vma_expect_close(inside(w, x), column_sums(x));
  vma_expect_close(around(w, x),
                   spmd::jit([](const Tensor& x) { return jnp::sum(x, {0}) / 2.0; })(x));
  // psum of an invariant w is 4 w over both axes: its gradient is 4.
  auto of_psum = spmd::jit([](const Tensor& w) {
    return spmd::grad([](const Tensor& v) {
      return jnp::sum(lax::shard_map(
          [](const Tensor& b) {
            return lax::psum(b, {"dp", "mp"});
          },
          vma_mesh(), {P()}, P())(v));
    })(w);
  });
  vma_expect_close(of_psum(w), spmd::jit([](const Tensor& w) { return w * 0.0 + 4.0; })(w));
}

TEST(VaryingAxes, WithoutCheckVmaEachDeviceKeepsItsOwnGradientAndDeviceZerosResult) {
  const Array w = vma_values({3}, P(), 6), x = vma_values({4, 3}, P("dp"), 7);
  auto unchecked = spmd::jit([](const Tensor& w, const Tensor& x) {
    return lax::shard_map(
        [](const Tensor& wb, const Tensor& xb) {
          return spmd::grad([&](const Tensor& v) { return jnp::sum(v * xb); })(wb);
        },
        vma_mesh(), {P(), P("dp")}, P(), {.check_vma = false})(w, x);
  });
  vma_expect_close(unchecked(w, x), spmd::jit([](const Tensor& x) {
                     return jnp::sum(jnp::slice(x, {0, 0}, {2, 3}), {0});
                   })(x));
}

// Around an unchecked shard_map, JAX's transpose: the result, one device's of 4 copies under
// P(), has its cotangent divided by 4; the replicated w's per-device cotangents are summed over
// both axes. So d/dw of device 0's sum(w * x_block) is the column sums of x over 2 (each "dp"
// block sits on 2 devices of "mp").
TEST(VaryingAxes, WithoutCheckVmaTheBoundariesTransposeAsJaxs) {
  const Array w = vma_values({3}, P(), 12), x = vma_values({4, 3}, P("dp"), 13);
  auto of_unchecked = spmd::jit([](const Tensor& w, const Tensor& x) {
    return spmd::grad([&](const Tensor& v) {
      return lax::shard_map([](const Tensor& vb, const Tensor& xb) { return jnp::sum(vb * xb); },
                            vma_mesh(), {P(), P("dp")}, P(), {.check_vma = false})(v, x);
    })(w);
  });
  vma_expect_close(of_unchecked(w, x),
                   spmd::jit([](const Tensor& x) { return jnp::sum(x, {0}) / 2.0; })(x));
  const std::string partial = refusal(
      [](const Tensor& t) {
        return lax::shard_map([](const Tensor& b) { return b; }, vma_mesh(), {P("dp")}, P("dp"),
                              {.axis_names = {"dp"}, .check_vma = false})(t);
      },
      x);
  EXPECT_NE(partial.find("check_vma=false with axis_names naming only some"), std::string::npos)
      << partial;
}

TEST(VaryingAxes, PcastMakesAValueVaryAndItsCotangentSums) {
  const Array w = vma_values({3}, P(), 8);
  auto varied = spmd::jit([](const Tensor& w) {
    return lax::shard_map(
        [](const Tensor& b) { return lax::psum(lax::pcast(b, "dp", "varying"), "dp"); }, vma_mesh(),
        {P()}, P())(w);
  });
  vma_expect_close(varied(w), spmd::jit([](const Tensor& w) { return w * 2.0; })(w));
  const std::string twice = refusal(
      [](const Tensor& t) {
        return lax::shard_map([](const Tensor& b) { return lax::pcast(b, "dp", "varying"); },
                              vma_mesh(), {P("dp")}, P("dp"))(t);
      },
      vma_values({4}, P("dp"), 9));
  EXPECT_NE(twice.find("unsupported pcast from=varying, to='varying'"), std::string::npos) << twice;
  const std::string reduced = refusal(
      [](const Tensor& t) {
        return lax::shard_map([](const Tensor& b) { return lax::pcast(b, "dp", "reduced"); },
                              vma_mesh(), {P()}, P())(t);
      },
      w);
  EXPECT_NE(reduced.find("to='reduced' is not supported"), std::string::npos) << reduced;
}

TEST(VaryingAxes, AxisNamesLimitTheManualAxes) {
  const Array x = vma_values({4, 2}, P("dp"), 10);
  auto over_dp = spmd::jit([](const Tensor& t) {
    return lax::shard_map([](const Tensor& b) { return lax::psum(b, "dp"); }, vma_mesh(), {P("dp")},
                          P(), {.axis_names = {"dp"}})(t);
  });
  vma_expect_close(over_dp(x), spmd::jit([](const Tensor& t) {
                     return jnp::slice(t, {0, 0}, {2, 2}) + jnp::slice(t, {2, 0}, {4, 2});
                   })(x));
  const std::string collective = refusal(
      [](const Tensor& t) {
        return lax::shard_map([](const Tensor& b) { return lax::psum(b, "mp"); }, vma_mesh(),
                              {P("dp")}, P("dp"), {.axis_names = {"dp"}})(t);
      },
      x);
  EXPECT_NE(collective.find("psum: unbound axis name: mp (the shard_map is manual over (dp)"),
            std::string::npos)
      << collective;
  const std::string spec = refusal(
      [](const Tensor& t) {
        return lax::shard_map([](const Tensor& b) { return b; }, vma_mesh(), {P("mp")}, P("mp"),
                              {.axis_names = {"dp"}})(t);
      },
      x);
  EXPECT_NE(spec.find("names the axis 'mp', which is not in axis_names (dp)"), std::string::npos)
      << spec;
}

TEST(VaryingAxes, PmaxHasNoDerivativeAsInJax) {
  const std::string message = refusal(
      [](const Tensor& t) {
        return spmd::grad([](const Tensor& v) {
          return jnp::sum(lax::shard_map([](const Tensor& b) { return lax::pmax(b, "dp"); },
                                         vma_mesh(), {P("dp")}, P())(v));
        })(t);
      },
      vma_values({4}, P("dp"), 11));
  EXPECT_NE(message.find("grad: pmax has no derivative"), std::string::npos) << message;
}

}  // namespace
