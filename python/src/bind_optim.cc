// spmd.optax's engine: spmd::optim's gradient transformations (optim.h) over Python dicts of
// Tensors or Arrays, which python/spmd/optax.py builds from any pytree.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "spmd/optim.h"

namespace spmd::python {
namespace {

// A Python dict (nested) of T as a Tree, and back.
template <class T>
Tree<T> tree_of(nb::handle h) {
  if (!nb::isinstance<nb::dict>(h)) return Tree<T>(nb::cast<T>(h));
  Tree<T> t;
  for (auto [key, value] : nb::borrow<nb::dict>(h)) {
    t[nb::cast<std::string>(key)] = tree_of<T>(value);
  }
  return t;
}

template <class T>
nb::object object_of(const Tree<T>& t) {
  if (t.is_leaf()) return nb::cast(t.leaf());
  nb::dict d;
  for (const auto& [key, sub] : t.entries()) d[key.c_str()] = object_of(sub);
  return d;
}

}  // namespace

void bind_optim(nb::module_& m) {
  nb::module_ o = m.def_submodule("optim", "spmd::optim over dicts");
  nb::class_<optim::GradientTransformation>(o, "GradientTransformation")
      .def("init_traced",
           [](const optim::GradientTransformation& t, const nb::dict& params) {
             return object_of(t.init(tree_of<Tensor>(params)));
           })
      .def("init_arrays",
           [](const optim::GradientTransformation& t, const nb::dict& params) {
             const Tree<Array> p = tree_of<Array>(params);
             Tree<Array> state;
             {
               nb::gil_scoped_release release;
               state = t.init(p);
             }
             return object_of(state);
           })
      .def("update", [](const optim::GradientTransformation& t, const nb::dict& grads,
                        const nb::dict& state, const nb::dict& params) {
        auto [updates, next] =
            t.update(tree_of<Tensor>(grads), tree_of<Tensor>(state), tree_of<Tensor>(params));
        return std::pair{object_of(updates), object_of(next)};
      });
  o.def("sgd", &optim::sgd, nb::arg("learning_rate"), nb::arg("momentum") = 0.0,
        nb::arg("nesterov") = false);
  o.def("adam", &optim::adam, nb::arg("learning_rate"), nb::arg("b1") = 0.9, nb::arg("b2") = 0.999,
        nb::arg("eps") = 1e-8);
  o.def("adamw", &optim::adamw, nb::arg("learning_rate"), nb::arg("b1") = 0.9,
        nb::arg("b2") = 0.999, nb::arg("eps") = 1e-8, nb::arg("weight_decay") = 1e-4);
}

}  // namespace spmd::python
