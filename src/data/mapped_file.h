// A whole file mapped read-only into memory, unmapped when the object goes.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace spmd::data {

class MappedFile {
 public:
  // Throws spmd::Error naming the file when it cannot be opened or mapped.
  explicit MappedFile(std::string path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace spmd::data
