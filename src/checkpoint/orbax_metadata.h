// The files that make an spmd checkpoint one Orbax restores too (Format::kOrbax): Orbax's
// _METADATA (the tree: each leaf's keys and value type), _sharding (each leaf's NamedSharding, as
// Orbax serializes it), _CHECKPOINT_METADATA (the step's metrics and commit time) and
// commit_success.txt. Their contents follow what orbax-checkpoint 0.12.8 writes for its
// non-OCDBT Zarr v2 form (use_ocdbt=False), which its default restore reads.
#pragma once

#include <string>

#include "checkpoint/metadata.h"
#include "spmd/sharding.h"

namespace spmd::checkpoint {

inline constexpr const char* kOrbaxTreeMetadataFile = "_METADATA";
inline constexpr const char* kOrbaxShardingFile = "_sharding";
inline constexpr const char* kOrbaxStepMetadataFile = "_CHECKPOINT_METADATA";
inline constexpr const char* kOrbaxCommitFile = "commit_success.txt";

// `sharding` as Orbax serializes a NamedSharding into _sharding: mesh shape, axis names and
// partition spec, without device ids (Orbax then lays the mesh over jax.devices() of the job that
// restores it). Empty for a sharding that is not a NamedSharding (Orbax restores such a leaf only
// onto a sharding its caller gives).
std::string orbax_sharding(const Sharding& sharding);

// The contents of _METADATA for `record`: every array a jax.Array whose keys are its name's
// components, each typed as Orbax types them: a sequence index (1) under a node of
// record.sequence_nodes, else a dict key (2).
std::string orbax_tree_metadata(const CheckpointRecord& record);
// The contents of _sharding: {base64 of the leaf's Orbax name: orbax_sharding()}.
std::string orbax_sharding_file(const CheckpointRecord& record);
// The contents of _CHECKPOINT_METADATA: the finite metrics, the user metadata, and now as both the
// start and the commit time.
std::string orbax_step_metadata(const CheckpointRecord& record);
// The contents of commit_success.txt, naming the checkpoint's final path.
std::string orbax_commit_text(const std::string& final_path);

}  // namespace spmd::checkpoint
