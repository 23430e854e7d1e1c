// jit's core as _spmd._Jit, the base class of spmd.jit's functions (python/spmd/_jit.py), with
// its call's fast path in C++: a call of positional, committed Arrays whose dtypes, shapes and
// shardings an earlier call had runs without entering Python code. Everything else — keyword
// and static arguments, pytrees, uncommitted arrays, a first call — goes to the Python method
// _call_slow, which also tells the fast path what it learned (_note_flat).
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <optional>
#include <unordered_map>

#include "bindings.h"
#include "spmd/jit.h"

namespace spmd::python {
namespace {

// A Python function over a list of Tensors as jit's trace: called with the GIL held.
using PyTrace = std::function<std::vector<Tensor>(std::vector<Tensor>)>;

// jit's trace callback over `trace`, taking the GIL back while Python runs.
detail::JitCore::TraceFn with_gil(const PyTrace& trace) {
  return [&trace](std::vector<Tensor>& params, std::vector<std::string>&) {
    nb::gil_scoped_acquire acquire;
    return trace(params);
  };
}

class PyJit {
 public:
  explicit PyJit(const std::string& name) : core_(JitOptions{.name = name}) {}

  std::vector<Array> call(const std::vector<const Array*>& inputs, const std::string& structure,
                          const PyTrace& trace) {
    const std::vector<int> arguments(inputs.size(), 1);
    std::vector<std::string> keys;
    nb::gil_scoped_release release;
    return core_.call(inputs, arguments, structure, with_gil(trace), keys);
  }

  Lowered lower(const std::vector<const Array*>& inputs, const std::string& structure,
                const PyTrace& trace) {
    const std::vector<int> arguments(inputs.size(), 1);
    nb::gil_scoped_release release;
    return core_.lower(inputs, arguments, structure, with_gil(trace));
  }

  // After a call of these positional, committed arrays: calls of as many arrays have
  // `structure`, and the program that ran returns `out_tree` (None: its one output as is).
  void note_flat(const std::vector<const Array*>& inputs, const std::string& structure,
                 nb::object out_tree) {
    // Not waiting: a thread tracing holds the cache and may be waiting for the GIL this one holds.
    const auto call = core_.cached(inputs, structure, /*wait=*/false);
    if (!call) return;  // run padded or resharded (the slow path's), or the cache was busy
    if (flat_.size() <= inputs.size()) flat_.resize(inputs.size() + 1);
    flat_[inputs.size()] = structure;
    out_trees_[detail::JitCore::program_of(*call)] = std::move(out_tree);
  }

  // The call's result, or nullopt when the slow path must take it (nothing has run).
  std::optional<nb::object> fast(const nb::args& args, const nb::kwargs& kwargs) {
    const size_t n = args.size();
    if (kwargs.size() != 0 || n >= flat_.size() || flat_[n].empty()) return std::nullopt;
    std::vector<const Array*> inputs(n);
    for (size_t i = 0; i < n; ++i) {
      inputs[i] = committed_array(PyTuple_GET_ITEM(args.ptr(), static_cast<Py_ssize_t>(i)));
      if (inputs[i] == nullptr) return std::nullopt;
    }
    const auto call = core_.cached(inputs, flat_[n], /*wait=*/false);  // as in note_flat
    if (!call) return std::nullopt;
    const auto found = out_trees_.find(detail::JitCore::program_of(*call));
    if (found == out_trees_.end()) return std::nullopt;
    const nb::object tree = found->second;  // another thread may add entries while this one runs
    std::vector<Array> outs;
    {
      std::vector<std::string> keys;
      nb::gil_scoped_release release;
      outs = core_.run(*call, inputs, keys);
    }
    if (tree.is_none() && outs.size() == 1) return nb::cast(std::move(outs.front()));
    nb::list leaves;
    for (Array& a : outs) leaves.append(nb::cast(std::move(a)));
    return unflatten()(tree, leaves);
  }

 private:
  // The Array `h` is, when it is exactly an spmd.Array and committed (JAX's placement:
  // python/spmd/_core.py marks uncommitted arrays with _committed = False); null otherwise.
  static const Array* committed_array(PyObject* h) {
    static PyTypeObject* const array_type =
        reinterpret_cast<PyTypeObject*>(nb::type<Array>().ptr());
    static PyObject* const name = PyUnicode_InternFromString("_committed");
    if (Py_TYPE(h) != array_type) return nullptr;
    PyObject* committed = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
    const int found = PyObject_GetOptionalAttr(h, name, &committed);
#else
    const int found = _PyObject_LookupAttr(h, name, &committed);
#endif
    if (found < 0) PyErr_Clear();
    if (found != 0) {
      const bool yes = committed != nullptr && PyObject_IsTrue(committed) == 1;
      Py_XDECREF(committed);
      if (!yes) return nullptr;
    }
    return nb::inst_ptr<Array>(h);
  }

  // Kept for the process's life: a static nb::object would be released after Python is gone.
  static nb::handle unflatten() {
    static const nb::handle f =
        nb::object(nb::module_::import_("spmd.tree_util").attr("tree_unflatten")).release();
    return f;
  }

  detail::JitCore core_;
  std::vector<std::string> flat_;  // per argument count: the structure ("": not seen yet)
  std::unordered_map<const void*, nb::object> out_trees_;  // per compiled program
};

}  // namespace

void bind_jit(nb::module_& m) {
  nb::class_<Lowered>(m, "Lowered")
      .def("as_text", &Lowered::as_text)
      .def("global_text", &Lowered::global_text);
  nb::class_<PyJit>(m, "_Jit")
      .def(nb::init<const std::string&>())
      .def("__call__",
           [](nb::pointer_and_handle<PyJit> self, const nb::args& args, const nb::kwargs& kwargs) {
             if (auto out = self.p->fast(args, kwargs)) return std::move(*out);
             return self.h.attr("_call_slow")(*args, **kwargs);
           })
      .def("_core_call", &PyJit::call)
      .def("_core_lower", &PyJit::lower)
      .def("_note_flat", &PyJit::note_flat, nb::arg("inputs"), nb::arg("structure"),
           nb::arg("out_tree").none());
}

}  // namespace spmd::python
