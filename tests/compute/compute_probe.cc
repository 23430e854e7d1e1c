// Run under spmdrun: every named-axis collective inside shard_map, on a 1-D mesh of all devices
// and on 2-D meshes (processes x local devices, and its transpose), over every single axis and
// tuples of axes in both orders, each device's result checked element by element against a
// reference computed from the formula that made the inputs; then shard_map's in/out specs,
// resharding, replication and shape checks, recovery after an error, and pmap. Prints
// "ok …" per check, or "error …" and exits 1.
//
//   compute_probe                every check
//   compute_probe skip-call      process 1 skips one psum inside the function: every process
//                                must get CollectiveMismatch
//   compute_probe skip-shard-map process 1 skips a whole shard_map call: the others must get
//                                DeadlineExceeded naming it (run with SPMD_COLLECTIVE_TIMEOUT)
//   compute_probe leave-early    process 1 returns at once: the others' collective and barrier
//                                raise PeerFailure naming it instead of waiting
//   compute_probe different-function  process 1 runs another function whose collectives line
//                                up: every process must get CollectiveMismatch
#include <spmd/spmd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace {

using spmd::AxisEntry;
using spmd::Block;
using spmd::Shape;

// Failures seen on device threads, reported by the main thread.
std::mutex failures_mu;
std::vector<std::string> failures;

void fail(const std::string& what) {
  std::lock_guard lock(failures_mu);
  failures.push_back(what);
}

void report(const std::string& what) {
  std::lock_guard lock(failures_mu);
  if (!failures.empty()) {
    for (const auto& f : failures) std::printf("error %s\n", f.c_str());
    throw spmd::Error(what + ": " + std::to_string(failures.size()) + " failures");
  }
  std::printf("ok %s\n", what.c_str());
}

// The element at linear position `lin` of the block of the device at flat mesh position `flat`.
int32_t value(int64_t flat, int64_t lin) { return static_cast<int32_t>(flat * 10000 + lin); }

int64_t linear(const Shape& shape, const std::vector<int64_t>& idx) {
  int64_t l = 0;
  for (size_t i = 0; i < shape.size(); ++i) l = l * shape[i] + idx[i];
  return l;
}

// fn(idx) for every multi-index of `shape`, row-major.
void for_each_index(const Shape& shape,
                    const std::function<void(const std::vector<int64_t>&)>& fn) {
  if (spmd::shape_size(shape) == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  while (true) {
    fn(idx);
    int d = static_cast<int>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// What a device knows about itself and its group along some axes, from the mesh alone.
struct Group {
  int64_t me = 0;                // my flat mesh position
  int64_t index = 0;             // my position in the group
  std::vector<int64_t> members;  // flat mesh positions, by group position
};

Group group_of(const spmd::Mesh& mesh, const std::vector<int64_t>& coords,
               const std::vector<int>& dims) {
  Group g;
  const auto& sizes = mesh.axis_sizes();
  g.me = linear(sizes, coords);
  for (int d : dims) g.index = g.index * sizes[d] + coords[d];
  int64_t n = 1;
  for (int d : dims) n *= sizes[d];
  for (int64_t j = 0; j < n; ++j) {
    auto c = coords;
    int64_t rest = j;
    for (size_t k = dims.size(); k-- > 0;) {
      c[dims[k]] = rest % sizes[dims[k]];
      rest /= sizes[dims[k]];
    }
    g.members.push_back(linear(sizes, c));
  }
  return g;
}

Block make_block(int64_t flat, const Shape& shape) {
  std::vector<int32_t> v(static_cast<size_t>(spmd::shape_size(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = value(flat, static_cast<int64_t>(i));
  return Block::from_vector(v, shape);
}

void expect(const Block& got, const Shape& shape, const std::string& what,
            const std::function<int32_t(const std::vector<int64_t>&)>& want) {
  if (got.dtype() != spmd::DType::kInt32 || got.shape() != shape) {
    fail(what + ": got " + got.to_string() + ", expected shape (" + std::to_string(shape.size()) +
         "-d)");
    return;
  }
  const auto data = got.data<int32_t>();
  bool first = true;
  for_each_index(shape, [&](const std::vector<int64_t>& idx) {
    const int32_t w = want(idx);
    const int32_t g = data[linear(shape, idx)];
    if (g != w && first) {
      first = false;
      fail(what + ": element " + std::to_string(linear(shape, idx)) + " is " + std::to_string(g) +
           ", expected " + std::to_string(w));
    }
  });
}

std::vector<int64_t> without(std::vector<int64_t> v, int d) {
  v.erase(v.begin() + d);
  return v;
}
std::vector<int64_t> with(std::vector<int64_t> v, int d, int64_t x) {
  v.insert(v.begin() + d, x);
  return v;
}

// Every collective over `axes` on one device; the reference comes from the formula.
void check_collectives(const spmd::Mesh& mesh, const AxisEntry& axes, const std::string& label) {
  std::vector<int64_t> coords;
  for (const auto& name : mesh.axis_names()) coords.push_back(spmd::axis_index(name));
  std::vector<int> dims;
  for (const auto& name : axes.axes()) dims.push_back(mesh.axis_index(name));
  const Group g = group_of(mesh, coords, dims);
  const auto n = static_cast<int64_t>(g.members.size());
  const std::string at = label + " device " + std::to_string(g.me);

  if (spmd::axis_size(axes) != n) fail(at + ": axis_size " + std::to_string(spmd::axis_size(axes)));
  if (spmd::axis_index(axes) != g.index) {
    fail(at + ": axis_index " + std::to_string(spmd::axis_index(axes)) + ", expected " +
         std::to_string(g.index));
  }

  // Reductions on an odd shape.
  const Shape s = {3, 5};
  const Block x = make_block(g.me, s);
  expect(spmd::psum(x, axes), s, at + " psum", [&](const auto& idx) {
    int32_t t = 0;
    for (int64_t m : g.members) t += value(m, linear(s, idx));
    return t;
  });
  expect(spmd::pmax(x, axes), s, at + " pmax", [&](const auto& idx) {
    return value(*std::max_element(g.members.begin(), g.members.end()), linear(s, idx));
  });
  expect(spmd::pmin(x, axes), s, at + " pmin", [&](const auto& idx) {
    return value(*std::min_element(g.members.begin(), g.members.end()), linear(s, idx));
  });
  {
    std::vector<float> f(15);
    for (size_t i = 0; i < f.size(); ++i)
      f[i] = static_cast<float>(value(g.me, static_cast<int64_t>(i)));
    const Block mean = spmd::pmean(Block::from_vector(f, s), axes);
    const auto got = mean.data<float>();
    for (size_t i = 0; i < f.size(); ++i) {
      float t = 0;
      for (int64_t m : g.members) t += static_cast<float>(value(m, static_cast<int64_t>(i)));
      if (got[i] != t / static_cast<float>(n)) {
        fail(at + " pmean: element " + std::to_string(i) + " is " + std::to_string(got[i]));
        break;
      }
    }
  }
  // A NaN on the group's first device makes pmax and pmin NaN there on every device; the other
  // elements are the plain max and min (named_collectives.h: JAX's CPU all-reduce drops it).
  {
    std::vector<float> f(15);
    for (size_t i = 0; i < f.size(); ++i)
      f[i] = static_cast<float>(value(g.me, static_cast<int64_t>(i)));
    if (g.index == 0) f[3] = std::numeric_limits<float>::quiet_NaN();
    const Block high = spmd::pmax(Block::from_vector(f, s), axes);
    const Block low = spmd::pmin(Block::from_vector(f, s), axes);
    for (size_t i = 0; i < f.size(); ++i) {
      const auto at_i = static_cast<int64_t>(i);
      float top = -std::numeric_limits<float>::infinity();
      float bottom = std::numeric_limits<float>::infinity();
      for (int64_t m : g.members) {
        top = std::max(top, static_cast<float>(value(m, at_i)));
        bottom = std::min(bottom, static_cast<float>(value(m, at_i)));
      }
      const float h = high.data<float>()[i], l = low.data<float>()[i];
      const bool ok = i == 3 ? std::isnan(h) && std::isnan(l) : h == top && l == bottom;
      if (!ok) {
        fail(at + " pmax/pmin with a NaN: element " + std::to_string(i) + " is " +
             std::to_string(h) + ", " + std::to_string(l));
        break;
      }
    }
  }
  // pmean of integers is floating, as JAX's: int32 -> float32, int64 -> float64.
  {
    const Block mean = spmd::pmean(x, axes);
    std::vector<int64_t> wide(15);
    for (size_t i = 0; i < wide.size(); ++i)
      wide[i] = (int64_t{1} << 40) + value(g.me, static_cast<int64_t>(i));
    const Block wide_mean = spmd::pmean(Block::from_vector(wide, s), axes);
    if (mean.dtype() != spmd::DType::kFloat32 || wide_mean.dtype() != spmd::DType::kFloat64) {
      fail(at + " pmean of integers: dtypes " + std::string(spmd::dtype_name(mean.dtype())) + ", " +
           std::string(spmd::dtype_name(wide_mean.dtype())));
    } else {
      for (size_t i = 0; i < 15; ++i) {
        int64_t t = 0;
        for (int64_t m : g.members) t += value(m, static_cast<int64_t>(i));
        const double want = static_cast<double>(t) / static_cast<double>(n);
        const double want_wide =
            static_cast<double>(t + n * (int64_t{1} << 40)) / static_cast<double>(n);
        if (mean.data<float>()[i] != static_cast<float>(want) ||
            wide_mean.data<double>()[i] != want_wide) {
          fail(at + " pmean of integers: element " + std::to_string(i));
          break;
        }
      }
    }
  }

  // all_gather along each dimension, stacked and tiled.
  for (int dim = 0; dim <= 2; ++dim) {
    const Shape out = with(s, dim, n);
    expect(
        spmd::all_gather(x, axes, dim), out, at + " all_gather dim " + std::to_string(dim),
        [&](const auto& idx) { return value(g.members[idx[dim]], linear(s, without(idx, dim))); });
  }
  for (int dim = 0; dim <= 1; ++dim) {
    Shape out = s;
    out[dim] *= n;
    expect(spmd::all_gather(x, axes, dim, true), out,
           at + " all_gather tiled dim " + std::to_string(dim), [&](const auto& idx) {
             auto src = idx;
             src[dim] %= s[dim];
             return value(g.members[idx[dim] / s[dim]], linear(s, src));
           });
  }

  // psum_scatter and all_to_all need a dimension of size n (or a multiple).
  for (int dim = 0; dim <= 1; ++dim) {
    Shape in = {2, 3};
    in[dim] = n;
    const Block y = make_block(g.me, in);
    expect(spmd::psum_scatter(y, axes, dim), without(in, dim),
           at + " psum_scatter dim " + std::to_string(dim), [&](const auto& idx) {
             int32_t t = 0;
             for (int64_t m : g.members) t += value(m, linear(in, with(idx, dim, g.index)));
             return t;
           });
    Shape tiled_in = {2, 3};
    tiled_in[dim] = 2 * n;
    const Block z = make_block(g.me, tiled_in);
    Shape tiled_out = tiled_in;
    tiled_out[dim] = 2;
    expect(spmd::psum_scatter(z, axes, dim, true), tiled_out,
           at + " psum_scatter tiled dim " + std::to_string(dim), [&](const auto& idx) {
             auto src = idx;
             src[dim] += 2 * g.index;
             int32_t t = 0;
             for (int64_t m : g.members) t += value(m, linear(tiled_in, src));
             return t;
           });
  }
  for (int split = 0; split <= 2; ++split) {
    Shape in = {2, 3, 2};
    in[split] = n;
    const Block y = make_block(g.me, in);
    for (int concat = 0; concat <= 2; ++concat) {
      const Shape out = with(without(in, split), concat, n);
      expect(spmd::all_to_all(y, axes, split, concat), out,
             at + " all_to_all " + std::to_string(split) + "->" + std::to_string(concat),
             [&](const auto& idx) {
               const int64_t j = idx[concat];
               return value(g.members[j], linear(in, with(without(idx, concat), split, g.index)));
             });
    }
    Shape tin = {2, 3, 2};
    tin[split] = 2 * n;
    const Block z = make_block(g.me, tin);
    Shape piece = tin;
    piece[split] = 2;
    for (int concat = 0; concat <= 2; ++concat) {
      Shape out = piece;
      out[concat] *= n;
      expect(spmd::all_to_all(z, axes, split, concat, true), out,
             at + " all_to_all tiled " + std::to_string(split) + "->" + std::to_string(concat),
             [&](const auto& idx) {
               const int64_t j = idx[concat] / piece[concat];
               auto src = idx;
               src[concat] %= piece[concat];
               src[split] += 2 * g.index;
               return value(g.members[j], linear(tin, src));
             });
    }
  }

  // ppermute: a cyclic shift, and a single pair (everyone else gets zeros).
  std::vector<std::pair<int, int>> shift;
  for (int j = 0; j < n; ++j) shift.emplace_back(j, static_cast<int>((j + 1) % n));
  expect(spmd::ppermute(x, axes, shift), s, at + " ppermute shift",
         [&](const auto& idx) { return value(g.members[(g.index + n - 1) % n], linear(s, idx)); });
  const int target = n > 1 ? 1 : 0;
  expect(spmd::ppermute(x, axes, {{0, target}}), s, at + " ppermute pair", [&](const auto& idx) {
    return g.index == target ? value(g.members[0], linear(s, idx)) : 0;
  });
}

// Every axis and tuple of axes of `mesh`, including the empty tuple and reversed orders.
std::vector<AxisEntry> axis_sets(const spmd::Mesh& mesh) {
  const auto& names = mesh.axis_names();
  std::vector<AxisEntry> out;
  out.emplace_back(spmd::None);
  for (const auto& a : names) out.emplace_back(a);
  if (names.size() == 2) {
    out.push_back(AxisEntry{names[0], names[1]});
    out.push_back(AxisEntry{names[1], names[0]});
  }
  return out;
}

std::string axes_label(const AxisEntry& axes) {
  std::string s = "(";
  for (const auto& a : axes.axes()) s += (s.size() > 1 ? "," : "") + a;
  return s + ")";
}

void check_mesh(const spmd::Mesh& mesh) {
  for (const auto& axes : axis_sets(mesh)) {
    const std::string label = mesh.to_string() + " over " + axes_label(axes);
    auto run = spmd::shard_map(
        [&] {
          check_collectives(mesh, axes, label);
          return Block::scalar<int32_t>(0);
        },
        mesh, {}, spmd::P());
    run();
    report("collectives " + label);
  }
}

// The global int32 array whose element is its flat index.
spmd::HostArray iota(const Shape& shape) {
  std::vector<int32_t> v(static_cast<size_t>(spmd::shape_size(shape)));
  std::iota(v.begin(), v.end(), 0);
  return spmd::HostArray::from_vector(v, shape);
}

void check_shards(const spmd::Array& a, const spmd::HostArray& want, const std::string& what) {
  if (a.shape() != want.shape()) throw spmd::Error(what + ": wrong global shape");
  for (const auto& s : a.addressable_shards()) {
    if (!(s.data == want.slice(s.index))) {
      throw spmd::Error(what + ": shard of " + s.device.to_string() + " holds " +
                        s.data.to_string());
    }
  }
  std::printf("ok %s\n", what.c_str());
}

// Runs `call`, which must throw E with `text` in its message.
template <class E>
void expect_error(const std::string& what, const std::string& text,
                  const std::function<void()>& call) {
  try {
    call();
  } catch (const E& e) {
    if (std::string(e.what()).find(text) == std::string::npos) {
      throw spmd::Error(what + ": unexpected message: " + e.what());
    }
    std::printf("ok %s raises: %s\n", what.c_str(), e.what());
    return;
  }
  throw spmd::Error(what + ": no error");
}

void check_specs() {
  const int64_t n = spmd::device_count();
  const int64_t np = spmd::process_count();
  const int64_t k = spmd::local_device_count();
  const spmd::Mesh line(spmd::devices(), {"x"});
  const spmd::NamedSharding rows(line, spmd::P("x"));
  const spmd::HostArray g = iota({2 * n, 3});
  const spmd::Array x = spmd::device_put(g, rows);

  // Identity keeps every shard; a psum over rows gives the sum of the row blocks, replicated.
  const auto same = spmd::shard_map([](Block b) { return b; }, line, {spmd::P("x")}, spmd::P("x"));
  check_shards(same(x), g, "shard_map identity P('x') -> P('x')");
  {
    spmd::HostArray want = spmd::HostArray::zeros(spmd::DType::kInt32, {2, 3});
    auto w = want.mutable_data<int32_t>();
    const auto src = g.data<int32_t>();
    for (int64_t i = 0; i < 2 * n * 3; ++i) w[i % 6] += src[i];
    const auto total = spmd::shard_map([](Block b) { return spmd::psum(std::move(b), "x"); }, line,
                                       {spmd::P("x")}, spmd::P());
    check_shards(total(x), want, "shard_map psum P('x') -> P()");
  }
  // An input laid out otherwise is resharded to in_specs first.
  {
    const spmd::HostArray h = iota({3, 2 * n});
    const spmd::Array cols =
        spmd::device_put(h, spmd::NamedSharding(line, spmd::P(spmd::None, "x")));
    const auto as_rows =
        spmd::shard_map([](Block b) { return b; }, line, {spmd::P(spmd::None)}, spmd::P());
    check_shards(as_rows(cols), h, "shard_map reshards P(None, 'x') input to P(None)");
  }
  // Several inputs and outputs, on a 2-D mesh, with tuple specs.
  const spmd::Mesh grid(spmd::devices(), {np, k}, {"p", "l"});
  {
    const spmd::HostArray a = iota({np * 2, k * 3});
    const spmd::Array ga = spmd::device_put(a, spmd::NamedSharding(grid, spmd::P("p", "l")));
    const auto pair = spmd::shard_map(
        [](const Block& b, const Block& c) {
          return std::vector<Block>{spmd::add(b, c), spmd::all_gather(b, {"p", "l"}, 0, true)};
        },
        grid, {spmd::P("p", "l"), spmd::P("p", "l")},
        {spmd::P("p", "l"), spmd::P(spmd::None, spmd::None)});
    const auto outs = pair(ga, ga);
    spmd::HostArray twice = a;
    for (auto& v : twice.mutable_data<int32_t>()) v *= 2;
    check_shards(outs[0], twice, "shard_map two inputs, add, P('p','l')");
    // Gathering the (2, 3) blocks tiled over (p, l) stacks them in device order.
    spmd::HostArray stacked = spmd::HostArray::zeros(spmd::DType::kInt32, {n * 2, 3});
    for (int64_t d = 0; d < n; ++d) {
      const int64_t p = d / k;
      const int64_t l = d % k;
      stacked.assign({{d * 2, d * 2 + 2}, {0, 3}},
                     a.slice({{p * 2, p * 2 + 2}, {l * 3, l * 3 + 3}}));
    }
    check_shards(outs[1], stacked, "shard_map all_gather over ('p','l') -> P(None, None)");
  }

  // Replication is checked: blocks that differ along a left-out axis are an error everywhere,
  // and the next call works (the groups are made again).
  if (n > 1) {
    const auto differ = spmd::shard_map(
        [] { return Block::scalar<int32_t>(static_cast<int32_t>(spmd::axis_index("x"))); }, line,
        {}, spmd::P());
    expect_error<spmd::InvalidArgument>("check_rep", "leaves out mesh axis 'x'", [&] { differ(); });
    const auto loose = spmd::shard_map(
        [] { return Block::scalar<int32_t>(static_cast<int32_t>(spmd::axis_index("x"))); }, line,
        {}, spmd::P(), spmd::ShardMapOptions{.check_rep = false});
    loose();
    std::printf("ok check_rep = false accepts differing blocks\n");
    const auto shapes = spmd::shard_map(
        [] { return Block::zeros(spmd::DType::kFloat32, {spmd::axis_index("x") == 0 ? 2 : 3}); },
        line, {}, spmd::P("x"));
    expect_error<spmd::InvalidArgument>("shape check", "differs in shape", [&] { shapes(); });
  }
  expect_error<spmd::InvalidArgument>("fn throwing everywhere", "bad block", [&] {
    spmd::shard_map(
        [](Block b) -> Block {
          b = spmd::psum(b, "x");
          throw spmd::InvalidArgument("bad block");
        },
        line, {spmd::P("x")}, spmd::P())(x);
  });
  check_shards(same(x), g, "shard_map works again after a failed call");
  expect_error<spmd::InvalidArgument>("unknown axis", "has no axis 'y'", [&] {
    spmd::shard_map([](Block b) { return spmd::psum(std::move(b), "y"); }, line, {spmd::P("x")},
                    spmd::P())(x);
  });
  expect_error<spmd::InvalidArgument>("psum outside shard_map", "only inside",
                                      [&] { spmd::psum(Block::scalar(1.0f), "x"); });
  expect_error<spmd::InvalidArgument>("nested shard_map", "nesting is not supported", [&] {
    spmd::shard_map(
        [&](const Block& b) {
          same(x);
          return b;
        },
        line, {spmd::P("x")}, spmd::P("x"))(x);
  });
  check_shards(same(x), g, "shard_map works again after a nested call");

  // pmap: psum of ones is the device count on every device; axis_index is the global device id.
  const auto ones = spmd::HostArray::from_vector(std::vector<float>(k, 1.0f), {k});
  const auto count = spmd::pmap([](Block b) { return spmd::psum(std::move(b), "i"); }, "i")(ones);
  for (float v : count.data<float>()) {
    if (v != static_cast<float>(n)) throw spmd::Error("pmap psum: " + count.to_string());
  }
  std::printf("ok pmap psum of ones = %lld on every device\n", static_cast<long long>(n));
  const auto ids = spmd::pmap(
      [](const Block&) { return Block::scalar<int64_t>(spmd::axis_index("i")); }, "i")(ones);
  for (int64_t i = 0; i < k; ++i) {
    if (ids.data<int64_t>()[i] != spmd::local_devices()[i].id()) {
      throw spmd::Error("pmap axis_index: " + ids.to_string());
    }
  }
  std::printf("ok pmap axis_index = global device id\n");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "all";
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each check line as it happens
  try {
    // skip-shard-map-options: the deadline from Options instead of SPMD_COLLECTIVE_TIMEOUT.
    if (mode == "skip-shard-map-options") {
      spmd::distributed::initialize({.collective_timeout = std::chrono::seconds(3)});
    } else {
      spmd::distributed::initialize();
    }
    const int me = spmd::process_index();
    const spmd::Mesh line(spmd::devices(), {"x"});
    if (mode == "skip-call") {
      // Process 1 skips the first psum (of 4 elements); its next call (of 2) meets it.
      expect_error<spmd::CollectiveMismatch>("skipped psum", "psum", [&] {
        spmd::shard_map(
            [me] {
              if (me != 1) spmd::psum(Block::zeros(spmd::DType::kFloat32, {4}), "x");
              return spmd::psum(Block::zeros(spmd::DType::kFloat32, {2}), "x");
            },
            line, {}, spmd::P())();
      });
      spmd::multihost::sync_global_devices("skip-call done");
      return 0;
    }
    if (mode == "leave-early") {
      // Process 1 leaves at once (shutdown at exit); the others wait for it in a collective and
      // at a barrier, and must be told who left instead of waiting out the shutdown barrier.
      spmd::Communicator world = spmd::world();  // made by everyone
      if (me == 1) return 0;
      std::vector<float> v(4, 1.0f);
      expect_error<spmd::PeerFailure>("all_reduce with a process that left", "process 1 (host",
                                      [&] { world.all_reduce(v); });
      expect_error<spmd::PeerFailure>("making a communicator with a process that left",
                                      "called shutdown()", [&] {
                                        const std::vector<int> devices = {0, 1};
                                        spmd::make_communicators(devices);
                                      });
      expect_error<spmd::PeerFailure>(
          "a barrier with a process that left", "called shutdown()",
          [&] { spmd::distributed::client().wait_at_barrier("late", std::chrono::seconds(60)); });
      return 0;
    }
    if (mode == "different-function") {
      // Process 1 runs another function whose one psum lines up with the others'.
      const auto f =
          spmd::shard_map([] { return spmd::psum(Block::scalar(1.0f), "x"); }, line, {}, spmd::P());
      const auto g =
          spmd::shard_map([] { return spmd::psum(Block::scalar(2.0f), "x"); }, line, {}, spmd::P());
      expect_error<spmd::CollectiveMismatch>("a different shard_map function",
                                             "ran different shard_map calls", [&] {
                                               if (me == 1) {
                                                 g();
                                               } else {
                                                 f();
                                               }
                                             });
      spmd::multihost::sync_global_devices("different-function done");
      return 0;
    }
    if (mode == "skip-shard-map" || mode == "skip-shard-map-options") {
      const auto total =
          spmd::shard_map([] { return spmd::psum(Block::scalar(1.0f), "x"); }, line, {}, spmd::P());
      total();  // everyone: the communicators exist
      if (me != 1) {
        expect_error<spmd::DeadlineExceeded>("process 1 skipping shard_map", "process 1",
                                             [&] { total(); });
      }
      spmd::multihost::sync_global_devices("skip-shard-map done", std::chrono::seconds(60));
      return 0;
    }
    const int64_t np = spmd::process_count();
    const int64_t k = spmd::local_device_count();
    check_mesh(line);
    check_mesh(spmd::Mesh(spmd::devices(), {np, k}, {"p", "l"}));
    // The transpose: 'a' runs over local devices (k), 'b' over processes.
    std::vector<spmd::Device> transposed;
    for (int64_t l = 0; l < k; ++l) {
      for (int64_t p = 0; p < np; ++p) transposed.push_back(spmd::devices()[p * k + l]);
    }
    check_mesh(spmd::Mesh(transposed, {k, np}, {"a", "b"}));
    check_specs();
    return 0;
  } catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 1;
  }
}
