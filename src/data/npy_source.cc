// NumPy .npy files (and directories of them) as record sources, and writing .npy files.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "data/gather.h"
#include "data/mapped_file.h"
#include "spmd/data_source.h"
#include "spmd/error.h"

namespace spmd::data {
namespace {

namespace fs = std::filesystem;

// The NumPy descr of each dtype ('<' for multi-byte, '|' for single-byte types).
std::string descr_of(DType t) {
  if (t == DType::kBFloat16) {
    throw InvalidArgument(
        "data: NumPy has no bfloat16 dtype; store bfloat16 records in a record file instead");
  }
  return std::string(dtype_typestr(t));
}

[[noreturn]] void malformed_npy(const std::string& file, size_t offset, const std::string& what) {
  throw Error(fmt::format("data: {} is not a valid .npy file at byte {}: {}", file, offset, what));
}

// One parsed .npy file.
struct NpyFile {
  std::unique_ptr<MappedFile> map;
  DType dtype = DType::kFloat32;
  Shape shape;  // the whole array's
  size_t data_offset = 0;
};

// The value of `key` in the header dict (its text up to the next top-level ',' or '}').
std::string dict_value(const std::string& header, const std::string& key, const std::string& file,
                       size_t base) {
  const std::string quoted = "'" + key + "'";
  const size_t at = header.find(quoted);
  if (at == std::string::npos) malformed_npy(file, base, "the header has no " + quoted);
  size_t p = header.find(':', at + quoted.size());
  if (p == std::string::npos) malformed_npy(file, base + at, "no ':' after " + quoted);
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  size_t end = p;
  if (p < header.size() && header[p] == '(') {
    end = header.find(')', p);
    if (end == std::string::npos) malformed_npy(file, base + p, "unterminated shape tuple");
    return header.substr(p, end - p + 1);
  }
  if (p < header.size() && header[p] == '\'') {
    end = header.find('\'', p + 1);
    if (end == std::string::npos) malformed_npy(file, base + p, "unterminated string");
    return header.substr(p + 1, end - p - 1);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  return header.substr(p, end - p);
}

NpyFile open_npy(const std::string& path) {
  NpyFile f;
  f.map = std::make_unique<MappedFile>(path);
  const auto b = f.map->bytes();
  static const unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (b.size() < 10 || std::memcmp(b.data(), kMagic, 6) != 0) {
    malformed_npy(path, 0, "no \\x93NUMPY magic");
  }
  const auto major = static_cast<unsigned>(b[6]);
  size_t header_len = 0;
  size_t header_at = 0;
  if (major == 1) {
    header_len = static_cast<size_t>(b[8]) | (static_cast<size_t>(b[9]) << 8);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) malformed_npy(path, 8, "the file ends inside the header length");
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<size_t>(b[8 + i]);
    header_at = 12;
  } else {
    malformed_npy(path, 6, fmt::format("format version {} is not 1, 2 or 3", major));
  }
  if (header_len > b.size() - header_at) {
    malformed_npy(
        path, 8,
        fmt::format("a header of {} bytes does not fit in the file's {}", header_len, b.size()));
  }
  const std::string header(reinterpret_cast<const char*>(b.data()) + header_at, header_len);
  const std::string descr = dict_value(header, "descr", path, header_at);
  bool found = false;
  for (int i = 0; i <= static_cast<int>(DType::kFloat64); ++i) {
    const auto t = static_cast<DType>(i);
    if (t == DType::kBFloat16) continue;
    std::string d = descr_of(t);
    // Single-byte types may be written with '<' or '|'; '=' means native (little-endian here).
    if (descr == d || (d[0] == '<' && descr == "=" + d.substr(1)) ||
        (d[0] == '|' && (descr == "<" + d.substr(1) || descr == "=" + d.substr(1)))) {
      f.dtype = t;
      found = true;
    }
  }
  if (!found) {
    malformed_npy(path, header_at,
                  fmt::format("dtype '{}' is not supported (big-endian or not a "
                              "number: convert it with astype('<f4') etc.)",
                              descr));
  }
  const std::string order = dict_value(header, "fortran_order", path, header_at);
  if (order.rfind("True", 0) == 0) {
    malformed_npy(path, header_at,
                  "the array is in Fortran order; save it with np.ascontiguousarray");
  }
  if (order.rfind("False", 0) != 0) malformed_npy(path, header_at, "fortran_order is not a bool");
  const std::string tuple = dict_value(header, "shape", path, header_at);
  if (tuple.size() < 2 || tuple.front() != '(')
    malformed_npy(path, header_at, "shape is not a tuple");
  size_t p = 1;
  while (p < tuple.size() - 1) {
    while (p < tuple.size() - 1 && (tuple[p] == ' ' || tuple[p] == ',')) ++p;
    if (p >= tuple.size() - 1) break;
    int64_t v = 0;
    size_t digits = 0;
    while (p < tuple.size() - 1 && tuple[p] >= '0' && tuple[p] <= '9') {
      if (++digits > 15) malformed_npy(path, header_at, "a dimension is too large");
      v = v * 10 + (tuple[p] - '0');
      ++p;
    }
    if (digits == 0) malformed_npy(path, header_at, "shape holds something other than integers");
    f.shape.push_back(v);
  }
  if (f.shape.empty()) malformed_npy(path, header_at, "a 0-d array has no records (rows)");
  f.data_offset = header_at + header_len;
  const size_t needed = static_cast<size_t>(shape_size(f.shape)) * dtype_size(f.dtype);
  if (b.size() - f.data_offset < needed) {
    malformed_npy(path, f.data_offset,
                  fmt::format("the header promises {} bytes of data, the file holds {}", needed,
                              b.size() - f.data_offset));
  }
  return f;
}

class NpySource : public Source {
 public:
  explicit NpySource(const std::string& path) {
    std::vector<std::string> files;
    if (fs::is_directory(path)) {
      for (const auto& e : fs::directory_iterator(path)) {
        if (e.path().extension() == ".npy") files.push_back(e.path().string());
      }
      std::sort(files.begin(), files.end());
      if (files.empty()) throw Error(fmt::format("data: {} holds no .npy files", path));
    } else {
      files.push_back(path);
    }
    fingerprint_ = "npy";
    for (const auto& file : files) {
      NpyFile f = open_npy(file);
      const Shape row(f.shape.begin() + 1, f.shape.end());
      if (files_.empty()) {
        dtype_ = f.dtype;
        record_shape_ = row;
      } else if (f.dtype != dtype_ || row != record_shape_) {
        throw Error(fmt::format(
            "data: {} holds {} rows of ({}), but {} holds {} rows of ({}); a directory source "
            "needs one dtype and row shape",
            file, dtype_name(f.dtype), fmt::join(row, ", "), files_.front().map->path(),
            dtype_name(dtype_), fmt::join(record_shape_, ", ")));
      }
      starts_.push_back(size_);
      size_ += f.shape[0];
      fingerprint_ += fmt::format("|{}:{}", fs::path(file).filename().string(), f.shape[0]);
      files_.push_back(std::move(f));
    }
    fingerprint_ += fmt::format("|{}|{}", dtype_name(dtype_), fmt::join(record_shape_, ","));
    record_bytes_ = record_bytes();
    if (files_.size() == 1)
      single_ = files_.front().map->bytes().data() + files_.front().data_offset;
  }

  int64_t size() const override { return size_; }
  DType dtype() const override { return dtype_; }
  const Shape& record_shape() const override { return record_shape_; }
  std::string fingerprint() const override { return fingerprint_; }

  void prefetch(int64_t index) const override {
    if (index < 0 || index >= size_) return;
    prefetch_bytes(address(index), record_bytes_);
  }

  void read(int64_t index, std::span<std::byte> out) const override {
    if (index < 0 || index >= size_) {
      throw InvalidArgument(fmt::format("data: record {} of a source of {}", index, size_));
    }
    std::memcpy(out.data(), address(index), record_bytes_);
  }

  // The loader's path: no call per record.
  void read_many(std::span<const int64_t> indices, std::span<std::byte> out) const override {
    check_many(indices, out);
    gather_rows(
        indices, out, record_bytes_,
        [this](int64_t i, std::span<std::byte> row) {
          std::memcpy(row.data(), address(i), record_bytes_);
        },
        [this](int64_t i) { prefetch_bytes(address(i), record_bytes_); });
  }

 private:
  const std::byte* address(int64_t index) const {
    if (single_) return single_ + static_cast<size_t>(index) * record_bytes_;
    const size_t file = static_cast<size_t>(
        std::upper_bound(starts_.begin(), starts_.end(), index) - starts_.begin() - 1);
    const NpyFile& f = files_[file];
    return f.map->bytes().data() + f.data_offset +
           static_cast<size_t>(index - starts_[file]) * record_bytes_;
  }

  std::vector<NpyFile> files_;
  std::vector<int64_t> starts_;
  const std::byte* single_ = nullptr;  // the first record, when there is one file
  size_t record_bytes_ = 0;
  int64_t size_ = 0;
  DType dtype_ = DType::kFloat32;
  Shape record_shape_;
  std::string fingerprint_;
};

}  // namespace

std::shared_ptr<const Source> npy_source(const std::string& path) {
  return std::make_shared<NpySource>(path);
}

void write_npy(const std::string& path, const HostArray& array) {
  std::string shape;
  for (size_t i = 0; i < array.shape().size(); ++i) {
    shape += (i > 0 ? ", " : "") + std::to_string(array.shape()[i]);
  }
  if (array.shape().size() == 1) shape += ",";  // (3,) is a tuple, (3) is not
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                   descr_of(array.dtype()), shape);
  // Pad with spaces so that the data starts at a multiple of 64, ending the header with '\n'.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const unsigned char prefix[10] = {0x93,
                                    'N',
                                    'U',
                                    'M',
                                    'P',
                                    'Y',
                                    1,
                                    0,
                                    static_cast<unsigned char>(header.size() & 0xff),
                                    static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char*>(prefix), 10);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(array.bytes().data()),
            static_cast<std::streamsize>(array.nbytes()));
  out.close();
  if (!out) throw Error(fmt::format("data: cannot write {}", path));
}

}  // namespace spmd::data
