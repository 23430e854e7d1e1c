// Traced values and their operations: spmd.Tensor with Python's operators, spmd::numpy over
// Tensors (_spmd.tnp, which spmd.numpy dispatches to), traced shard_map, vmap and collectives,
// and reverse mode (vjp).
#include <fmt/format.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <map>

#include "bindings.h"
#include "spmd/convolution.h"
#include "spmd/eval_shape.h"
#include "spmd/grad.h"
#include "spmd/jit.h"
#include "spmd/linalg.h"
#include "spmd/numpy.h"
#include "spmd/traced_shard_map.h"
#include "spmd/vmap.h"

namespace spmd::python {
namespace {

namespace jnp = spmd::numpy;

// Python scalars as JAX's weak-typed operands: bool, int, float.
Scalar scalar_of(const nb::handle& h) {
  if (nb::isinstance<nb::bool_>(h)) return Scalar(nb::cast<bool>(h));
  if (nb::isinstance<nb::int_>(h)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow != 0) {
      throw OverflowError(
          fmt::format("the Python int {} does not fit int64, the widest integer "
                      "type an operand can enter as",
                      nb::cast<std::string>(nb::str(h))));
    }
    return Scalar(static_cast<int64_t>(v));
  }
  double v = 0;
  if (!nb::try_cast<double>(h, v)) {  // (nb::cast would throw std::bad_cast's message)
    throw nb::type_error(fmt::format("a real Python number (bool, int or float) expected, got {}",
                                     nb::cast<std::string>(nb::repr(h)))
                             .c_str());
  }
  return Scalar(v);
}

using TensorBinary = Tensor (*)(const Tensor&, const Tensor&);
using LeftScalar = Tensor (*)(const Tensor&, Scalar);
using RightScalar = Tensor (*)(Scalar, const Tensor&);

// `name` (and its reflection) on Tensor-Tensor and Tensor-scalar operands.
void arithmetic(nb::class_<Tensor>& cls, const char* name, const char* reflected, TensorBinary tt,
                LeftScalar ts, RightScalar st) {
  cls.def(name, tt);
  cls.def(name, [ts](const Tensor& a, nb::handle s) { return ts(a, scalar_of(s)); });
  cls.def(reflected, [st](const Tensor& a, nb::handle s) { return st(scalar_of(s), a); });
}

void bind_tensor(nb::module_& m) {
  auto cls =
      nb::class_<Tensor>(m, "Tensor")
          .def_prop_ro("shape", [](const Tensor& t) { return shape_tuple(t.shape()); })
          .def_prop_ro("_dtype", [](const Tensor& t) { return numpy_name(t.dtype()); })
          .def_prop_ro("ndim", &Tensor::ndim)
          .def_prop_ro("size", &Tensor::size)
          .def_prop_ro("sharding", &Tensor::sharding)
          // Which traced value this is: equal for two handles of one value.
          .def_prop_ro("_key",
                       [](const Tensor& t) {
                         return nb::make_tuple(reinterpret_cast<uintptr_t>(t.trace().get()),
                                               t.value());
                       })
          .def("__repr__", &Tensor::to_string)
          .def("__neg__", [](const Tensor& a) { return -a; })
          .def("__matmul__", [](const Tensor& a, const Tensor& b) { return jnp::matmul(a, b); })
          .def("__pow__", [](const Tensor& a, const Tensor& b) { return jnp::power(a, b); })
          .def("__pow__", [](const Tensor& a, nb::handle s) { return jnp::power(a, scalar_of(s)); })
          .def("__lt__", [](const Tensor& a, const Tensor& b) { return a < b; })
          .def("__gt__", [](const Tensor& a, const Tensor& b) { return a > b; })
          .def("__le__", [](const Tensor& a, const Tensor& b) { return a <= b; })
          .def("__ge__", [](const Tensor& a, const Tensor& b) { return a >= b; })
          .def("__lt__", [](const Tensor& a, nb::handle s) { return a < scalar_of(s); })
          .def("__gt__", [](const Tensor& a, nb::handle s) { return a > scalar_of(s); });
  arithmetic(
      cls, "__add__", "__radd__", &jnp::add, [](const Tensor& a, Scalar s) { return a + s; },
      [](Scalar s, const Tensor& a) { return s + a; });
  arithmetic(
      cls, "__sub__", "__rsub__", &jnp::subtract, [](const Tensor& a, Scalar s) { return a - s; },
      [](Scalar s, const Tensor& a) { return s - a; });
  arithmetic(
      cls, "__mul__", "__rmul__", &jnp::multiply, [](const Tensor& a, Scalar s) { return a * s; },
      [](Scalar s, const Tensor& a) { return s * a; });
  arithmetic(
      cls, "__truediv__", "__rtruediv__", &jnp::divide,
      [](const Tensor& a, Scalar s) { return a / s; },
      [](Scalar s, const Tensor& a) { return s / a; });
}

// Floor division, remainders, the bitwise and logical operations and rounding. A Python scalar
// operand is weak, and a reflected one ("r" + name) is the first operand (3 // x).
void bind_integer_arithmetic(nb::module_& t) {
  for (auto [name, fn] : {std::pair<const char*, TensorBinary>{"floor_divide", &jnp::floor_divide},
                          {"remainder", &jnp::remainder},
                          {"fmod", &jnp::fmod},
                          {"bitwise_and", &jnp::bitwise_and},
                          {"bitwise_or", &jnp::bitwise_or},
                          {"bitwise_xor", &jnp::bitwise_xor},
                          {"left_shift", &jnp::left_shift},
                          {"right_shift", &jnp::right_shift},
                          {"logical_and", &jnp::logical_and},
                          {"logical_or", &jnp::logical_or},
                          {"logical_xor", &jnp::logical_xor}}) {
    t.def(name, static_cast<TensorBinary>(fn));
  }
  for (auto [name, fn] : {std::pair{"floor_divide", static_cast<LeftScalar>(&jnp::floor_divide)},
                          {"remainder", static_cast<LeftScalar>(&jnp::remainder)},
                          {"fmod", static_cast<LeftScalar>(&jnp::fmod)},
                          {"bitwise_and", static_cast<LeftScalar>(&jnp::bitwise_and)},
                          {"bitwise_or", static_cast<LeftScalar>(&jnp::bitwise_or)},
                          {"bitwise_xor", static_cast<LeftScalar>(&jnp::bitwise_xor)},
                          {"left_shift", static_cast<LeftScalar>(&jnp::left_shift)},
                          {"right_shift", static_cast<LeftScalar>(&jnp::right_shift)}}) {
    t.def(name, [fn](const Tensor& a, nb::handle s) { return fn(a, scalar_of(s)); });
  }
  for (auto [name, fn] : {std::pair{"rfloor_divide", static_cast<RightScalar>(&jnp::floor_divide)},
                          {"rremainder", static_cast<RightScalar>(&jnp::remainder)},
                          {"rfmod", static_cast<RightScalar>(&jnp::fmod)},
                          {"rleft_shift", static_cast<RightScalar>(&jnp::left_shift)},
                          {"rright_shift", static_cast<RightScalar>(&jnp::right_shift)}}) {
    t.def(name, [fn](const Tensor& b, nb::handle s) { return fn(scalar_of(s), b); });
  }
  t.def("divmod", [](const Tensor& a, const Tensor& b) {
    auto [q, r] = jnp::divmod(a, b);
    return nb::make_tuple(q, r);
  });
  for (auto [name, fn] : {std::pair<const char*, Tensor (*)(const Tensor&)>{"invert", &jnp::invert},
                          {"logical_not", &jnp::logical_not},
                          {"floor", &jnp::floor},
                          {"ceil", &jnp::ceil},
                          {"trunc", &jnp::trunc},
                          {"rint", &jnp::rint}}) {
    t.def(name, fn);
  }
  t.def("round", &jnp::round, nb::arg("a"), nb::arg("decimals"));
}

// spmd::numpy over Tensors; dtypes by NumPy's names.
void bind_numpy(nb::module_& m) {
  nb::module_ t = m.def_submodule("tnp", "spmd::numpy over traced values");
  bind_integer_arithmetic(t);
  for (auto [name, fn] : {std::pair{"add", &jnp::add},
                          {"subtract", &jnp::subtract},
                          {"multiply", &jnp::multiply},
                          {"divide", &jnp::divide},
                          {"maximum", &jnp::maximum},
                          {"minimum", &jnp::minimum},
                          {"equal", &jnp::equal},
                          {"not_equal", &jnp::not_equal},
                          {"less", &jnp::less},
                          {"less_equal", &jnp::less_equal},
                          {"greater", &jnp::greater},
                          {"greater_equal", &jnp::greater_equal},
                          {"matmul", &jnp::matmul},
                          {"dot", &jnp::dot}}) {
    t.def(name, static_cast<TensorBinary>(fn));
  }
  t.def("power", static_cast<TensorBinary>(&jnp::power));
  // A Python scalar as the second operand: weak, as in JAX (numpy.py puts a scalar second).
  for (auto [name, fn] : {std::pair{"maximum", static_cast<LeftScalar>(&jnp::maximum)},
                          {"minimum", static_cast<LeftScalar>(&jnp::minimum)},
                          {"power", static_cast<LeftScalar>(&jnp::power)},
                          {"equal", static_cast<LeftScalar>(&jnp::equal)},
                          {"not_equal", static_cast<LeftScalar>(&jnp::not_equal)},
                          {"less", static_cast<LeftScalar>(&jnp::less)},
                          {"less_equal", static_cast<LeftScalar>(&jnp::less_equal)},
                          {"greater", static_cast<LeftScalar>(&jnp::greater)},
                          {"greater_equal", static_cast<LeftScalar>(&jnp::greater_equal)}}) {
    t.def(name, [fn](const Tensor& a, nb::handle s) { return fn(a, scalar_of(s)); });
  }
  t.def("rpower", [](const Tensor& b, nb::handle s) { return jnp::power(scalar_of(s), b); });
  // Host data captured by a traced function: a constant of the program (its bytes, shape and
  // dtype name, as _core._bytes gives them).
  t.def("constant", [](const HostBytes& bytes, const Shape& shape, const std::string& dtype) {
    return jnp::asarray(host_of(bytes, shape, dtype));
  });
  for (auto [name, fn] : {std::pair{"negative", &jnp::negative},
                          {"exp", &jnp::exp},
                          {"log", &jnp::log},
                          {"tanh", &jnp::tanh},
                          {"sqrt", &jnp::sqrt},
                          {"abs", &jnp::abs},
                          {"sign", &jnp::sign},
                          {"rsqrt", &jnp::rsqrt},
                          {"logistic", &jnp::logistic},
                          {"relu", &jnp::relu},
                          {"sin", &jnp::sin},
                          {"tan", &jnp::tan},
                          {"cbrt", &jnp::cbrt},
                          {"cos", &jnp::cos},
                          {"log1p", &jnp::log1p},
                          {"expm1", &jnp::expm1},
                          {"erf", &jnp::erf},
                          {"erfc", &jnp::erfc},
                          {"lgamma", &jnp::lgamma},
                          {"digamma", &jnp::digamma},
                          {"erf_inv", &jnp::erf_inv},
                          {"sinh", &jnp::sinh},
                          {"cosh", &jnp::cosh},
                          {"arcsinh", &jnp::arcsinh},
                          {"arccosh", &jnp::arccosh},
                          {"arctanh", &jnp::arctanh},
                          {"arctan", &jnp::arctan},
                          {"arcsin", &jnp::arcsin},
                          {"arccos", &jnp::arccos},
                          {"isnan", &jnp::isnan},
                          {"isfinite", &jnp::isfinite}}) {
    t.def(name, static_cast<Tensor (*)(const Tensor&)>(fn));
  }
  using Reduction = Tensor (*)(const Tensor&, const jnp::AxisList&, bool);
  for (auto [name, fn] : {std::pair{"sum", static_cast<Reduction>(&jnp::sum)},
                          {"prod", static_cast<Reduction>(&jnp::prod)},
                          {"mean", static_cast<Reduction>(&jnp::mean)},
                          {"max", static_cast<Reduction>(&jnp::max)},
                          {"min", static_cast<Reduction>(&jnp::min)},
                          {"logsumexp", static_cast<Reduction>(&jnp::logsumexp)},
                          {"all", static_cast<Reduction>(&jnp::all)},
                          {"any", static_cast<Reduction>(&jnp::any)}}) {
    t.def(name, fn, nb::arg("a"), nb::arg("axes"), nb::arg("keepdims"));
  }
  t.def("var", &jnp::var, nb::arg("a"), nb::arg("axes"), nb::arg("ddof"), nb::arg("keepdims"));
  t.def("where", static_cast<Tensor (*)(const Tensor&, const Tensor&, const Tensor&)>(&jnp::where));
  // A Python scalar branch: weak beside the other (jnp.where(c, x, 0.5) keeps a float16 x's dtype).
  t.def("where", [](const Tensor& c, const Tensor& a, nb::handle s) {
    return jnp::where(c, a, scalar_of(s));
  });
  t.def("where", [](const Tensor& c, nb::handle s, const Tensor& b) {
    return jnp::where(c, scalar_of(s), b);
  });
  t.def("arctan2", &jnp::arctan2);
  t.def("astype", [](const Tensor& a, const std::string& dtype) {
    return jnp::astype(a, dtype_named(dtype));
  });
  t.def("bitcast_convert_type", [](const Tensor& a, const std::string& dtype) {
    return lax::bitcast_convert_type(a, dtype_named(dtype));
  });
  t.def("argmax", &jnp::argmax, nb::arg("a"), nb::arg("axis").none());
  t.def("argmin", &jnp::argmin, nb::arg("a"), nb::arg("axis").none());
  t.def("clip", static_cast<Tensor (*)(const Tensor&, const Tensor&, const Tensor&)>(&jnp::clip));
  t.def("clip", [](const Tensor& a, nb::handle lo, nb::handle hi) {
    return jnp::clip(a, scalar_of(lo), scalar_of(hi));
  });
  t.def("cumsum", &jnp::cumsum, nb::arg("a"), nb::arg("axis").none());
  t.def("cumprod", &jnp::cumprod, nb::arg("a"), nb::arg("axis").none());
  t.def("sort", &jnp::sort, nb::arg("a"), nb::arg("axis").none(), nb::arg("descending"));
  t.def("argsort", &jnp::argsort, nb::arg("a"), nb::arg("axis").none(), nb::arg("descending"));
  t.def(
      "update_at",
      [](const Tensor& a, const Tensor& indices, const Tensor& values, const std::string& how,
         bool clip, bool unique_indices) {
        static const std::map<std::string, jnp::IndexUpdate> kinds = {
            {"set", jnp::IndexUpdate::kSet},
            {"add", jnp::IndexUpdate::kAdd},
            {"multiply", jnp::IndexUpdate::kMultiply},
            {"min", jnp::IndexUpdate::kMin},
            {"max", jnp::IndexUpdate::kMax}};
        const auto kind = kinds.find(how);
        if (kind == kinds.end()) throw InvalidArgument("update_at: unknown update '" + how + "'");
        return jnp::update_at(a, indices, values, kind->second, clip, unique_indices);
      },
      nb::arg("a"), nb::arg("indices"), nb::arg("values"), nb::arg("how"), nb::arg("clip"),
      nb::arg("unique_indices"));
  t.def(
      "searchsorted",
      [](const Tensor& a, const Tensor& v, const std::string& side) {
        return jnp::searchsorted(a, v, side);
      },
      nb::arg("a"), nb::arg("v"), nb::arg("side"));
  t.def("sort_key_val", &jnp::sort_key_val);
  t.def("conv_general_dilated",
        [](const Tensor& lhs, const Tensor& rhs, std::vector<int64_t> strides,
           std::vector<std::pair<int64_t, int64_t>> padding, std::vector<int64_t> lhs_dilation,
           std::vector<int64_t> rhs_dilation, const std::string& lhs_spec,
           const std::string& rhs_spec, const std::string& out_spec, int64_t groups) {
          return lax::conv_general_dilated(
              lhs, rhs,
              {.window_strides = std::move(strides),
               .padding = std::move(padding),
               .lhs_dilation = std::move(lhs_dilation),
               .rhs_dilation = std::move(rhs_dilation),
               .dimensions = lax::ConvDimensions{lhs_spec, rhs_spec, out_spec},
               .feature_group_count = groups});
        });
  t.def("padtype_to_pads", &lax::padtype_to_pads);
  t.def("cholesky", &jnp::linalg::cholesky);
  t.def("qr", &jnp::linalg::qr);
  t.def("triangular_solve", [](const Tensor& a, const Tensor& b, bool left_side, bool lower,
                               bool transpose_a, bool unit_diagonal) {
    return spmd::lax::linalg::triangular_solve(a, b,
                                               {left_side, lower, transpose_a, unit_diagonal});
  });
  t.def("softmax", static_cast<Tensor (*)(const Tensor&, const jnp::AxisList&)>(&jnp::softmax));
  t.def("einsum",
        static_cast<Tensor (*)(const std::string&, const Tensor&, const Tensor&)>(&jnp::einsum));
  t.def("reshape", &jnp::reshape);
  t.def("transpose", &jnp::transpose);
  t.def("broadcast_to", &jnp::broadcast_to);
  t.def("expand_dims", &jnp::expand_dims);
  t.def("squeeze", &jnp::squeeze);
  t.def("concatenate", &jnp::concatenate);
  t.def("stack", &jnp::stack);
  t.def("take", &jnp::take, nb::arg("a"), nb::arg("indices"), nb::arg("axis").none());
  t.def("take_clipped", &jnp::take_clipped, nb::arg("a"), nb::arg("indices"), nb::arg("axis"));
  t.def("swapaxes", &jnp::swapaxes);
  t.def("moveaxis", &jnp::moveaxis);
  t.def("slice", &jnp::slice);
  t.def("strided_slice", &jnp::strided_slice, nb::arg("a"), nb::arg("start"), nb::arg("step"),
        nb::arg("extent"));
  t.def("full", [](const Shape& shape, nb::handle value, const std::string& dtype) {
    return jnp::full(shape, scalar_of(value), dtype_named(dtype));
  });
  t.def("arange", [](int64_t stop, const std::string& dtype) {
    return jnp::arange(stop, dtype_named(dtype));
  });
}

void bind_traced_calls(nb::module_& m) {
  nb::class_<detail::VmapCall>(m, "_VmapCall")
      .def(nb::init<const std::vector<Tensor>&, const VmapAxes&, const std::vector<std::string>&>())
      .def("slices", &detail::VmapCall::slices)
      .def("results", &detail::VmapCall::results);
  m.def(
      "_shard_map",
      // out_specs: called once the body has returned, for one spec per result leaf.
      [](const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
         const std::function<std::vector<PartitionSpec>()>& out_specs,
         const std::vector<Tensor>& args,
         const std::function<std::vector<Tensor>(std::vector<Tensor>)>& body, bool check_vma,
         const std::vector<std::string>& axis_names) {
        std::vector<PartitionSpec> outs;
        return lax::detail::traced_shard_map(mesh, in_specs, outs, args,
                                             [&](const std::vector<Tensor>& blocks) {
                                               std::vector<Tensor> results = body(blocks);
                                               outs = out_specs();
                                               return results;
                                             },
                                             {.axis_names = axis_names, .check_vma = check_vma});
      },
      nb::arg("mesh"), nb::arg("in_specs"), nb::arg("out_specs"), nb::arg("args"), nb::arg("body"),
      nb::arg("check_vma") = true, nb::arg("axis_names") = std::vector<std::string>{});
  m.def("_in_shard_map_function", &lax::in_shard_map_function);
  m.def("_varying_axes", &lax::varying_axes_of);
  m.def("psum", [](const Tensor& x, const nb::handle& axes) {
    return lax::psum(x, axis_entry(axes, "psum", false));
  });
  m.def("pmean", [](const Tensor& x, const nb::handle& axes) {
    return lax::pmean(x, axis_entry(axes, "pmean", false));
  });
  m.def("pmax", [](const Tensor& x, const nb::handle& axes) {
    return lax::pmax(x, axis_entry(axes, "pmax", false));
  });
  m.def("pmin", [](const Tensor& x, const nb::handle& axes) {
    return lax::pmin(x, axis_entry(axes, "pmin", false));
  });
  m.def("all_gather", [](const Tensor& x, const nb::handle& axes, int axis, bool tiled) {
    return lax::all_gather(x, axis_entry(axes, "all_gather", false), axis, tiled);
  });
  m.def("psum_scatter", [](const Tensor& x, const nb::handle& axes, int dim, bool tiled) {
    return lax::psum_scatter(x, axis_entry(axes, "psum_scatter", false), dim, tiled);
  });
  m.def("ppermute",
        [](const Tensor& x, const nb::handle& axes, const std::vector<std::pair<int, int>>& perm) {
          return lax::ppermute(x, axis_entry(axes, "ppermute", false), perm);
        });
  m.def("axis_index", [](const nb::handle& axes) {
    return lax::axis_index(axis_entry(axes, "axis_index", false));
  });
  m.def("pcast", [](const Tensor& x, const nb::handle& axes, const std::string& to) {
    return lax::pcast(x, axis_entry(axes, "pcast", false), to);
  });
  m.def("with_sharding_constraint", &lax::with_sharding_constraint, nb::arg("x"),
        nb::arg("shardings"));
  m.def("stop_gradient", &lax::stop_gradient);
  // jax.custom_vjp (python/spmd/_custom_vjp.py): the rule is a Python callable, called with the
  // GIL while grad walks back. It is written for one call's shapes (not batchable): under vmap it
  // is traced on one slice and replayed over all.
  m.def("with_vjp", [](const std::string& name, const std::vector<Tensor>& inputs,
                       const Tensor& value, nb::callable rule) {
    // Copies of the rule (the operation's, vmap's) share one reference, released with the GIL.
    const std::shared_ptr<nb::callable> held(new nb::callable(std::move(rule)),
                                             [](nb::callable* r) {
                                               nb::gil_scoped_acquire gil;
                                               delete r;
                                             });
    return lax::custom_vjp(
        name, inputs, value,
        [held](const std::vector<Tensor>& in, const Tensor& g) {
          nb::gil_scoped_acquire gil;
          return nb::cast<std::vector<std::optional<Tensor>>>((*held)(in, g));
        },
        /*batchable=*/false);
  });
  m.def("copy_traced", &detail::distinct_copy);
  m.def("reshard_traced", static_cast<Tensor (*)(const Tensor&, const NamedSharding&)>(&reshard));
  m.def("vjp_of",
        static_cast<std::vector<Tensor> (*)(const Tensor&, const std::vector<Tensor>&)>(&vjp_of));
  m.def("vjp_with", static_cast<std::vector<Tensor> (*)(const Tensor&, const std::vector<Tensor>&,
                                                        const Tensor&)>(&vjp_of));
  // jax.eval_shape (python/spmd/_shapes.py): inputs as (shape, dtype name, sharding or None),
  // results as the same; fn is called once, with the GIL, on the parameters.
  using Spec = std::tuple<Shape, std::string, std::optional<NamedSharding>>;
  m.def("_eval_shape", [](const std::vector<Spec>& inputs, nb::callable fn) {
    std::vector<ShapeDtypeStruct> types;
    for (const auto& [shape, dtype, sharding] : inputs) {
      types.push_back({shape, dtype_named(dtype), sharding});
    }
    std::vector<Spec> out;
    const auto traced = [&fn](std::vector<Tensor>& params) {
      return nb::cast<std::vector<Tensor>>(fn(params));
    };
    for (const ShapeDtypeStruct& t : eval_shape(traced, types)) {
      out.emplace_back(t.shape, std::string(dtype_name(t.dtype)), t.sharding);
    }
    return out;
  });
}

}  // namespace

void bind_trace(nb::module_& m) {
  bind_tensor(m);
  bind_numpy(m);
  bind_traced_calls(m);
  bind_jit(m);
}

}  // namespace spmd::python
