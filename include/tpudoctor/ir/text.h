// The IR's compact text form, printed by `tpu-doctor dump-ir` and read back by ParseGraphText.
//
//   graph main {
//     input %x: f32[batch,4]
//     init %w: f32[4,4]
//     %y: f32[batch,4] = MatMul[matmul](%x, %w) name="mm0" scope="/layer/0"
//     %z: f32[batch,4] = Relu[elementwise](%y)
//     output %z
//   }
//
// One statement per line. Value names that are not plain identifiers are quoted
// (`%"onnx::Gemm_0"`); an absent optional input is `%_`. Attributes follow the operands as
// `{name=value, ...}` (ints, floats, "strings", [lists]); a control-flow node lists its subgraphs
// after it as `subgraph ATTR graph NAME { ... }` blocks. Printing then parsing gives back an
// equal graph (the round trip is tested).
#pragma once

#include <string>
#include <string_view>

#include "tpudoctor/ir/graph.h"
#include "tpudoctor/support/result.h"

namespace tpudoctor {

std::string PrintGraphText(const Graph& graph);

// Parses the text form; errors carry `line:col`.
Result<Graph> ParseGraphText(std::string_view text);

}  // namespace tpudoctor
