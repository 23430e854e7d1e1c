// spmd::Tree<T> — a nested, ordered, string-keyed dictionary with leaves of type T: JAX's pytree
// of dictionaries, as a parameter dictionary like {'w1': …, 'layer2': {'w': …, 'b': …}}.
//
// A tree is either a leaf holding a T, or a dictionary of named subtrees kept in key order (as
// jax.tree_util orders dictionary keys). The functions below visit leaves depth first in that
// order. jit (jit.h) takes and returns Tree<Array> where the function takes and returns
// Tree<Tensor>. Plain values; not synchronised.
//
//   spmd::Tree<spmd::Array> params{{"w", w}, {"b", b}};
//   params["layer2"]["w"] = w2;                       // nested dictionaries made on the way
//   auto doubled = spmd::tree_map([](const spmd::Array& a) { return a * a; }, params);
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "spmd/error.h"

namespace spmd {

template <class T>
class Tree {
 public:
  using Entry = std::pair<std::string, Tree>;

  // An empty dictionary.
  Tree() = default;
  // A leaf.
  Tree(T leaf) : leaf_(std::move(leaf)) {}  // NOLINT(google-explicit-constructor)
  // A dictionary: Tree{{"w", w}, {"b", b}}. A key given twice throws InvalidArgument.
  Tree(std::initializer_list<Entry> entries) {
    for (const Entry& e : entries) insert(e.first, e.second);
  }

  bool is_leaf() const { return leaf_.has_value(); }
  // The leaf; throws InvalidArgument on a dictionary.
  const T& leaf() const {
    if (!leaf_) throw InvalidArgument("Tree::leaf: this node is a dictionary, not a leaf");
    return *leaf_;
  }
  // The dictionary's entries, in key order (empty for a leaf).
  const std::vector<Entry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

  // The subtree under `key`, made (an empty dictionary) when absent; a leaf becomes a
  // dictionary only when it is one already: on a leaf, throws InvalidArgument.
  Tree& operator[](const std::string& key) {
    if (leaf_) throw InvalidArgument("Tree::operator[]: \"" + key + "\" asked of a leaf");
    auto it = find(key);
    if (it != entries_.end() && it->first == key) return it->second;
    insert(key, Tree());
    return find(key)->second;
  }
  // The subtree under `key`; throws InvalidArgument naming it when absent.
  const Tree& at(const std::string& key) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                               [](const Entry& e, const std::string& k) { return e.first < k; });
    if (it == entries_.end() || it->first != key) {
      throw InvalidArgument("Tree::at: no key \"" + key + "\"");
    }
    return it->second;
  }
  // Adds `value` under `key`; throws InvalidArgument when the key is there already, or holds one
  // of the characters structure() uses ("{}:,").
  void insert(const std::string& key, Tree value) {
    if (key.find_first_of("{}:,") != std::string::npos) {
      throw InvalidArgument("Tree: the key \"" + key + "\" holds one of {}:, (reserved)");
    }
    auto it = find(key);
    if (it != entries_.end() && it->first == key) {
      throw InvalidArgument("Tree: the key \"" + key + "\" is given twice");
    }
    entries_.insert(it, Entry{key, std::move(value)});
  }

  // The shape of the tree without its leaves: "*" for a leaf, "{a:*,b:{c:*}}" for dictionaries.
  std::string structure() const {
    if (leaf_) return "*";
    std::string s = "{";
    for (const Entry& e : entries_) s += e.first + ":" + e.second.structure() + ",";
    return s + "}";
  }

 private:
  typename std::vector<Entry>::iterator find(const std::string& key) {
    return std::lower_bound(entries_.begin(), entries_.end(), key,
                            [](const Entry& e, const std::string& k) { return e.first < k; });
  }

  std::optional<T> leaf_;
  std::vector<Entry> entries_;
};

// The leaves, depth first in key order.
template <class T>
std::vector<T> tree_leaves(const Tree<T>& tree) {
  std::vector<T> out;
  auto visit = [&](const Tree<T>& t, auto& self) -> void {
    if (t.is_leaf()) {
      out.push_back(t.leaf());
      return;
    }
    for (const auto& e : t.entries()) self(e.second, self);
  };
  visit(tree, visit);
  return out;
}

// The tree of f(leaf) for every leaf, same structure: jax.tree.map. The seeds call it
// jax.tree_map, a name JAX has since removed (absent from JAX 0.10.2); spmd keeps that spelling.
template <class F, class T>
auto tree_map(F&& f, const Tree<T>& tree) -> Tree<std::invoke_result_t<F&, const T&>> {
  using R = std::invoke_result_t<F&, const T&>;
  if (tree.is_leaf()) return Tree<R>(f(tree.leaf()));
  Tree<R> out;
  for (const auto& e : tree.entries()) out.insert(e.first, tree_map(f, e.second));
  return out;
}

// The tree of f(a_leaf, b_leaf) over two trees of the same structure; InvalidArgument naming
// both structures otherwise.
template <class F, class T, class U>
auto tree_map(F&& f, const Tree<T>& a, const Tree<U>& b)
    -> Tree<std::invoke_result_t<F&, const T&, const U&>> {
  using R = std::invoke_result_t<F&, const T&, const U&>;
  if (a.structure() != b.structure()) {
    throw InvalidArgument("tree_map: the trees differ in structure: " + a.structure() + " and " +
                          b.structure());
  }
  if (a.is_leaf()) return Tree<R>(f(a.leaf(), b.leaf()));
  Tree<R> out;
  for (size_t i = 0; i < a.entries().size(); ++i) {
    out.insert(a.entries()[i].first, tree_map(f, a.entries()[i].second, b.entries()[i].second));
  }
  return out;
}

// The leaves and the structure, and back: tree_unflatten(structure, leaves) rebuilds a tree of
// `structure` (as Tree::structure() gives it) from leaves in tree_leaves order. Throws
// InvalidArgument when the count of leaves does not match.
template <class T>
std::pair<std::vector<T>, std::string> tree_flatten(const Tree<T>& tree) {
  return {tree_leaves(tree), tree.structure()};
}

namespace detail {
template <class T>
Tree<T> unflatten_at(const std::string& s, size_t& at, std::vector<T>& leaves, size_t& next) {
  if (s[at] == '*') {
    ++at;
    if (next >= leaves.size()) throw InvalidArgument("tree_unflatten: too few leaves");
    return Tree<T>(std::move(leaves[next++]));
  }
  Tree<T> out;
  ++at;  // '{'
  while (s[at] != '}') {
    const size_t colon = s.find(':', at);
    const std::string key = s.substr(at, colon - at);
    at = colon + 1;
    out.insert(key, unflatten_at(s, at, leaves, next));
    ++at;  // ','
  }
  ++at;
  return out;
}
}  // namespace detail

template <class T>
Tree<T> tree_unflatten(const std::string& structure, std::vector<T> leaves) {
  size_t at = 0, next = 0;
  Tree<T> out = detail::unflatten_at(structure, at, leaves, next);
  if (next != leaves.size()) throw InvalidArgument("tree_unflatten: too many leaves");
  return out;
}

// The leaves by path: each leaf's keys joined by `separator` ("layer/w"), the form the
// checkpoint module names arrays by; a leaf at the root has the path "". Throws InvalidArgument
// for a key holding the separator (its path would be ambiguous).
template <class T>
std::map<std::string, T> tree_to_paths(const Tree<T>& tree, char separator = '/') {
  std::map<std::string, T> out;
  auto visit = [&](const Tree<T>& t, const std::string& path, auto& self) -> void {
    if (t.is_leaf()) {
      out.emplace(path, t.leaf());
      return;
    }
    for (const auto& e : t.entries()) {
      if (e.first.find(separator) != std::string::npos) {
        throw InvalidArgument("tree_to_paths: the key \"" + e.first + "\" holds the separator");
      }
      self(e.second, path.empty() ? e.first : path + separator + e.first, self);
    }
  };
  visit(tree, "", visit);
  return out;
}

// The tree whose leaves are `paths`' values, nested at their `separator`-split keys.
template <class T>
Tree<T> tree_from_paths(const std::map<std::string, T>& paths, char separator = '/') {
  Tree<T> out;
  for (const auto& [path, value] : paths) {
    Tree<T>* node = &out;
    size_t start = 0;
    for (size_t cut; (cut = path.find(separator, start)) != std::string::npos; start = cut + 1) {
      node = &(*node)[path.substr(start, cut - start)];
    }
    node->insert(path.substr(start), Tree<T>(value));
  }
  return out;
}

}  // namespace spmd
