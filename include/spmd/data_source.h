// spmd::data sources — records with random access by index, for the distributed data loader
// (seed 002's "Distributed Data Loading"; grain's RandomAccessDataSource).
//
// A record is one fixed-shape array of the source's dtype (a row of a dataset). Sources are
// immutable after construction and safe to read from many threads. Files are memory-mapped:
// opening one reads its header and index only. Every malformed file is an spmd::Error naming the
// file and the byte offset where it goes wrong; nothing past a file's end is ever read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "spmd/dtype.h"
#include "spmd/host_array.h"
#include "spmd/sharding.h"

namespace spmd::data {

class Source {
 public:
  virtual ~Source() = default;
  // The number of records.
  virtual int64_t size() const = 0;
  virtual DType dtype() const = 0;
  // The shape of one record.
  virtual const Shape& record_shape() const = 0;
  // Copies record `index` (0 <= index < size()) into `out` of record_bytes(). Throws
  // InvalidArgument for an index out of range.
  virtual void read(int64_t index, std::span<std::byte> out) const = 0;
  // A hint that record `index` will be read soon: memory-backed sources start loading it into
  // cache, so that reads of scattered records overlap instead of waiting one after another.
  virtual void prefetch(int64_t index) const {}
  // Copies records `indices` into consecutive rows of `out` (indices.size() · record_bytes()
  // bytes); an index of -1 gives a row of zeros (padding). Throws InvalidArgument for an index
  // out of range or a wrong size of `out`, before copying anything. The default reads each record
  // with read(), hinting prefetch() 16 records ahead; memory-mapped sources copy directly.
  virtual void read_many(std::span<const int64_t> indices, std::span<std::byte> out) const;
  // What identifies the data (kind, files and their sizes, record count, dtype, shape): a
  // loader state saved over one source is refused by another.
  virtual std::string fingerprint() const = 0;

  size_t record_bytes() const;

 protected:
  // read_many's argument checks.
  void check_many(std::span<const int64_t> indices, std::span<std::byte> out) const;
};

// Records are the rows (first dimension) of `data`.
std::shared_ptr<const Source> in_memory_source(HostArray data);

// A NumPy .npy file (format 1.0, 2.0 or 3.0; little-endian or byte-order-free dtypes; C order),
// whose rows are the records; or a directory of them, taken in name order as one source (same
// dtype and row shape in all). Throws spmd::Error naming the file and offset for a malformed
// header, a Fortran-order or big-endian array, or a file shorter than its header says.
std::shared_ptr<const Source> npy_source(const std::string& path);

// Writes a NumPy .npy file (format 1.0) holding `array`. Throws spmd::Error naming the file.
void write_npy(const std::string& path, const HostArray& array);

// The record file: a header (magic "SPMDREC1", dtype, record shape), the records, each prefixed
// by its length in bytes (little-endian uint64), then an index of every record's offset and a
// footer (record count, magic "SPMDIDX1"). Every record has the header's shape. Opening it reads
// the header and the index, validating every offset against the file's size.
std::shared_ptr<const Source> record_file_source(const std::string& path);

// Writes a record file. append() adds records; close() (or the destructor, which cannot report
// failure, so call close()) writes the index and footer. Not thread-safe.
class RecordWriter {
 public:
  // Throws spmd::Error naming the file when it cannot be created.
  RecordWriter(const std::string& path, DType dtype, Shape record_shape);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Appends one record of the header's dtype and shape. Throws InvalidArgument otherwise.
  void append(const HostArray& record);
  // Writes the index and the footer, and closes the file. Throws spmd::Error on a write failure.
  void close();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace spmd::data
