// spmd.data's engine: the record sources and DistributedDataLoader (spmd/data_source.h,
// data_loader.h). A loader's next() releases the GIL while it reads and builds the global batch.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "bindings.h"
#include "spmd/data_loader.h"
#include "spmd/data_source.h"

namespace spmd::python {
using data::DistributedDataLoader;
using data::Source;

void bind_data(nb::module_& m) {
  nb::module_ d = m.def_submodule("data", "spmd::data");
  nb::class_<Source>(d, "Source")
      .def("__len__", &Source::size)
      .def_prop_ro("dtype", [](const Source& s) { return numpy_name(s.dtype()); })
      .def_prop_ro("record_shape", &Source::record_shape)
      .def("fingerprint", &Source::fingerprint);
  d.def("_in_memory_source",
        [](const HostBytes& bytes, const Shape& shape, const std::string& dtype) {
          return data::in_memory_source(host_of(bytes, shape, dtype));
        });
  d.def("npy_source", &data::npy_source, nb::arg("path"));
  d.def("record_file_source", &data::record_file_source, nb::arg("path"));

  nb::class_<DistributedDataLoader>(d, "DistributedDataLoader")
      .def(
          "__init__",
          [](DistributedDataLoader* self, std::shared_ptr<const Source> source,
             int64_t global_batch_size, const NamedSharding& sharding, bool shuffle, uint64_t seed,
             bool drop_remainder, int prefetch) {
            data::LoaderOptions o;
            o.shuffle = shuffle;
            o.seed = seed;
            o.drop_remainder = drop_remainder;
            o.prefetch = prefetch;
            new (self) DistributedDataLoader(std::move(source), global_batch_size, sharding, o);
          },
          nb::arg("source"), nb::arg("global_batch_size"), nb::arg("sharding"),
          nb::arg("shuffle") = true, nb::arg("seed") = 0, nb::arg("drop_remainder") = false,
          nb::arg("prefetch") = -1)
      .def_prop_ro("batches_per_epoch", &DistributedDataLoader::batches_per_epoch)
      .def_prop_ro("shard_records", &DistributedDataLoader::shard_records)
      .def("next",
           [](DistributedDataLoader& l) {
             std::optional<data::Batch> next;
             {
               nb::gil_scoped_release release;
               next = l.next();
             }
             data::Batch& b = *next;
             nb::dict out;
             out["epoch"] = b.epoch;
             out["index"] = b.index;
             out["data"] = std::move(b.data);
             out["mask"] = std::move(b.mask);
             return out;
           })
      .def("state", &DistributedDataLoader::state)
      .def("restore", &DistributedDataLoader::restore, nb::arg("state"));
}

}  // namespace spmd::python
