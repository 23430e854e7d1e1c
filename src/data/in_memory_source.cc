// A HostArray's rows as records.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include <cstring>

#include "spmd/data_source.h"
#include "spmd/error.h"

namespace spmd::data {
namespace {

class InMemorySource : public Source {
 public:
  explicit InMemorySource(HostArray data) : data_(std::move(data)) {
    if (data_.shape().empty()) {
      throw InvalidArgument("data: an in-memory source needs an array of rank 1 or more");
    }
    record_shape_.assign(data_.shape().begin() + 1, data_.shape().end());
    fingerprint_ = fmt::format("memory|{}|{}|{}|{:016x}", data_.shape()[0],
                               dtype_name(data_.dtype()), fmt::join(record_shape_, ","),
                               XXH3_64bits(data_.bytes().data(), data_.nbytes()));
  }
  int64_t size() const override { return data_.shape()[0]; }
  DType dtype() const override { return data_.dtype(); }
  const Shape& record_shape() const override { return record_shape_; }
  std::string fingerprint() const override { return fingerprint_; }
  void read(int64_t index, std::span<std::byte> out) const override {
    if (index < 0 || index >= size()) {
      throw InvalidArgument(fmt::format("data: record {} of a source of {}", index, size()));
    }
    const size_t n = record_bytes();
    std::memcpy(out.data(), data_.bytes().data() + static_cast<size_t>(index) * n, n);
  }

 private:
  HostArray data_;
  Shape record_shape_;
  std::string fingerprint_;
};

}  // namespace

std::shared_ptr<const Source> in_memory_source(HostArray data) {
  return std::make_shared<InMemorySource>(std::move(data));
}

}  // namespace spmd::data
