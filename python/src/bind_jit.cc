// jit's core as _spmd._Jit, the base class of spmd.jit's functions (python/spmd/_jit.py), with
// its call's fast path in C++: a call of positional, committed Arrays and Python scalars (bool,
// int, float) whose dtypes, shapes and shardings an earlier call had runs without entering
// Python code. A scalar becomes what the slow path makes of it (_python_scalar): a rank-0 Array
// of the default dtype, replicated on the first Array's devices, kept per value and placement.
// Everything else — keyword and static arguments, pytrees, uncommitted arrays, scalars alone or
// out of their dtype's range, arrays spanning other processes beside scalars, a first call —
// goes to the Python method _call_slow, which also tells the fast path what it learned
// (_note_flat).
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "bindings.h"
#include "spmd/config.h"
#include "spmd/jit.h"
#include "spmd/sharding.h"

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
  PyJit(const std::string& name, bool contract_products)
      : core_(JitOptions{.name = name, .contract_products = contract_products}) {}

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

  // After a call of these positional arguments, committed arrays and (where `kinds` says 'b',
  // 'i' or 'f', else 'a') the Arrays the slow path made of Python scalars: calls of the same
  // kinds have `structure`, and the program that ran returns `out_tree` (None: its one output
  // as is).
  void note_flat(const std::vector<const Array*>& inputs, const std::string& structure,
                 nb::object out_tree, const std::string& kinds) {
    if (!kinds.empty() && kinds.size() != inputs.size()) return;
    // Not waiting: a thread tracing holds the cache and may be waiting for the GIL this one holds.
    const auto call = core_.cached(inputs, structure, /*wait=*/false);
    if (!call) return;  // run padded or resharded (the slow path's), or the cache was busy
    flat_[kinds.empty() ? std::string(inputs.size(), 'a') : kinds] = structure;
    out_trees_[detail::JitCore::program_of(*call)] = std::move(out_tree);
  }

  // The call's result, or nullopt when the slow path must take it (nothing has run).
  std::optional<nb::object> fast(const nb::args& args, const nb::kwargs& kwargs) {
    const size_t n = args.size();
    if (kwargs.size() != 0 || flat_.empty()) return std::nullopt;
    std::vector<const Array*> inputs(n);
    std::string kinds(n, 'a');
    const Array* first = nullptr;
    for (size_t i = 0; i < n; ++i) {
      PyObject* h = PyTuple_GET_ITEM(args.ptr(), static_cast<Py_ssize_t>(i));
      kinds[i] = scalar_kind(h);
      if (kinds[i] != 'a') continue;
      inputs[i] = committed_array(h);
      if (inputs[i] == nullptr) return std::nullopt;
      if (first == nullptr) first = inputs[i];
    }
    const auto structure = flat_.find(kinds);
    if (structure == flat_.end()) return std::nullopt;
    if (kinds.find_first_not_of('a') != std::string::npos) {
      Placement* at = first != nullptr ? placement_for(*first) : nullptr;
      if (at == nullptr) return std::nullopt;
      // At most a few hundred kept, as _python_scalar's cache; emptied before, never during, a
      // call (the inputs point into it).
      if (at->scalars.size() + n > 256) at->scalars.clear();
      for (size_t i = 0; i < n; ++i) {
        if (kinds[i] == 'a') continue;
        inputs[i] = at->scalar(kinds[i], PyTuple_GET_ITEM(args.ptr(), static_cast<Py_ssize_t>(i)));
        if (inputs[i] == nullptr) return std::nullopt;
      }
    }
    const auto call = core_.cached(inputs, structure->second, /*wait=*/false);  // as in note_flat
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

  // 'b', 'i' or 'f' for exactly a Python bool, int or float (not a subclass: NumPy's scalars
  // and IntEnums take the slow path, as they do in _prepare); 'a' otherwise.
  static char scalar_kind(PyObject* h) {
    if (PyBool_Check(h)) return 'b';
    if (PyLong_CheckExact(h)) return 'i';
    if (PyFloat_CheckExact(h)) return 'f';
    return 'a';
  }

  // Where a call's scalars go: replicated on its first Array's devices (_replicated_target), in
  // this process alone (a placement spanning other processes would check each new value across
  // them, which the slow path does), with the Arrays made so far, by kind and value bits.
  struct Placement {
    std::shared_ptr<const Sharding> target;
    bool x64 = false;
    std::map<std::pair<char, uint64_t>, Array> scalars;

    // The rank-0 Array of `h` (of `kind`), made once; null where the value does not fit the
    // default dtype (the slow path raises NumPy's OverflowError).
    const Array* scalar(char kind, PyObject* h) {
      uint64_t bits = 0;
      DType dtype = DType::kBool;
      if (kind == 'b') {
        bits = h == Py_True ? 1 : 0;
      } else if (kind == 'i') {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(h, &overflow);
        if (overflow != 0 || (v == -1 && PyErr_Occurred() != nullptr)) {
          PyErr_Clear();
          return nullptr;
        }
        if (!x64 &&
            (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())) {
          return nullptr;
        }
        bits = static_cast<uint64_t>(v);
        dtype = x64 ? DType::kInt64 : DType::kInt32;
      } else {
        const double v = PyFloat_AS_DOUBLE(h);
        std::memcpy(&bits, &v, sizeof(v));
        dtype = x64 ? DType::kFloat64 : DType::kFloat32;
      }
      const auto key = std::make_pair(kind, bits);
      if (const auto it = scalars.find(key); it != scalars.end()) return &it->second;
      HostArray host = HostArray::uninitialized(dtype, Shape{});
      std::byte* out = host.mutable_bytes().data();
      if (dtype == DType::kFloat32) {
        double v = 0;
        std::memcpy(&v, &bits, sizeof(v));
        const auto f = static_cast<float>(v);  // to nearest, as np.asarray(x, float32)
        std::memcpy(out, &f, sizeof(f));
      } else if (dtype == DType::kInt32) {
        const auto i = static_cast<int32_t>(static_cast<int64_t>(bits));
        std::memcpy(out, &i, sizeof(i));
      } else if (dtype == DType::kBool) {
        const bool b = bits != 0;
        std::memcpy(out, &b, sizeof(b));
      } else {
        std::memcpy(out, &bits, sizeof(bits));  // int64, float64: the value's own bits
      }
      Array made = [&] {
        nb::gil_scoped_release release;
        return device_put(host, *target);
      }();
      return &scalars.emplace(key, std::move(made)).first->second;
    }
  };

  // The placement for calls whose first Array is `first`: null where the slow path must place
  // (a sharding that is neither named nor one device's, or one spanning other processes).
  Placement* placement_for(const Array& first) {
    const Sharding& s = first.sharding();
    if (!s.is_fully_addressable()) return nullptr;
    const bool x64 = config::x64_enabled();
    const auto* named = dynamic_cast<const NamedSharding*>(&s);
    const auto* single = dynamic_cast<const SingleDeviceSharding*>(&s);
    if (named == nullptr && single == nullptr) return nullptr;
    for (Placement& p : placements_) {
      if (p.x64 != x64) continue;
      const auto* pn = dynamic_cast<const NamedSharding*>(p.target.get());
      if (named != nullptr && pn != nullptr && pn->mesh() == named->mesh()) return &p;
      if (single != nullptr && pn == nullptr &&
          p.target->device_assignment() == s.device_assignment()) {
        return &p;
      }
    }
    if (placements_.size() >= 8) placements_.clear();
    Placement p{.target = named != nullptr ? std::make_shared<const NamedSharding>(named->mesh(),
                                                                                   PartitionSpec())
                                           : first.sharding_ptr(),
                .x64 = x64};
    placements_.push_back(std::move(p));
    return &placements_.back();
  }

  detail::JitCore core_;
  // By the kinds of a call's arguments ('a' an Array; 'b', 'i', 'f' a Python scalar): the
  // structure the slow path gave such a call.
  std::unordered_map<std::string, std::string> flat_;
  std::vector<Placement> placements_;
  std::unordered_map<const void*, nb::object> out_trees_;  // per compiled program
};

}  // namespace

namespace {

// jax.disable_jit: while set, every call takes the slow path, where a function jitted by the
// user runs as plain Python (_jit.py).
std::atomic<bool> jit_disabled{
    false};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

}  // namespace

void bind_jit(nb::module_& m) {
  m.def("_jit_disabled", [] { return jit_disabled.load(std::memory_order_relaxed); });
  m.def("_set_jit_disabled",
        [](bool disabled) { jit_disabled.store(disabled, std::memory_order_relaxed); });
  nb::class_<Lowered>(m, "Lowered")
      .def("as_text", &Lowered::as_text)
      .def("global_text", &Lowered::global_text);
  nb::class_<PyJit>(m, "_Jit")
      .def(nb::init<const std::string&, bool>(), nb::arg("name"),
           nb::arg("contract_products") = true)
      .def("__call__",
           [](nb::pointer_and_handle<PyJit> self, const nb::args& args, const nb::kwargs& kwargs) {
             if (!jit_disabled.load(std::memory_order_relaxed)) {
               if (auto out = self.p->fast(args, kwargs)) return std::move(*out);
             }
             return self.h.attr("_call_slow")(*args, **kwargs);
           })
      .def("_core_call", &PyJit::call)
      .def("_core_lower", &PyJit::lower)
      .def("_note_flat", &PyJit::note_flat, nb::arg("inputs"), nb::arg("structure"),
           nb::arg("out_tree").none(), nb::arg("kinds") = "");
}

}  // namespace spmd::python
