// Run under spmdrun: spmd::jit programs over process-spanning arrays on a 2-D mesh
// (processes × local devices, axes "a" and "b"), each under row, column, grid, replicated and
// tuple-axis input shardings, checked against the same function on replicated inputs (every
// device computing the whole arrays, no communication); then the communication the
// partitioner chose, read from as_text(). Inputs hold small integers (also as floats), so that
// every sum is exact in any order and results compare exactly. Prints "ok …" per check, or
// "error …" and exits 1.
//
//   jit_probe                    every check
//   jit_probe mismatch-shape     process 1 passes another input shape: CollectiveMismatch
//                                everywhere, naming the first differing line
//   jit_probe mismatch-branch    process 1's function branches on process_index()
//   jit_probe trace-error        process 1's trace throws: everyone raises at once, naming it
#include <spmd/spmd.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::DType;
using spmd::HostArray;
using spmd::NamedSharding;
using spmd::None;
using spmd::P;
using spmd::Shape;
using spmd::Tensor;

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok" : "error", what.c_str());
  if (!ok) ++failures;
}

// `h` (float64) as float32, int32 or float64.
HostArray convert(const HostArray& h, DType dtype) {
  if (dtype == DType::kFloat64) return h;
  HostArray out = HostArray::zeros(dtype, h.shape());
  const auto in = h.data<double>();
  for (size_t i = 0; i < in.size(); ++i) {
    if (dtype == DType::kFloat32) {
      out.mutable_data<float>()[i] = static_cast<float>(in[i]);
    } else {
      out.mutable_data<int32_t>()[i] = static_cast<int32_t>(in[i]);
    }
  }
  return out;
}

// Any of the dtypes a case returns, as float64.
std::vector<double> widen(const HostArray& h) {
  std::vector<double> out;
  if (h.dtype() == DType::kFloat32) {
    for (float v : h.data<float>()) out.push_back(v);
  } else if (h.dtype() == DType::kInt32) {
    for (int32_t v : h.data<int32_t>()) out.push_back(v);
  } else {
    for (double v : h.data<double>()) out.push_back(v);
  }
  return out;
}

// Small integers from a formula: exact in float32 sums.
Array make(const Shape& shape, DType dtype, const NamedSharding& sharding, int seed) {
  return spmd::make_array_from_callback(shape, sharding, [&](const spmd::Index& index) {
    Shape extents;
    for (const auto& s : index) extents.push_back(s.stop - s.start);
    HostArray h = HostArray::zeros(DType::kFloat64, extents);
    auto v = h.mutable_data<double>();
    int64_t n = static_cast<int64_t>(v.size());
    for (int64_t lin = 0; lin < n; ++lin) {
      int64_t rest = lin, global = 0, stride = 1;
      for (size_t d = shape.size(); d-- > 0;) {
        const int64_t i = rest % extents[d] + index[d].start;
        rest /= extents[d];
        global += i * stride;
        stride *= shape[d];
      }
      v[lin] = static_cast<double>((global * 7 + seed) % 11 - 5);
    }
    return convert(h, dtype);
  });
}

struct Case {
  std::string name;
  std::vector<Shape> shapes;
  DType dtype;
  double tolerance;  // relative; 0: exact
  std::function<Tensor(const std::vector<Tensor>&)> fn;
};

constexpr int64_t N = 24;  // divisible by every mesh axis product of the layouts run

std::vector<Case> cases(const spmd::Mesh& mesh) {
  const NamedSharding by_columns(mesh, P(None, "a"));
  return {
      {"elementwise",
       {{N, N}, {N, N}},
       DType::kFloat32,
       1e-6,
       [](const std::vector<Tensor>& t) {
         return jnp::tanh(t[0] * t[1] + 1.0f) - jnp::relu(-t[0]) +
                jnp::where(t[0] > 0, t[0], t[1] * 2);
       }},
      {"layer",
       {{N, N}, {N, N}, {N}},
       DType::kFloat32,
       1e-6,
       [](const std::vector<Tensor>& t) {
         return jnp::tanh(jnp::matmul(t[0], t[1]) * 0.01f + t[2]);
       }},
      {"sums",
       {{N, N}},
       DType::kFloat32,
       0,
       [](const std::vector<Tensor>& t) {
         return jnp::sum(t[0], {0}) + jnp::reshape(jnp::sum(t[0], {1}, true), {N}) + jnp::sum(t[0]);
       }},
      {"max-min-mean",
       {{N, N}},
       DType::kFloat32,
       0,
       [](const std::vector<Tensor>& t) {
         return jnp::max(t[0], {1}) - jnp::min(t[0], {0}) + jnp::mean(t[0]) + jnp::mean(t[0], {1});
       }},
      {"transpose-reshape",
       {{N, N}, {N, N}},
       DType::kFloat32,
       0,
       [](const std::vector<Tensor>& t) {
         return jnp::transpose(t[0]) + jnp::reshape(jnp::reshape(t[1], {4, 6, N}), {N, N}) +
                jnp::reshape(jnp::reshape(t[0], {N * N}), {N, N});
       }},
      {"softmax",
       {{N, N}},
       DType::kFloat32,
       1e-5,
       [](const std::vector<Tensor>& t) {
         return jnp::softmax(t[0] * 0.5f) + jnp::logsumexp(t[0], {0});
       }},
      {"argmax",
       {{N, N}},
       DType::kFloat32,
       0,
       [](const std::vector<Tensor>& t) { return jnp::argmax(t[0], 1) + jnp::argmax(t[0], 0); }},
      {"slice-concatenate",
       {{N, N}, {N, N}},
       DType::kFloat32,
       0,
       [](const std::vector<Tensor>& t) {
         return jnp::concatenate(
             {jnp::slice(t[0], {0, 0}, {N / 2, N}), jnp::slice(t[1], {N / 2, 0}, {N, N})}, 0);
       }},
      {"integers",
       {{N, N}, {N, N}},
       DType::kInt32,
       0,
       [](const std::vector<Tensor>& t) {
         return jnp::sum((t[0] + 3) * t[1] - t[0], {1}) + jnp::sum(jnp::matmul(t[0], t[1]), {0});
       }},
      {"more-unary",
       {{N, N}, {N, N}},
       DType::kFloat32,
       1e-6,
       [](const std::vector<Tensor>& t) {
         const Tensor a = jnp::abs(t[0]);
         return jnp::sqrt(a + 1.0f) + jnp::rsqrt(t[0] * t[0] + 1.0f) + jnp::log(a + 1.0f) +
                jnp::sign(t[1]) * jnp::power(t[0], 2) + jnp::minimum(t[0], t[1]);
       }},
      {"compare-astype",
       {{N, N}, {N, N}},
       DType::kFloat32,
       0,
       [](const std::vector<Tensor>& t) {
         return jnp::astype(jnp::greater_equal(t[0], t[1]), DType::kFloat32) +
                jnp::astype(jnp::astype(t[0] * 0.5f, DType::kInt32), DType::kFloat32) +
                jnp::where(jnp::less(t[0], t[1]), t[0], t[1]) +
                jnp::astype(jnp::equal(t[0], t[1]), DType::kFloat32);
       }},
      {"creation-shapes",
       {{N, N}},
       DType::kFloat32,
       0,
       [](const std::vector<Tensor>& t) {
         const Tensor row = jnp::astype(jnp::arange(N), DType::kFloat32);
         return jnp::squeeze(jnp::expand_dims(t[0], 0), {0}) + jnp::broadcast_to(row, {N, N}) +
                jnp::ones({N, N}) * 2.0f + jnp::full({N}, 3.0f) + jnp::zeros({N, 1}) +
                jnp::reshape(jnp::dot(t[0], jnp::ones({N})), {N, 1});
       }},
      {"einsum",
       {{N, N}, {N, N}},
       DType::kFloat32,
       0,
       [](const std::vector<Tensor>& t) {
         return jnp::einsum("ij,kj->ik", t[0], t[1]) + jnp::einsum("ij->j", t[0]);
       }},
      {"constraint",
       {{N, N}, {N, N}},
       DType::kFloat32,
       0,
       [by_columns](const std::vector<Tensor>& t) {
         return spmd::lax::with_sharding_constraint(t[0] * 2.0f, by_columns) + t[1];
       }},
  };
}

// The spec of an input of rank `rank` under the named layout.
P spec_for(const std::string& layout, size_t rank) {
  if (layout == "replicated") return P();
  if (rank == 1) return layout == "columns" || layout == "grid" ? P("b") : P();
  if (layout == "rows") return P("a");
  if (layout == "columns") return P(None, "b");
  if (layout == "grid") return P("a", "b");
  return P(spmd::Axes{"a", "b"});  // tuple
}

bool close(const HostArray& got, const HostArray& want, double tolerance) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) return false;
  const std::vector<double> g = widen(got), w = widen(want);
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::abs(g[i] - w[i]) > tolerance * (1 + std::abs(w[i]))) return false;
  }
  return true;
}

void run_cases(const spmd::Mesh& mesh) {
  const NamedSharding replicated(mesh, P());
  for (const Case& c : cases(mesh)) {
    auto fn = spmd::jit(c.fn, {.name = c.name});
    std::vector<Array> whole;
    for (size_t i = 0; i < c.shapes.size(); ++i) {
      whole.push_back(make(c.shapes[i], c.dtype, replicated, static_cast<int>(i)));
    }
    const HostArray want = spmd::multihost::process_allgather(fn(whole));
    for (const std::string layout : {"rows", "columns", "grid", "replicated", "tuple"}) {
      std::vector<Array> inputs;
      for (size_t i = 0; i < c.shapes.size(); ++i) {
        const NamedSharding sharding(mesh, spec_for(layout, c.shapes[i].size()));
        inputs.push_back(make(c.shapes[i], c.dtype, sharding, static_cast<int>(i)));
      }
      const HostArray got = spmd::multihost::process_allgather(fn(inputs));
      check(close(got, want, c.tolerance),
            c.name + " under " + layout + " equals the whole-array result");
    }
  }
}

// The lines of as_text() that communicate.
std::vector<std::string> collectives(const std::string& text) {
  static const std::regex communicating(
      R"(= (psum|pmax|pmin|all_gather|psum_scatter|all_to_all)\[)");
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = text.substr(start, end - start);
    if (std::regex_search(line, communicating)) out.push_back(line);
  }
  return out;
}

bool one_psum_of(const std::vector<std::string>& lines, int64_t bytes) {
  return lines.size() == 1 && lines[0].find("= psum[a]") != std::string::npos &&
         lines[0].find("# " + std::to_string(bytes) + " B") != std::string::npos;
}

void check_communication(const spmd::Mesh& mesh) {
  const Array x_rows = make({N, N}, DType::kFloat32, NamedSharding(mesh, P("a")), 0);
  const Array w_cols = make({N, N}, DType::kFloat32, NamedSharding(mesh, P(None, "b")), 1);
  const Array x_cols = make({N, N}, DType::kFloat32, NamedSharding(mesh, P(None, "a")), 0);
  const Array w_rows = make({N, N}, DType::kFloat32, NamedSharding(mesh, P("a")), 1);
  auto matmul = spmd::jit([](const Tensor& x, const Tensor& w) { return jnp::matmul(x, w); },
                          {.name = "matmul"});
  const std::string free = matmul.lower(x_rows, w_cols).as_text();
  check(collectives(free).empty(), "rows x columns matmul has no collective:\n" + free);
  const std::string contracting = matmul.lower(x_cols, w_rows).as_text();
  check(one_psum_of(collectives(contracting), N * N * 4),
        "a contracting-split matmul has exactly one psum of the output's size:\n" + contracting);
  auto scattered = spmd::jit([](const Tensor& x, const Tensor& w) { return jnp::matmul(x, w); },
                             {.out_shardings = {NamedSharding(mesh, P("a"))}, .name = "scattered"});
  const std::string scatter = scattered.lower(x_cols, w_rows).as_text();
  const auto sc = collectives(scatter);
  check(sc.size() == 1 && sc[0].find("= psum_scatter[a] dim=0") != std::string::npos,
        "a contracting-split matmul wanted split by rows ends in one psum_scatter:\n" + scatter);
  check(spmd::multihost::process_allgather(scattered(x_cols, w_rows)) ==
            spmd::multihost::process_allgather(matmul(x_rows, w_cols)),
        "the scattered product equals the unscattered one");
  auto total = spmd::jit([](const Tensor& x) { return jnp::sum(x, {0}); }, {.name = "sum0"});
  const std::string sum = total.lower(x_rows).as_text();
  check(one_psum_of(collectives(sum), N * 4),
        "a sum over a split dimension has one reduction of the result's size:\n" + sum);
  check(spmd::multihost::process_allgather(matmul(x_rows, w_cols)) ==
            spmd::multihost::process_allgather(matmul(x_cols, w_rows)),
        "both matmuls give the same product");
}

// Process 1 traces another program; every process must get CollectiveMismatch.
void check_mismatch(const spmd::Mesh& mesh, bool shape) {
  const int64_t rows = shape && spmd::process_index() == 1 ? N / 2 : N;
  const Array x = make({rows, N}, DType::kFloat32, NamedSharding(mesh, P()), 0);
  auto fn = spmd::jit(
      [shape](const Tensor& t) {
        Tensor y = jnp::exp(t);
        if (!shape && spmd::process_index() == 1) y = y * 2.0f;
        return jnp::sum(y, {0});
      },
      {.name = "mismatched"});
  try {
    fn(x);
    check(false, "a program differing on process 1 raises CollectiveMismatch");
  } catch (const spmd::CollectiveMismatch& e) {
    const std::string what = e.what();
    check(what.find("process 0 and process 1 traced different programs") != std::string::npos &&
              what.find("first difference") != std::string::npos,
          "a program differing on process 1 raises CollectiveMismatch: " + what);
  }
}

// Process 1's trace throws (a reshape that does not fit, on that process only): process 1 gets
// its own error, every other process at once an error naming process 1 and quoting it — not a
// wait in the program check until the deadline.
void check_trace_error(const spmd::Mesh& mesh) {
  const Array x = make({N, N}, DType::kFloat32, NamedSharding(mesh, P()), 0);
  auto fn = spmd::jit(
      [](const Tensor& t) {
        return spmd::process_index() == 1 ? jnp::reshape(t, {N + 1, -1}) : jnp::exp(t);
      },
      {.name = "fails_on_one"});
  try {
    fn(x);
    check(false, "a trace failing on process 1 raises");
  } catch (const spmd::InvalidArgument& e) {
    const std::string what = e.what();
    const bool named = spmd::process_index() == 1
                           ? what.find("reshape") != std::string::npos
                           : what.find("process 1 failed to trace") != std::string::npos &&
                                 what.find("reshape") != std::string::npos;
    check(named, "a trace failing on process 1 raises everywhere: " + what);
  }
}

}  // namespace

// Key i of a key array split over the processes (outside jit) is the row every process gets
// alike, equal to the same key indexed where it is whole (one device).
void check_key_rows(const spmd::Mesh& mesh) {
  namespace random = spmd::random;
  const int64_t n = 2 * spmd::process_count();
  const random::Key whole = random::split(random::key(7), n);
  const HostArray data = random::key_data(whole).to_host();
  const random::Key split =
      random::wrap_key_data(spmd::device_put(data, NamedSharding(mesh, P("a", None))));
  for (int64_t i = -1; i < n; ++i) {
    const int64_t row = i < 0 ? n - 1 : i;
    HostArray want = data.slice({{row, row + 1}, {0, 2}});
    want.reshape({2});
    const HostArray got = spmd::multihost::process_allgather(random::key_data(split[i]));
    check(got == want, "key " + std::to_string(i) + " of keys split over the processes");
  }
}

int main(int argc, char** argv) {
  spmd::distributed::initialize();
  const std::string mode = argc > 1 ? argv[1] : "";
  const spmd::Mesh mesh(spmd::devices(), {spmd::process_count(), spmd::local_device_count()},
                        {"a", "b"});
  try {
    if (mode == "mismatch-shape" || mode == "mismatch-branch") {
      check_mismatch(mesh, mode == "mismatch-shape");
    } else if (mode == "trace-error") {
      check_trace_error(mesh);
    } else {
      run_cases(mesh);
      check_communication(mesh);
      check_key_rows(mesh);
    }
  } catch (const std::exception& e) {
    check(false, std::string("unexpected exception: ") + e.what());
  }
  spmd::distributed::shutdown();
  return failures == 0 ? 0 : 1;
}
