// Orbax's files trusted by nothing (issue 48, "bad input"): real manifests, B+tree nodes, Zarr
// metadata and shards that Orbax wrote (the orbax_files fixture: tests/checkpoint/orbax_write.py,
// in SPMD_ORBAX_DIR), cut at every length and bit-flipped at random, each decode to what was
// written or fail as an spmd::Error, never a crash or another exception. Bit flips are tried twice:
// as stored (the CRC-32C must catch every one) and past the checksum, in a body re-framed
// uncompressed with a recomputed CRC, so the decoder's own checks are what stand.
#include <gtest/gtest.h>
#include <zstd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "checkpoint/byte_reader.h"
#include "checkpoint/crc32c.h"
#include "checkpoint/ocdbt_format.h"
#include "checkpoint/ocdbt_store.h"
#include "checkpoint/zarr_format.h"
#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<char>;

constexpr uint32_t kNodeMagic = 0x0cdb20de;
constexpr uint64_t kBody = uint64_t{64} << 20;

std::string orbax_dir() {
  const char* dir = std::getenv("SPMD_ORBAX_DIR");
  if (dir == nullptr) ADD_FAILURE() << "SPMD_ORBAX_DIR is not set (CTest sets it)";
  return dir == nullptr ? "" : dir;
}

Bytes slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

uint32_t be32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint64_t le64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

// An encoded manifest or node, and how to decode it.
struct Frame {
  std::string name;
  Bytes bytes;
  bool manifest = false;
};

void decode(const Frame& f, std::span<const char> bytes) {
  if (f.manifest) {
    decode_ocdbt_manifest(bytes, f.name);
  } else {
    decode_ocdbt_node(bytes, "", kBody, f.name);
  }
}

// Every manifest (manifest.ocdbt, manifest.<generation>) under `root`, and every B+tree node found
// in its data files (by its magic number and length).
void add_frames(const fs::path& root, std::vector<Frame>& frames) {
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const Bytes b = slurp(e.path());
    if (e.path().filename().string().starts_with("manifest.")) {
      frames.push_back({e.path().string(), b, true});
      continue;
    }
    if (e.path().parent_path().filename() != "d") continue;
    for (size_t at = 0; at + 16 <= b.size(); ++at) {
      if (be32(&b[at]) != kNodeMagic) continue;
      const uint64_t length = le64(&b[at + 4]);
      if (length < 16 || length > b.size() - at) continue;
      frames.push_back({e.path().string() + "+" + std::to_string(at),
                        Bytes(b.begin() + static_cast<ptrdiff_t>(at),
                              b.begin() + static_cast<ptrdiff_t>(at + length)),
                        false});
    }
  }
}

// The frames of every OCDBT database of the fixture.
std::vector<Frame> real_frames() {
  std::vector<Frame> frames;
  // Only what Orbax and TensorStore wrote: other tests add spmd's checkpoints beside them.
  for (const char* form :
       {"std", "zarr3", "mesh1x4", "two", "manager", "items", "ocdbt-deep", "ocdbt-numbered"}) {
    add_frames(fs::path(orbax_dir()) / form, frames);
  }
  return frames;
}

// Either decodes, or throws spmd::Error; anything else fails the test.
bool decodes(const Frame& f, std::span<const char> bytes, const std::string& what) {
  try {
    decode(f, bytes);
    return true;
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << " of " << f.name << " threw a " << typeid(e).name()
                  << ", not an spmd::Error: " << e.what();
    return false;
  }
}

// The frame with its body decompressed and stored uncompressed, under a recomputed length and
// CRC-32C: a valid encoding of the same manifest or node.
Bytes uncompressed(const Bytes& b) {
  EXPECT_EQ(b[12], 0) << "format version";
  Bytes body(b.begin() + 14, b.end() - 4);
  if (b[13] == 1) {
    const unsigned long long known = ZSTD_getFrameContentSize(body.data(), body.size());
    Bytes out(known <= kBody ? known : kBody);
    const size_t n = ZSTD_decompress(out.data(), out.size(), body.data(), body.size());
    EXPECT_FALSE(ZSTD_isError(n));
    out.resize(n);
    body = out;
  }
  Bytes f(14 + body.size() + 4);
  std::copy(b.begin(), b.begin() + 13, f.begin());  // magic, length (rewritten below), version
  f[13] = 0;                                        // stored uncompressed
  std::copy(body.begin(), body.end(), f.begin() + 14);
  const uint64_t length = f.size();
  for (int i = 0; i < 8; ++i) f[4 + i] = static_cast<char>(length >> (8 * i));
  const uint32_t crc = crc32c(std::span<const char>(f).first(f.size() - 4));
  for (int i = 0; i < 4; ++i) f[f.size() - 4 + i] = static_cast<char>(crc >> (8 * i));
  return f;
}

void reseal(Bytes& f) {
  const uint32_t crc = crc32c(std::span<const char>(f).first(f.size() - 4));
  for (int i = 0; i < 4; ++i) f[f.size() - 4 + i] = static_cast<char>(crc >> (8 * i));
}

TEST(Crc32c, KnownVectors) {
  const std::string digits = "123456789";
  EXPECT_EQ(crc32c(digits), 0xe3069283u);
  EXPECT_EQ(crc32c(std::string()), 0u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8a9136aau);  // RFC 3720's test vector
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62a8ab43u);
}

TEST(ByteReader, VarintsAndBounds) {
  const std::string bytes = {'\x96', '\x01', '\x7f', '\x80'};
  ByteReader r(bytes, "test bytes");
  EXPECT_EQ(r.varint("a"), 150u);
  EXPECT_EQ(r.varint("b"), 127u);
  EXPECT_THROW(r.varint("c"), Error);  // its continuation bit promises a byte that is not there
  const std::string too_long(11, '\x80');
  ByteReader l(too_long, "long");
  EXPECT_THROW(l.varint("d"), Error);
  const std::string max = {'\xff', '\xff', '\xff', '\xff', '\xff',
                           '\xff', '\xff', '\xff', '\xff', '\x01'};
  ByteReader m(max, "max");
  EXPECT_EQ(m.varint("e"), UINT64_MAX);
  std::string over = max;
  over.back() = '\x02';
  ByteReader o(over, "over");
  EXPECT_THROW(o.varint("f"), Error);
  ByteReader s(bytes, "short");
  EXPECT_THROW(s.bytes(5, "g"), Error);
  try {
    ByteReader(bytes, "the named bytes").u64le("length");
    FAIL() << "read past the end";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the named bytes"), std::string::npos) << e.what();
  }
}

TEST(OrbaxUntrusted, RealManifestsAndNodesDecode) {
  const auto frames = real_frames();
  size_t manifests = 0;
  for (const auto& f : frames) {
    EXPECT_NO_THROW(decode(f, f.bytes)) << f.name;
    manifests += f.manifest;
  }
  // std, zarr3, mesh1x4, two (a root and two per process), the manager's and items' steps.
  EXPECT_GE(manifests, 12u);
  EXPECT_GE(frames.size() - manifests, 12u);
}

TEST(OrbaxUntrusted, EveryTruncationIsAnError) {
  for (const auto& f : real_frames()) {
    for (size_t n = 0; n < f.bytes.size(); ++n) {
      EXPECT_FALSE(decodes(f, std::span<const char>(f.bytes).first(n), "a truncation"))
          << f.name << " cut to " << n << " bytes decoded";
    }
  }
}

TEST(OrbaxUntrusted, TheChecksumCatchesEveryStoredBitFlip) {
  std::mt19937_64 rng(48);
  for (const auto& f : real_frames()) {
    for (int k = 0; k < 200; ++k) {
      Bytes b = f.bytes;
      const size_t bit = rng() % (b.size() * 8);
      b[bit / 8] = static_cast<char>(b[bit / 8] ^ (1 << (bit % 8)));
      EXPECT_FALSE(decodes(f, b, "a bit flip")) << f.name << " with bit " << bit << " flipped";
    }
  }
}

TEST(OrbaxUntrusted, BitFlipsPastTheChecksumDecodeOrFailCleanly) {
  std::mt19937_64 rng(49);
  size_t refused = 0;
  size_t tried = 0;
  for (const auto& f : real_frames()) {
    const Bytes clean = uncompressed(f.bytes);
    ASSERT_TRUE(decodes(f, clean, "the re-framed original")) << f.name;
    for (int k = 0; k < 300; ++k) {
      Bytes b = clean;
      for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
        const size_t bit = size_t{112} + rng() % ((b.size() - 18) * 8);  // within the body
        b[bit / 8] = static_cast<char>(b[bit / 8] ^ (1 << (bit % 8)));
      }
      reseal(b);
      refused += !decodes(f, b, "a resealed bit flip");
      ++tried;
    }
  }
  // Most flips hit a count, a length, an id or the order of keys and are refused; a flip inside a
  // key or a value's bytes still decodes. Both happen.
  EXPECT_GT(refused, tried / 10);
  EXPECT_LT(refused, tried);
}

TEST(OrbaxUntrusted, ADataFilePathLeadingOutOfTheDatabaseIsRefused) {
  const fs::path root = fs::path(orbax_dir()) / "std";
  Bytes m = uncompressed(slurp(root / "manifest.ocdbt"));
  const std::string text(m.begin(), m.end());
  const size_t at = text.find("d/");
  ASSERT_NE(at, std::string::npos);
  m[at] = '.';
  m[at + 1] = '.';
  m[at + 2] = '/';
  reseal(m);
  const fs::path copy = fs::temp_directory_path() / ("orbax-escape-" + std::to_string(getpid()));
  fs::remove_all(copy);
  fs::copy(root, copy, fs::copy_options::recursive);
  std::ofstream(copy / "manifest.ocdbt", std::ios::binary | std::ios::trunc)
      .write(m.data(), static_cast<std::streamsize>(m.size()));
  try {
    OcdbtStore::open(copy.string());
    ADD_FAILURE() << "a path with \"..\" was followed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a path beneath it"), std::string::npos) << e.what();
  }
  fs::remove_all(copy);
}

// TensorStore's own OCDBT (orbax_write.py's ocdbt-deep and ocdbt-numbered): B+trees of several
// levels, version trees with interior nodes, numbered manifests; every key and value as written.
TEST(OcdbtStore, DeepTreesAndNumberedManifestsReadAsWritten) {
  for (const char* name : {"ocdbt-deep", "ocdbt-numbered"}) {
    const fs::path root = fs::path(orbax_dir()) / name;
    const Bytes text = slurp(root.string() + ".json");
    const auto expected = nlohmann::json::parse(text.begin(), text.end());
    const OcdbtStore store = OcdbtStore::open(root.string());
    const auto keys = store.keys();
    ASSERT_EQ(keys.size(), expected.size()) << name;
    for (const auto& key : keys) {
      ASSERT_TRUE(expected.contains(key)) << key;
      const auto value = store.read(key, 1 << 20);
      ASSERT_TRUE(value.has_value()) << key;
      EXPECT_EQ(std::string(value->begin(), value->end()), expected[key].get<std::string>())
          << name << " " << key;
    }
    EXPECT_FALSE(store.read("leaf000/absent", 1 << 20).has_value());
  }
  const auto deep =
      decode_ocdbt_manifest(slurp(fs::path(orbax_dir()) / "ocdbt-deep" / "manifest.ocdbt"), "deep");
  EXPECT_GE(deep.versions.back().root_height, 2) << "the B+tree should have several levels";
  EXPECT_GE(deep.versions.back().generation, 20u);  // 20 commits (and the empty first version)
  const auto numbered = decode_ocdbt_manifest(
      slurp(fs::path(orbax_dir()) / "ocdbt-numbered" / "manifest.ocdbt"), "numbered");
  EXPECT_TRUE(numbered.config.numbered);
  EXPECT_TRUE(numbered.versions.empty());
}

TEST(OrbaxUntrusted, AForeignManifestIsNamed) {
  const std::string json = R"({"not": "a manifest"})";
  try {
    decode_ocdbt_manifest(json, "/x/manifest.ocdbt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/x/manifest.ocdbt"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("not an OCDBT manifest"), std::string::npos) << e.what();
  }
}

// The Zarr metadata and the stored chunks of the OCDBT checkpoints, as Orbax wrote them.
struct StoredArray {
  std::string name;
  ZarrArray zarr;
  std::string text;
  int format;
  std::vector<Buffer> chunks;
};

std::vector<StoredArray> stored_arrays(const std::string& form) {
  const OcdbtStore store = OcdbtStore::open((fs::path(orbax_dir()) / form).string());
  std::vector<StoredArray> out;
  for (const auto& key : store.keys()) {
    const bool v2 = key.ends_with("/.zarray");
    if (!v2 && !key.ends_with("/zarr.json")) continue;
    const Buffer text = *store.read(key, 1 << 20);
    StoredArray a{key, {}, std::string(text.begin(), text.end()), v2 ? 2 : 3, {}};
    a.zarr = parse_zarr_metadata(a.text, a.format, key);
    const std::string param = key.substr(0, key.rfind('/'));
    for (const auto& k : store.keys()) {
      if (k.starts_with(param + "/") && k != key) a.chunks.push_back(*store.read(k, 1 << 30));
    }
    out.push_back(std::move(a));
  }
  return out;
}

TEST(OrbaxUntrusted, ZarrMetadataCutShortIsAnError) {
  for (const char* form : {"std", "zarr3"}) {
    const auto arrays = stored_arrays(form);
    ASSERT_GE(arrays.size(), 8u) << form;
    for (const auto& a : arrays) {
      for (size_t n = 0; n < a.text.size(); ++n) {
        EXPECT_THROW(parse_zarr_metadata(a.text.substr(0, n), a.format, a.name), Error)
            << a.name << " cut to " << n;
      }
    }
  }
}

TEST(OrbaxUntrusted, ChunksAndShardsCutShortAreErrors) {
  for (const char* form : {"std", "zarr3"}) {
    for (const auto& a : stored_arrays(form)) {
      ASSERT_FALSE(a.chunks.empty()) << a.name;
      Buffer out(static_cast<size_t>(shape_size(a.zarr.chunks)) * dtype_size(a.zarr.dtype));
      for (const auto& chunk : a.chunks) {
        EXPECT_NO_THROW(decode_zarr_chunk(a.zarr, chunk, out, a.name)) << a.name;
        for (size_t n = 0; n < chunk.size(); ++n) {
          const Buffer cut(chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(n));
          EXPECT_THROW(decode_zarr_chunk(a.zarr, cut, out, a.name), Error)
              << a.name << " cut to " << n;
        }
      }
    }
  }
}

// A .zarray of one chunk of 2 elements of `dtype` with `fill` (JSON text), as a user's Zarr
// array may have: what a chunk never written reads as.
std::vector<char> filled(const std::string& dtype, const std::string& fill) {
  const std::string text = R"({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": ")" + dtype +
                           R"(", "compressor": null, "filters": null, "order": "C", )" +
                           R"("fill_value": )" + fill + "}";
  const ZarrArray a = parse_zarr_metadata(text, 2, "test/.zarray");
  std::vector<char> out(2 * dtype_size(a.dtype));
  decode_zarr_chunk(a, std::nullopt, out, "test/0");
  return out;
}

template <class T>
T first(const std::vector<char>& bytes) {
  T x;
  std::memcpy(&x, bytes.data(), sizeof(x));
  return x;
}

TEST(ZarrFill, AChunkNeverWrittenReadsAsItsFillValueAtTheEdges) {
  EXPECT_TRUE(std::isnan(to_float(first<float16>(filled("<f2", R"("NaN")")))));
  EXPECT_EQ(to_float(first<float16>(filled("<f2", R"("-Infinity")"))), -HUGE_VALF);
  EXPECT_EQ(to_float(first<bfloat16>(filled("bfloat16", "1.5"))), 1.5f);
  EXPECT_EQ(first<float>(filled("<f4", R"("Infinity")")), HUGE_VALF);
  EXPECT_TRUE(std::signbit(first<double>(filled("<f8", "-0.0"))));
  EXPECT_EQ(first<int64_t>(filled("<i8", "9007199254740993")), 9007199254740993);  // 2^53 + 1
  EXPECT_EQ(first<uint64_t>(filled("<u8", "18446744073709551615")), UINT64_MAX);
  EXPECT_EQ(first<int8_t>(filled("|i1", "-128")), -128);
  EXPECT_EQ(first<int32_t>(filled("<i4", "7.0")), 7);
  EXPECT_EQ(first<int32_t>(filled("<i4", "null")), 0);
  const auto both = filled("<i2", "-3");
  EXPECT_EQ(first<int16_t>(std::vector<char>(both.begin() + 2, both.end())), -3);  // every element
  // What the dtype cannot hold exactly is refused, naming the file, never cast.
  for (const auto& [dtype, fill] :
       std::vector<std::pair<std::string, std::string>>{{"|i1", "300"},
                                                        {"|u1", "-1"},
                                                        {"<i4", "1.5"},
                                                        {"<i4", R"("NaN")"},
                                                        {"<u8", "-1"},
                                                        {"|b1", "2"},
                                                        {"<f4", R"("nope")"},
                                                        {"<i8", "1e30"}}) {
    try {
      filled(dtype, fill);
      ADD_FAILURE() << dtype << " filled with " << fill;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("test/.zarray"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace spmd::checkpoint
