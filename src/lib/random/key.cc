// Typed keys (random_key.h): a checked wrapper of raw key data; every operation on keys is the
// raw one (random.h) on that data.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "spmd/error.h"
#include "spmd/numpy.h"
#include "spmd/numpy_eager.h"
#include "spmd/random.h"
#include "spmd/random_key.h"
#include "spmd/sharding.h"

namespace spmd::random {
namespace {

std::string python_tuple(const Shape& shape) {
  return fmt::format("({}{})", fmt::join(shape, ", "), shape.size() == 1 ? "," : "");
}

// Row `i` of the key data (the leading axis already checked): a slice inside jit, and outside it
// the same slice run at once (spmd::numpy's eager jit), as jax indexes a key array.
Tensor data_row(const Tensor& data, int64_t i) {
  const Shape shape = data.shape();
  std::vector<int64_t> start(shape.size(), 0);
  std::vector<int64_t> stop(shape.begin(), shape.end());
  start[0] = i;
  stop[0] = i + 1;
  const Shape rest(shape.begin() + 1, shape.end());
  return numpy::reshape(numpy::slice(data, start, stop), rest);
}

Array data_row(const Array& data, int64_t i) {
  return numpy::detail::eager(fmt::format("random.key_row[{}]", i), {&data},
                              [i](const std::vector<Tensor>& t) { return data_row(t[0], i); });
}

template <typename Data>
const Data& single(std::string_view what, const KeyArray<Data>& key) {
  if (key.ndim() != 0) {
    throw InvalidArgument(
        fmt::format("random.{} accepts a single key, but was given a key array of shape {} != (); "
                    "index it (keys[i]) or split each key on its own",
                    what, python_tuple(key.shape())));
  }
  return key.data();
}

}  // namespace

template <typename Data>
KeyArray<Data>::KeyArray(Data data) : data_(std::move(data)) {
  const Shape& s = data_.shape();
  if (data_.dtype() != DType::kUInt32 || s.empty() || s.back() != 2) {
    throw InvalidArgument(fmt::format(
        "random.wrap_key_data: threefry2x32 key data is uint32 with a last dimension of 2, "
        "not {}[{}]",
        spmd::dtype_name(data_.dtype()), fmt::join(s, ", ")));
  }
  shape_.assign(s.begin(), s.end() - 1);
}

template <typename Data>
std::string KeyArray<Data>::to_string() const {
  return fmt::format("{}[{}]", dtype_name(), fmt::join(shape_, ", "));
}

template <typename Data>
KeyArray<Data> KeyArray<Data>::operator[](int64_t i) const {
  if (shape_.empty()) {
    throw InvalidArgument("random: a single key (shape ()) cannot be indexed");
  }
  const int64_t n = shape_.front();
  if (i < -n || i >= n) {
    throw InvalidArgument(fmt::format("random: index {} is out of range for {} keys", i, n));
  }
  return KeyArray(data_row(data_, i < 0 ? i + n : i));
}

template class KeyArray<Array>;
template class KeyArray<Tensor>;

Key key(int64_t seed) { return Key(PRNGKey(seed)); }

Array key_data(const Key& keys) { return keys.data(); }
Tensor key_data(const KeyTensor& keys) { return keys.data(); }

Key wrap_key_data(const Array& data) { return Key(data); }
KeyTensor wrap_key_data(const Tensor& data) { return KeyTensor(data); }

Key split(const Key& key, int64_t num) { return Key(split(single("split", key), num)); }
KeyTensor split(const KeyTensor& key, int64_t num) {
  return KeyTensor(split(single("split", key), num));
}

Key fold_in(const Key& key, uint32_t data) { return Key(fold_in(single("fold_in", key), data)); }
KeyTensor fold_in(const KeyTensor& key, uint32_t data) {
  return KeyTensor(fold_in(single("fold_in", key), data));
}
KeyTensor fold_in(const KeyTensor& key, const Tensor& data) {
  return KeyTensor(fold_in(single("fold_in", key), data));
}

const Array& single_key(std::string_view what, const Key& key) { return single(what, key); }
const Tensor& single_key(std::string_view what, const KeyTensor& key) { return single(what, key); }

}  // namespace spmd::random
