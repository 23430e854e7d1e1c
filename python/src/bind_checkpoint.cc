// spmd.checkpoint's engine: save, restore and CheckpointManager (spmd/checkpoint.h,
// checkpoint_manager.h) over flat {name: Array} dicts; python/spmd/checkpoint.py names a pytree's
// leaves by their paths. Every call releases the GIL: saving is collective and waits for the
// other processes.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/set.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "spmd/checkpoint.h"
#include "spmd/checkpoint_manager.h"

namespace spmd::python {
namespace {

using checkpoint::ShardingTree;

checkpoint::SaveOptions save_options(const std::string& compression, std::optional<int64_t> step,
                                     std::map<std::string, double> metrics,
                                     std::map<std::string, std::string> user) {
  checkpoint::SaveOptions o;
  if (compression == "none") {
    o.compression = checkpoint::Compression::kNone;
  } else if (compression != "zstd") {
    throw InvalidArgument("checkpoint: compression is 'zstd' or 'none', not '" + compression + "'");
  }
  o.metadata.step = step;
  o.metadata.metrics = std::move(metrics);
  o.metadata.user = std::move(user);
  return o;
}

// {name: Sharding} as the restore targets (each sharding copied, to outlive the call).
ShardingTree targets_of(const std::map<std::string, const Sharding*>& shardings) {
  ShardingTree out;
  for (const auto& [name, s] : shardings) out[name] = s->clone();
  return out;
}

nb::dict metadata_object(const checkpoint::Metadata& m) {
  nb::dict out;
  out["step"] = m.step ? nb::cast(*m.step) : nb::none();
  out["metrics"] = m.metrics;
  out["user"] = m.user;
  return out;
}

void bind_manager(nb::module_& c) {
  using checkpoint::CheckpointManager;
  nb::class_<CheckpointManager>(c, "CheckpointManager")
      .def(
          "__init__",
          [](CheckpointManager* self, std::string root, std::optional<int> max_to_keep,
             std::optional<int> keep_best, std::string best_metric, bool best_mode_max,
             int64_t save_interval_steps) {
            checkpoint::CheckpointManagerOptions o;
            o.max_to_keep = max_to_keep;
            o.keep_best = keep_best;
            o.best_metric = std::move(best_metric);
            o.best_mode_max = best_mode_max;
            o.save_interval_steps = save_interval_steps;
            new (self) CheckpointManager(std::move(root), o);
          },
          nb::arg("root"), nb::arg("max_to_keep").none() = nb::none(),
          nb::arg("keep_best").none() = nb::none(), nb::arg("best_metric") = "",
          nb::arg("best_mode_max") = false, nb::arg("save_interval_steps") = 1)
      .def("should_save", &CheckpointManager::should_save, nb::call_guard<nb::gil_scoped_release>())
      .def(
          "save",
          [](CheckpointManager& m, int64_t step, const checkpoint::Tree& arrays,
             const std::map<std::string, double>& metrics,
             const std::map<std::string, std::string>& user) {
            return m.save(step, arrays, metrics, user);
          },
          nb::arg("step"), nb::arg("arrays"), nb::arg("metrics") = std::map<std::string, double>{},
          nb::arg("user") = std::map<std::string, std::string>{},
          nb::call_guard<nb::gil_scoped_release>())
      .def("all_steps", &CheckpointManager::all_steps)
      .def("latest_step", &CheckpointManager::latest_step)
      .def("restore",
           [](const CheckpointManager& m, int64_t step,
              const std::map<std::string, const Sharding*>& shardings) {
             const ShardingTree targets = targets_of(shardings);
             nb::gil_scoped_release release;
             return m.restore(step, targets);
           })
      .def("restore_onto",
           [](const CheckpointManager& m, int64_t step, const Sharding& sharding) {
             nb::gil_scoped_release release;
             return m.restore(step, sharding);
           })
      .def("metadata", [](const CheckpointManager& m,
                          int64_t step) { return metadata_object(m.metadata(step)); })
      .def("directory", &CheckpointManager::directory);
}

}  // namespace

void bind_checkpoint(nb::module_& m) {
  nb::module_ c = m.def_submodule("checkpoint", "spmd::checkpoint over {name: Array}");
  c.def(
      "save",
      [](const std::string& dir, const checkpoint::Tree& arrays, const std::string& compression,
         std::optional<int64_t> step, std::map<std::string, double> metrics,
         std::map<std::string, std::string> user, bool overwrite, const std::string& format,
         std::set<std::string> sequence_nodes) {
        auto options = save_options(compression, step, std::move(metrics), std::move(user));
        options.overwrite = overwrite;
        if (format == "orbax") {
          options.format = checkpoint::Format::kOrbax;
        } else if (format != "spmd") {
          throw InvalidArgument("checkpoint: format is 'spmd' or 'orbax', not '" + format + "'");
        }
        options.sequence_nodes = std::move(sequence_nodes);
        nb::gil_scoped_release release;
        checkpoint::save(dir, arrays, options);
      },
      nb::arg("dir"), nb::arg("arrays"), nb::arg("compression") = "zstd",
      nb::arg("step").none() = nb::none(), nb::arg("metrics") = std::map<std::string, double>{},
      nb::arg("user") = std::map<std::string, std::string>{}, nb::arg("overwrite") = false,
      nb::arg("format") = "spmd", nb::arg("sequence_nodes") = std::set<std::string>{});
  c.def("restore",
        [](const std::string& dir, const std::map<std::string, const Sharding*>& shardings) {
          const ShardingTree targets = targets_of(shardings);
          nb::gil_scoped_release release;
          return checkpoint::restore(dir, targets);
        });
  // Every array onto one sharding, the checkpoint opened once (an Orbax one's index and every
  // leaf's Zarr metadata read once, not once for the names and again for the arrays).
  c.def("restore_onto", [](const std::string& dir, const Sharding& sharding) {
    nb::gil_scoped_release release;
    return checkpoint::restore(dir, sharding);
  });
  c.def("names", [](const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& [name, info] : checkpoint::read_array_info(dir)) names.push_back(name);
    return names;
  });
  c.def("is_committed", &checkpoint::is_committed);
  c.def("read_metadata",
        [](const std::string& dir) { return metadata_object(checkpoint::read_metadata(dir)); });
  bind_manager(c);
}

}  // namespace spmd::python
