// spmd::jit's cache and call path: the signature of a call, tracing a new one (each parameter and
// output holding its sharding), partitioning it, checking that every process traced the same
// program, and running its executable (executable.h).
#include "spmd/jit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>

#include "jit/executable.h"
#include "jit/ops/parameter.h"
#include "jit/partition.h"
#include "jit/same_program.h"
#include "jit/sharding_in_types.h"
#include "jit/trace.h"
#include "kernels/blas_core.h"
#include "spmd/config.h"
#include "spmd/error.h"
#include "spmd/mesh_context.h"
#include "spmd/runtime.h"

namespace spmd {
namespace detail {
namespace {

struct Compiled {
  compiler::Program program;
  std::vector<std::string> keys;
  std::unique_ptr<const compiler::Executable> executable;
};

// Whether two shardings lay every array out alike, decided without building index maps: the same
// object, or equal NamedShardings or SingleDeviceShardings.
bool same_sharding(const Sharding& a, const Sharding& b) {
  if (&a == &b) return true;
  if (const auto* x = dynamic_cast<const NamedSharding*>(&a)) {
    const auto* y = dynamic_cast<const NamedSharding*>(&b);
    return y != nullptr && x->spec() == y->spec() && x->mesh() == y->mesh();
  }
  if (dynamic_cast<const SingleDeviceSharding*>(&a) != nullptr) {
    return dynamic_cast<const SingleDeviceSharding*>(&b) != nullptr &&
           a.device_assignment() == b.device_assignment();
  }
  return false;
}

// "[0, 1, 2, 3]", or the first 8 ids and a count.
std::string device_ids(const Mesh& mesh) {
  std::vector<int> ids;
  for (const Device& d : mesh.devices()) {
    if (ids.size() == 8) break;
    ids.push_back(d.id());
  }
  const size_t more = mesh.devices().size() - ids.size();
  return fmt::format("[{}{}]", fmt::join(ids, ", "),
                     more > 0 ? fmt::format(", … {} more", more) : std::string());
}

// The sharding each flat input is laid out as.
std::vector<NamedSharding> input_shardings(std::span<const Array* const> inputs,
                                           std::span<const int> arguments,
                                           const JitOptions& options) {
  std::vector<NamedSharding> out;
  size_t flat = 0;
  for (size_t arg = 0; arg < arguments.size(); ++arg) {
    const bool given = arg < options.in_shardings.size() && options.in_shardings[arg];
    for (int i = 0; i < arguments[arg]; ++i, ++flat) {
      if (given) {
        out.push_back(*options.in_shardings[arg]);
        continue;
      }
      const Sharding& own = inputs[flat]->sharding();
      if (const auto* single = dynamic_cast<const SingleDeviceSharding*>(&own)) {
        out.emplace_back(Mesh(single->device_assignment(), {"device"}), P());
        continue;
      }
      const auto* named = dynamic_cast<const NamedSharding*>(&own);
      if (named == nullptr) {
        throw InvalidArgument(fmt::format(
            "jit({}): argument {} is laid out as {}, not a NamedSharding; give it in_shardings",
            options.name, arg, inputs[flat]->sharding().to_string()));
      }
      out.push_back(*named);
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!(out[i].mesh() == out.front().mesh())) {
      throw InvalidArgument(fmt::format(
          "jit({}): inputs are laid out on different meshes: input 0 on {} (devices {}) and input "
          "{} on {} (devices {}); device_put one onto the other's mesh",
          options.name, out.front().to_string(), device_ids(out.front().mesh()), i,
          out[i].to_string(), device_ids(out[i].mesh())));
    }
  }
  if (out.empty())
    throw InvalidArgument(fmt::format("jit({}): a jitted function needs an input", options.name));
  return out;
}

// The signature within one mesh (the cache is per mesh, compared by value, so that no call prints
// a mesh of thousands of devices).
std::string signature(std::span<const Array* const> inputs,
                      const std::vector<NamedSharding>& shardings, const std::string& structure) {
  std::string s = structure + (config::x64_enabled() ? "|x64" : "");
  for (size_t i = 0; i < inputs.size(); ++i) {
    s += fmt::format("|{}[{}]{}", dtype_name(inputs[i]->dtype()),
                     fmt::join(inputs[i]->shape(), ","), shardings[i].spec().to_string());
  }
  return s;
}

// The sharding out_shardings asks of output `i` (of rank `rank`), null where it asks none.
std::shared_ptr<const NamedSharding> out_sharding(const JitOptions& options, const Mesh& mesh,
                                                  size_t i, size_t rank) {
  if (i >= options.out_shardings.size() || !options.out_shardings[i]) return nullptr;
  if (!(options.out_shardings[i]->mesh() == mesh)) {
    throw InvalidArgument(fmt::format(
        "jit({}): out_shardings[{}] is on another mesh than the inputs", options.name, i));
  }
  compiler::layout_of(*options.out_shardings[i], rank);  // checks the rank
  return std::make_shared<const NamedSharding>(*options.out_shardings[i]);
}

// The traced program: each parameter holds its input's sharding, each output the one
// out_shardings asks of it.
compiler::Program trace_program(std::span<const Array* const> inputs,
                                const std::vector<NamedSharding>& shardings,
                                const JitCore::TraceFn& trace_fn, const JitOptions& options,
                                std::vector<std::string>& keys) {
  const Mesh& mesh = shardings.front().mesh();
  auto trace = std::make_shared<compiler::Trace>(shardings.front().mesh());
  std::vector<Tensor> params;
  {
    const compiler::TraceScope scope(trace);
    // As JAX's jit, the inputs' mesh is in scope while tracing unless the caller set one.
    std::optional<MeshScope> mesh_scope;
    if (!get_mesh()) mesh_scope.emplace(shardings.front().mesh());
    for (size_t i = 0; i < inputs.size(); ++i) {
      params.push_back(trace->apply(
          compiler::make_operation<compiler::ParameterOp>(
              static_cast<int>(i), compiler::ValueType{inputs[i]->dtype(), inputs[i]->shape()},
              std::make_shared<const NamedSharding>(shardings[i])),
          {}));
    }
    trace->program().parameters = static_cast<int>(inputs.size());
    const std::vector<Tensor> outs = trace_fn(params, keys);
    for (size_t i = 0; i < outs.size(); ++i) {
      compiler::trace_of("jit: the function's result", {&outs[i]});
      trace->program().outputs.push_back(
          {outs[i].value(), out_sharding(options, mesh, i, outs[i].shape().size())});
    }
  }
  return std::move(trace->program());
}

void check_constraints(const compiler::Program& program, const Mesh& mesh,
                       const std::string& name) {
  for (const compiler::Op& op : program.ops) {
    const NamedSharding* sharding = op.operation->sharding();
    if (sharding != nullptr && !(sharding->mesh() == mesh)) {
      throw InvalidArgument(fmt::format("jit({}): {}({}) names another mesh than the jit's inputs",
                                        name, op.operation->name(), sharding->to_string()));
    }
  }
}

// Whether this process has the lowest index of the processes on its host: what all of them would
// say alike (the host's processor, its environment) it says for them.
bool first_on_this_host() {
  const std::vector<Device> local = local_devices();
  if (local.empty()) return true;
  const int me = process_index();
  int first = me;
  for (const Device& d : devices()) {
    if (d.host_id() == local.front().host_id()) first = std::min(first, d.process_index());
  }
  return first == me;
}

// Once per host, at its first process's first compile: OpenBLAS running its AVX2 kernels where
// AVX-512 ones would serve (kernels/blas_core.h) halves every product's speed, so it is said, not
// left. Every process of a host loads the same OpenBLAS in the same environment, so one line
// speaks for them all (a job of 4 processes printed it 4 times). On stderr, where it cannot mix
// with a program's own output.
void warn_about_blas_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!first_on_this_host()) return;
    if (const std::string warning = kernels::blas_core_warning(); !warning.empty()) {
      fmt::print(stderr, "spmd warning: {} (said once for every process on this host)\n", warning);
    }
  });
}

std::shared_ptr<Compiled> compile(std::span<const Array* const> inputs,
                                  const std::vector<NamedSharding>& shardings,
                                  const JitCore::TraceFn& trace_fn, const JitOptions& options) {
  warn_about_blas_kernels();
  const Mesh& mesh = shardings.front().mesh();
  auto c = std::make_shared<Compiled>();
  std::optional<compiler::LocalProgram> local;
  try {
    c->program = trace_program(inputs, shardings, trace_fn, options, c->keys);
    check_constraints(c->program, mesh, options.name);
    local.emplace(compiler::partition(c->program, mesh, options.name, options.contract_products));
  } catch (const std::exception& e) {
    // The other processes are about to wait for this one in the program check.
    compiler::report_failed_trace(mesh, options.name, e.what());
    throw;
  }
  compiler::check_same_program(c->program, mesh, options.name);
  // Nothing differentiates or batches a compiled program: custom rules (Python callables that
  // may hold this jitted function) are let go, so that no cycle through C++ outlives its users.
  for (const compiler::Op& op : c->program.ops) op.operation->release_tracing_state();
  // The mesh's devices' platform (one per mesh, as in JAX). The executable looks its backend up
  // at each run, so a cached program never outlives the backend it ran on
  // (kernels::BackendOverride).
  const Device& first = mesh.devices().front();
  c->executable = std::make_unique<const compiler::Executable>(
      std::move(*local),
      fmt::format("spmd::jit({}) #{:016x}", options.name, c->program.fingerprint()),
      std::string(first.platform()));
  return c;
}

}  // namespace

struct JitCore::CachedCall {
  std::string structure;
  bool x64 = false;  // the x64 switch it was traced under (config.h)
  // Held, so that no other sharding takes one's address while the entry lives.
  std::vector<std::shared_ptr<const Sharding>> shardings;
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;
  std::shared_ptr<const Compiled> compiled;

  bool matches(std::span<const Array* const> inputs, const std::string& s) const {
    if (inputs.size() != shardings.size() || s != structure) return false;
    if (x64 != config::x64_enabled()) return false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i]->dtype() != dtypes[i] || inputs[i]->shape() != shapes[i] ||
          !same_sharding(inputs[i]->sharding(), *shardings[i])) {
        return false;
      }
    }
    return true;
  }
};

namespace {

constexpr size_t kCachedCalls = 16;

}  // namespace

struct JitCore::Impl {
  JitOptions options;
  mutable std::mutex mu;
  // Per mesh (few), per signature within it.
  std::vector<std::pair<Mesh, std::map<std::string, std::shared_ptr<Compiled>>>> cache;
  // The fast path's entries, the most recent last.
  std::vector<std::shared_ptr<const CachedCall>> calls;

  std::shared_ptr<Compiled> compiled(std::span<const Array* const> inputs,
                                     std::span<const int> arguments, const std::string& structure,
                                     const TraceFn& trace) {
    const std::vector<NamedSharding> shardings = input_shardings(inputs, arguments, options);
    const std::string key = signature(inputs, shardings, structure);
    auto& programs = for_mesh(shardings.front().mesh());
    auto it = programs.find(key);
    if (it != programs.end()) return it->second;
    auto c = compile(inputs, shardings, trace, options);
    programs.emplace(key, c);
    return c;
  }

  std::map<std::string, std::shared_ptr<Compiled>>& for_mesh(const Mesh& mesh) {
    for (auto& [m, programs] : cache) {
      if (m == mesh) return programs;
    }
    cache.emplace_back(mesh, std::map<std::string, std::shared_ptr<Compiled>>{});
    return cache.back().second;
  }

  std::shared_ptr<const CachedCall> remember(std::shared_ptr<const Compiled> c,
                                             std::span<const Array* const> inputs,
                                             const std::string& structure) {
    auto entry = std::make_shared<CachedCall>();
    entry->structure = structure;
    entry->x64 = config::x64_enabled();
    for (const Array* a : inputs) {
      entry->shardings.push_back(a->sharding_ptr());
      entry->dtypes.push_back(a->dtype());
      entry->shapes.push_back(a->shape());
    }
    entry->compiled = std::move(c);
    if (calls.size() == kCachedCalls) calls.erase(calls.begin());
    calls.push_back(entry);
    return entry;
  }
};

JitCore::JitCore(JitOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

JitCore::~JitCore() = default;

std::shared_ptr<const JitCore::CachedCall> JitCore::cached(std::span<const Array* const> inputs,
                                                           const std::string& structure,
                                                           bool wait) const {
  std::unique_lock lock(impl_->mu, std::defer_lock);
  if (wait) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return nullptr;
  }
  for (auto it = impl_->calls.rbegin(); it != impl_->calls.rend(); ++it) {
    if ((*it)->matches(inputs, structure)) return *it;
  }
  return nullptr;
}

const void* JitCore::program_of(const CachedCall& call) { return call.compiled.get(); }

std::vector<Array> JitCore::run(const CachedCall& call, std::span<const Array* const> inputs,
                                std::vector<std::string>& keys) const {
  const Compiled& c = *call.compiled;
  keys = c.keys;
  return c.executable->run_laid_out(inputs);
}

std::vector<Array> JitCore::call(std::span<const Array* const> inputs,
                                 std::span<const int> arguments, const std::string& structure,
                                 const TraceFn& trace, std::vector<std::string>& keys) {
  if (auto hit = cached(inputs, structure)) return run(*hit, inputs, keys);
  std::shared_ptr<const Compiled> c;
  std::shared_ptr<const CachedCall> entry;
  {
    std::lock_guard lock(impl_->mu);
    c = impl_->compiled(inputs, arguments, structure, trace);
    if (c->executable->takes(inputs)) entry = impl_->remember(c, inputs, structure);
  }
  if (entry) return run(*entry, inputs, keys);
  keys = c->keys;
  return c->executable->run(inputs);
}

Lowered JitCore::lower(std::span<const Array* const> inputs, std::span<const int> arguments,
                       const std::string& structure, const TraceFn& trace) {
  std::lock_guard lock(impl_->mu);
  const auto c = impl_->compiled(inputs, arguments, structure, trace);
  const compiler::LocalProgram& local = c->executable->program();
  return Lowered(local.as_text(), local.global_text);
}

}  // namespace detail

namespace lax {

Tensor with_sharding_constraint(const Tensor& x, const NamedSharding& sharding) {
  auto trace = compiler::trace_of("with_sharding_constraint", {&x});
  compiler::layout_of(sharding, x.shape().size());  // checks the rank
  return trace->apply(compiler::make_operation<compiler::ConstraintOp>(
                          std::make_shared<const NamedSharding>(sharding)),
                      {x.value()});
}

}  // namespace lax

Array reshard(const Array& x, const NamedSharding& sharding) { return device_put(x, sharding); }

Tensor reshard(const Tensor& x, const NamedSharding& sharding) {
  auto trace = compiler::trace_of("reshard", {&x});
  const Mesh* mesh = trace->mesh();
  if (mesh == nullptr || !compiler::has_explicit_axes(*mesh))
    return lax::with_sharding_constraint(x, sharding);
  const size_t rank = x.shape().size();
  compiler::checked_type_spec("reshard", sharding.spec(), sharding.mesh(), rank);
  return trace->apply(
      compiler::make_operation<compiler::ConstraintOp>(
          std::make_shared<const NamedSharding>(sharding), compiler::ConstraintOp::Kind::kReshard),
      {x.value()});
}

}  // namespace spmd
