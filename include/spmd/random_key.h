// spmd::random's typed keys (jax.random.key): an array whose elements are whole keys, dtype
// key<fry>, as JAX has recommended over raw uint32[2] keys since 0.4.16.
//
// A typed key array of shape S holds uint32[S..., 2] key data (key_data); wrap_key_data goes
// back. The element type keeps a key from being added, multiplied or sliced into halves by
// mistake: the only things done to keys are the functions here and the samplers of random.h,
// which take a typed key wherever they take a raw one and give the same values for the same
// data. `Key` lives outside jit (Arrays, run at once); `KeyTensor` inside (Tensors, traced).
// jit's arguments and results are Tensors: pass key_data in, and wrap_key_data it inside.
//
//   spmd::random::Key key = spmd::random::key(42);
//   spmd::random::Key keys = spmd::random::split(key, 3);        // key<fry>[3]
//   spmd::Array x = spmd::random::normal(keys[0], {1024});       // normal(split(PRNGKey(42),3)[0])
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "spmd/array.h"
#include "spmd/shape.h"
#include "spmd/tensor.h"

namespace spmd::random {

// Keys of shape shape(): Data is Array (outside jit) or Tensor (inside), uint32[shape()..., 2].
template <typename Data>
class KeyArray {
 public:
  // Wraps key data (wrap_key_data). Throws InvalidArgument unless `data` is uint32 with at least
  // one dimension, the last of size 2, as JAX's threefry2x32 keys.
  explicit KeyArray(Data data);

  const Shape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  // The key data, uint32[shape()..., 2] (what key_data returns).
  const Data& data() const { return data_; }
  // "key<fry>", the name JAX prints for a threefry2x32 key's dtype.
  static std::string_view dtype_name() { return "key<fry>"; }
  // "key<fry>[3]"
  std::string to_string() const;

  // Key `i` along the first axis (negative counts from the end, as in JAX): shape()[1:].
  // Throws InvalidArgument for a single key (shape ()) or an index out of range. A Key's row is
  // the Tensor's slice run at once (numpy_eager.h), so every process of the keys' mesh indexes
  // alike, as with any eager function.
  KeyArray operator[](int64_t i) const;

 private:
  Data data_;
  Shape shape_;
};

using Key = KeyArray<Array>;
using KeyTensor = KeyArray<Tensor>;

// A typed key for `seed` (jax.random.key): the data PRNGKey(seed) holds, on this process's first
// local device.
Key key(int64_t seed);

// The key data of `keys`, uint32[keys.shape()..., 2] (jax.random.key_data).
Array key_data(const Key& keys);
Tensor key_data(const KeyTensor& keys);

// Typed keys of shape data.shape()[:-1] (jax.random.wrap_key_data); InvalidArgument as
// KeyArray's constructor.
Key wrap_key_data(const Array& data);
KeyTensor wrap_key_data(const Tensor& data);

// "threefry2x32", the only implementation spmd has (jax.random.key_impl).
template <typename Data>
std::string_view key_impl(const KeyArray<Data>& /*keys*/) {
  return "threefry2x32";
}

// `num` new keys from one (jax.random.split): key<fry>[num], the data of split(key_data(key),
// num). Throws InvalidArgument for a key array that is not a single key (shape ()).
Key split(const Key& key, int64_t num = 2);
KeyTensor split(const KeyTensor& key, int64_t num = 2);

// A new key from one and `data` (jax.random.fold_in); InvalidArgument as split.
Key fold_in(const Key& key, uint32_t data);
KeyTensor fold_in(const KeyTensor& key, uint32_t data);
KeyTensor fold_in(const KeyTensor& key, const Tensor& data);

// The data of a single key (shape ()), which `what` (a sampler's name) needs: InvalidArgument for
// an array of keys, as JAX's "accepts a single key". The samplers' typed forms call this.
const Array& single_key(std::string_view what, const Key& key);
const Tensor& single_key(std::string_view what, const KeyTensor& key);

}  // namespace spmd::random
