// Reads a program back from the text Program::lines() prints, over a given mesh: what the
// partitioner's golden tests feed it, so that a test states a program and its input layouts as
// text and needs no processes, no runtime and no trace. Every operation is made by its family's
// registered parser (op_registry.h) and typed by its own rule; a line whose declared type differs
// from the rule's is refused.
#pragma once

#include <string_view>

#include "jit/program.h"
#include "spmd/mesh.h"

namespace spmd::compiler {

// `text`: one operation a line, "%3 = add f32[8,4] %1 %2 [attribute=value …]", numbered from 0
// in order, then "return %a %b …", an output followed by "sharding=PartitionSpec(…)" when one is
// asked of it. Blank lines and lines starting with '#' are skipped. Throws
// InvalidArgument naming the line for anything else.
Program parse_program(std::string_view text, const Mesh& mesh);

// "f32[8,4]" -> {kFloat32, {8, 4}}; throws InvalidArgument.
ValueType parse_type(std::string_view text);

}  // namespace spmd::compiler
