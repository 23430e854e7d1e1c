// spmd::numpy::einsum: subscripts parsed, letters found in one operand only summed out, then one
// contraction with the remaining letters (lax::dot; ops/contraction.cc), whose sharding rule reads
// them.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "jit/lax.h"
#include "jit/promotion.h"
#include "jit/trace.h"
#include "lib/numpy/internal.h"
#include "spmd/error.h"
#include "spmd/numpy.h"

namespace spmd::numpy {
namespace {

struct Subscripts {
  std::vector<std::string> inputs;
  std::string output;
};

[[noreturn]] void refuse(const std::string& subscripts, const std::string& why) {
  throw InvalidArgument(fmt::format("einsum(\"{}\"): {}", subscripts, why));
}

Subscripts parse(const std::string& text, size_t operands) {
  Subscripts s;
  const size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  size_t start = 0;
  for (size_t comma; (comma = lhs.find(',', start)) != std::string::npos; start = comma + 1) {
    s.inputs.push_back(lhs.substr(start, comma - start));
  }
  s.inputs.push_back(lhs.substr(start));
  if (s.inputs.size() != operands) {
    refuse(text, fmt::format("{} operand subscripts for {} operands", s.inputs.size(), operands));
  }
  std::map<char, int> count;
  for (const std::string& in : s.inputs) {
    for (char c : in) {
      if (c < 'a' || c > 'z') refuse(text, fmt::format("'{}' is not a lowercase letter", c));
      if (std::count(in.begin(), in.end(), c) > 1)
        refuse(text, fmt::format("'{}' repeats within an operand", c));
      ++count[c];
    }
  }
  if (arrow != std::string::npos) {
    s.output = text.substr(arrow + 2);
    for (char c : s.output) {
      if (count.count(c) == 0) refuse(text, fmt::format("output letter '{}' is in no operand", c));
    }
  } else {
    for (const auto& [c, n] : count) {
      if (n == 1) s.output += c;
    }
  }
  return s;
}

std::map<char, int64_t> sizes_of(const std::string& text, const Subscripts& s,
                                 std::initializer_list<const Tensor*> operands) {
  std::map<char, int64_t> sizes;
  size_t k = 0;
  for (const Tensor* t : operands) {
    const std::string& letters = s.inputs[k++];
    const Shape shape = t->shape();
    if (letters.size() != shape.size()) {
      refuse(text, fmt::format("'{}' has {} letters for an operand of rank {}", letters,
                               letters.size(), shape.size()));
    }
    for (size_t d = 0; d < letters.size(); ++d) {
      auto [it, fresh] = sizes.emplace(letters[d], shape[d]);
      if (!fresh && it->second != shape[d]) {
        refuse(text, fmt::format("'{}' has sizes {} and {}", letters[d], it->second, shape[d]));
      }
    }
  }
  return sizes;
}

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// `t` (letters `from`) with the letters in neither `keep_a` nor `keep_b` summed out.
Tensor sum_unused(const Tensor& t, std::string& from, const std::string& keep_a,
                  const std::string& keep_b) {
  AxisList axes;
  std::string kept;
  for (size_t d = 0; d < from.size(); ++d) {
    if (has(keep_a, from[d]) || has(keep_b, from[d])) {
      kept += from[d];
    } else {
      axes.push_back(static_cast<int>(d));
    }
  }
  from = kept;
  return axes.empty() ? t : sum(t, axes);
}

// `t` (letters `from`) transposed to `order`.
Tensor arrange(const Tensor& t, const std::string& from, const std::string& order) {
  std::vector<int> perm;
  for (char c : order) perm.push_back(static_cast<int>(from.find(c)));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int>(i);
  return identity ? t : transpose(t, perm);
}

}  // namespace

Tensor einsum(const std::string& subscripts, const Tensor& a) {
  compiler::trace_of("einsum", {&a});
  const Subscripts s = parse(subscripts, 1);
  sizes_of(subscripts, s, {&a});
  std::string letters = s.inputs[0];
  const Tensor summed = sum_unused(a, letters, s.output, "");
  return arrange(summed, letters, s.output);
}

namespace {

Tensor einsum_typed(const std::string& subscripts, const Tensor& a, const Tensor& b,
                    const PartitionSpec* out_sharding) {
  auto trace = compiler::trace_of("einsum", {&a, &b});
  const Subscripts s = parse(subscripts, 2);
  sizes_of(subscripts, s, {&a, &b});
  const DType dtype = compiler::promote(a.dtype(), b.dtype());
  // Half types contract in float32 and round once, after any cross-device sum (numpy.h).
  const DType compute = is_half_dtype(dtype) ? DType::kFloat32 : dtype;
  std::string la = s.inputs[0], lb = s.inputs[1];
  const Tensor x = compiler::lax::convert_element_type(sum_unused(a, la, s.output, lb), compute);
  const Tensor y = compiler::lax::convert_element_type(sum_unused(b, lb, s.output, la), compute);
  std::optional<PartitionSpec> typed;
  if (out_sharding != nullptr) {
    typed = internal::out_sharding_spec(*trace, "einsum", *out_sharding, s.output.size());
  }
  return compiler::lax::convert_element_type(compiler::lax::dot(x, y, la, lb, s.output, typed),
                                             dtype);
}

}  // namespace

Tensor einsum(const std::string& subscripts, const Tensor& a, const Tensor& b) {
  return einsum_typed(subscripts, a, b, nullptr);
}
Tensor einsum(const std::string& subscripts, const Tensor& a, const Tensor& b,
              const PartitionSpec& out_sharding) {
  return einsum_typed(subscripts, a, b, &out_sharding);
}

}  // namespace spmd::numpy
