// The record file: header, length-prefixed records, index, footer. Layout (little-endian):
//   "SPMDREC1"  u32 dtype  u32 rank  u64 dims[rank]
//   per record: u64 length (= record bytes), the bytes
//   index: u64 offset[count] (of each record's length field)   footer: u64 count  "SPMDIDX1"
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "data/mapped_file.h"
#include "spmd/data_source.h"
#include "spmd/error.h"

namespace spmd::data {
namespace {

constexpr char kHeaderMagic[8] = {'S', 'P', 'M', 'D', 'R', 'E', 'C', '1'};
constexpr char kFooterMagic[8] = {'S', 'P', 'M', 'D', 'I', 'D', 'X', '1'};
constexpr uint32_t kMaxRank = 32;

uint64_t load_u64(const std::byte* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint64_t>(p[i]);
  return v;
}
uint32_t load_u32(const std::byte* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint32_t>(p[i]);
  return v;
}
void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

[[noreturn]] void malformed_record(const std::string& file, uint64_t offset,
                                   const std::string& what) {
  throw Error(
      fmt::format("data: {} is not a valid record file at byte {}: {}", file, offset, what));
}

class RecordFileSource : public Source {
 public:
  explicit RecordFileSource(const std::string& path) : map_(path) {
    const auto b = map_.bytes();
    const uint64_t size = b.size();
    if (size < 16 || std::memcmp(b.data(), kHeaderMagic, 8) != 0) {
      malformed_record(path, 0, "no SPMDREC1 magic");
    }
    const uint32_t dtype = load_u32(b.data() + 8);
    const uint32_t rank = load_u32(b.data() + 12);
    if (dtype > static_cast<uint32_t>(DType::kFloat64)) malformed_record(path, 8, "unknown dtype");
    if (rank > kMaxRank) malformed_record(path, 12, fmt::format("rank {} is over 32", rank));
    const uint64_t header_end = 16 + uint64_t{8} * rank;
    if (size < header_end + 16) malformed_record(path, 16, "the file ends inside the header");
    dtype_ = static_cast<DType>(dtype);
    for (uint32_t i = 0; i < rank; ++i) {
      const uint64_t d = load_u64(b.data() + 16 + size_t{8} * i);
      if (d > (uint64_t{1} << 40))
        malformed_record(path, 16 + uint64_t{8} * i, "a dimension is too large");
      record_shape_.push_back(static_cast<int64_t>(d));
    }
    record_bytes_ = static_cast<uint64_t>(shape_size(record_shape_)) * dtype_size(dtype_);
    if (std::memcmp(b.data() + size - 8, kFooterMagic, 8) != 0) {
      malformed_record(path, size - 8, "no SPMDIDX1 footer (the writer was not closed?)");
    }
    const uint64_t count = load_u64(b.data() + size - 16);
    // Each term of the index's bounds is checked on its own, so no sum can wrap around.
    if (count > (size - 16 - header_end) / 8) {
      malformed_record(path, size - 16, fmt::format("an index of {} records does not fit", count));
    }
    index_at_ = size - 16 - 8 * count;
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t off = load_u64(b.data() + index_at_ + 8 * i);
      if (off < header_end || off > index_at_ || index_at_ - off < 8 ||
          index_at_ - off - 8 < record_bytes_) {
        malformed_record(
            path, index_at_ + 8 * i,
            fmt::format("record {} is said to start at byte {}, outside the records", i, off));
      }
      const uint64_t length = load_u64(b.data() + off);
      if (length != record_bytes_) {
        malformed_record(path, off,
                         fmt::format("record {} holds {} bytes, the header's shape {} bytes", i,
                                     length, record_bytes_));
      }
      offsets_.push_back(off + 8);
    }
    fingerprint_ =
        fmt::format("records|{}:{}|{}|{}", std::filesystem::path(path).filename().string(), count,
                    dtype_name(dtype_), fmt::join(record_shape_, ","));
  }

  int64_t size() const override { return static_cast<int64_t>(offsets_.size()); }
  DType dtype() const override { return dtype_; }
  const Shape& record_shape() const override { return record_shape_; }
  std::string fingerprint() const override { return fingerprint_; }

  void read(int64_t index, std::span<std::byte> out) const override {
    if (index < 0 || index >= size()) {
      throw InvalidArgument(fmt::format("data: record {} of a source of {}", index, size()));
    }
    std::memcpy(out.data(), map_.bytes().data() + offsets_[static_cast<size_t>(index)],
                record_bytes_);
  }

 private:
  MappedFile map_;
  DType dtype_ = DType::kFloat32;
  Shape record_shape_;
  uint64_t record_bytes_ = 0;
  uint64_t index_at_ = 0;
  std::vector<uint64_t> offsets_;
  std::string fingerprint_;
};

}  // namespace

std::shared_ptr<const Source> record_file_source(const std::string& path) {
  return std::make_shared<RecordFileSource>(path);
}

struct RecordWriter::State {
  std::string path;
  std::FILE* file = nullptr;
  DType dtype;
  Shape shape;
  uint64_t at = 0;
  std::vector<uint64_t> offsets;

  void write(const std::string& bytes) { write(bytes.data(), bytes.size()); }
  void write(const void* p, size_t n) {
    if (n > 0 && std::fwrite(p, 1, n, file) != n) {
      throw Error(fmt::format("data: cannot write {}", path));
    }
    at += n;
  }
};

RecordWriter::RecordWriter(const std::string& path, DType dtype, Shape record_shape)
    : state_(std::make_unique<State>()) {
  state_->path = path;
  state_->dtype = dtype;
  state_->shape = std::move(record_shape);
  state_->file = std::fopen(path.c_str(), "wb");
  if (state_->file == nullptr) throw Error(fmt::format("data: cannot create {}", path));
  std::string header(kHeaderMagic, 8);
  put_u32(header, static_cast<uint32_t>(dtype));
  put_u32(header, static_cast<uint32_t>(state_->shape.size()));
  for (int64_t d : state_->shape) put_u64(header, static_cast<uint64_t>(d));
  state_->write(header);
}

RecordWriter::~RecordWriter() {
  try {
    close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor cannot report; close() does
  }
}

void RecordWriter::append(const HostArray& record) {
  if (state_->file == nullptr) throw FailedPrecondition("data: the record writer is closed");
  if (record.dtype() != state_->dtype || record.shape() != state_->shape) {
    throw InvalidArgument(
        fmt::format("data: a record of {}[{}] does not fit a file of {}[{}] records",
                    dtype_name(record.dtype()), fmt::join(record.shape(), ", "),
                    dtype_name(state_->dtype), fmt::join(state_->shape, ", ")));
  }
  state_->offsets.push_back(state_->at);
  std::string length;
  put_u64(length, record.nbytes());
  state_->write(length);
  state_->write(record.bytes().data(), record.nbytes());
}

void RecordWriter::close() {
  if (state_->file == nullptr) return;
  std::string tail;
  for (uint64_t off : state_->offsets) put_u64(tail, off);
  put_u64(tail, state_->offsets.size());
  tail.append(kFooterMagic, 8);
  state_->write(tail);
  const bool ok = std::fflush(state_->file) == 0;
  std::fclose(state_->file);
  state_->file = nullptr;
  if (!ok) throw Error(fmt::format("data: cannot write {}", state_->path));
}

}  // namespace spmd::data
