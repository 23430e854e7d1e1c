// The Tensors of a traced function's argument or result, flat and back (jax.tree_util's flatten
// and unflatten, for the structures spmd's transformations take): a Tensor, a std::vector or
// std::map of Tensors, a Tree<Tensor>, and a std::pair of those (value_and_grad's result). grad.h
// and vmap.h flatten what they are given, work on the leaves, and rebuild the same structure.
#pragma once

#include <map>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "spmd/array.h"
#include "spmd/tensor.h"
#include "spmd/tree.h"

namespace spmd::detail {

// Appends the leaves of `t`, in order (a map's by key, a tree's as tree_leaves gives them).
inline void add_leaves(const Tensor& t, std::vector<Tensor>& out) { out.push_back(t); }
inline void add_leaves(const std::vector<Tensor>& v, std::vector<Tensor>& out) {
  out.insert(out.end(), v.begin(), v.end());
}
inline void add_leaves(const std::map<std::string, Tensor>& m, std::vector<Tensor>& out) {
  for (const auto& [k, t] : m) out.push_back(t);
}
inline void add_leaves(const Tree<Tensor>& t, std::vector<Tensor>& out) {
  for (const Tensor& leaf : tree_leaves(t)) out.push_back(leaf);
}
template <class A, class B>
void add_leaves(const std::pair<A, B>& p, std::vector<Tensor>& out) {
  add_leaves(p.first, out);
  add_leaves(p.second, out);
}

// A value of `like`'s structure from the first leaves of `g`, which it consumes.
inline Tensor rebuild(const Tensor& /*like*/, std::span<const Tensor>& g) {
  Tensor t = g.front();
  g = g.subspan(1);
  return t;
}
inline std::vector<Tensor> rebuild(const std::vector<Tensor>& like, std::span<const Tensor>& g) {
  std::vector<Tensor> v(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(like.size()));
  g = g.subspan(like.size());
  return v;
}
inline std::map<std::string, Tensor> rebuild(const std::map<std::string, Tensor>& like,
                                             std::span<const Tensor>& g) {
  std::map<std::string, Tensor> m;
  for (const auto& [k, unused] : like) m.emplace(k, rebuild(Tensor(), g));
  return m;
}
inline Tree<Tensor> rebuild(const Tree<Tensor>& like, std::span<const Tensor>& g) {
  const size_t n = tree_leaves(like).size();
  std::vector<Tensor> leaves(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(n));
  g = g.subspan(n);
  return tree_unflatten(like.structure(), std::move(leaves));
}
template <class A, class B>
std::pair<A, B> rebuild(const std::pair<A, B>& like, std::span<const Tensor>& g) {
  A first = rebuild(like.first, g);  // two statements: the first consumes its leaves first
  return {std::move(first), rebuild(like.second, g)};
}

// Whether an argument of type T is made of Arrays (a transformation called outside jit).
template <class T>
inline constexpr bool is_array_argument =
    std::is_same_v<T, Array> || std::is_same_v<T, std::vector<Array>> ||
    std::is_same_v<T, std::map<std::string, Array>> || std::is_same_v<T, Tree<Array>>;

}  // namespace spmd::detail
