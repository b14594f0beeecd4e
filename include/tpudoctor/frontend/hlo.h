// The HLO text frontend: `jax.jit(f).lower(x).as_text(dialect="hlo")`, XLA_FLAGS=--xla_dump_to
// dumps (before and after optimization) and TensorFlow's `experimental_get_compiler_ir` → Graph.
//
// The ENTRY computation becomes the graph; computations an instruction calls (fusions, reduce
// combiners, while condition/body, conditional branches, calls) become that node's subgraphs.
// Tuple-shaped values are flattened into one IR value per leaf; get-tuple-element reads a leaf.
// Metadata (`op_name`, `source_file`/`source_line`, or the stack-frame tables of optimized dumps)
// becomes the node's source location, so findings point at the user's Python line.
#pragma once

#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor {

int SniffHlo(const Source& source);

// For an HloModuleProto in protobuf text format (`hlo_module {`, `name: ... computations {`),
// which is not HLO text and not a TensorFlow GraphDef whatever its extension: the one-line
// message that names the form and what to give instead. Empty for anything else.
std::string HloModuleProtoTextError(const Source& source);
Result<LoadedModel> LoadHlo(const Source& source, const ShapeOptions& options);

}  // namespace tpudoctor
