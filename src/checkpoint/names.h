// Names that become paths, and the Zarr spellings of dtypes and chunk keys. Everything read from
// a checkpoint's metadata passes through here before it touches the file system. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spmd/checkpoint.h"
#include "spmd/dtype.h"

namespace spmd::checkpoint {

// The components of an array name ("params/w" -> {"params", "w"}). Throws InvalidArgument naming
// the name when it is not UTF-8, when a component is empty, "." or "..", starts with '.', or
// holds '\\' or NUL (so no name can leave the checkpoint directory or collide with Zarr's
// dot-files), or when its first component is one of the checkpoint's own files (COMMIT,
// spmd_checkpoint.json).
std::vector<std::string> name_components(std::string_view name);

// The directories, from the checkpoint's root, that hold array `name` in `format`: its components
// (kSpmd), or one directory of its components joined by '.' (kOrbax, Orbax's name for the leaf).
// Throws as name_components(), and InvalidArgument when a kOrbax name is one of Orbax's own files.
std::vector<std::string> array_path(std::string_view name, Format format);

// Whether `text` is well-formed UTF-8 (what JSON, and so the metadata, can hold).
bool is_utf8(std::string_view text);

// `text` for a message: bytes that are not printable ASCII as \xNN.
std::string printable(std::string_view text);

// The Zarr v2 dtype of `t` ("<f4", "|b1", …; "bfloat16" as TensorStore spells it).
std::string zarr_dtype(DType t);
// The DType of a Zarr dtype string this library writes; throws InvalidArgument otherwise.
DType dtype_from_zarr(std::string_view zarr);

// The chunk key of chunk coordinates ("0.3"; "0" for rank 0).
std::string chunk_key(const std::vector<int64_t>& coords);
// The coordinates of `key` in a grid of `grid` chunks per dimension. Throws InvalidArgument when
// the key is not that many '.'-separated decimal numbers each inside the grid.
std::vector<int64_t> parse_chunk_key(std::string_view key, const std::vector<int64_t>& grid);

}  // namespace spmd::checkpoint
