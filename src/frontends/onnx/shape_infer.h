// The ONNX frontend's own shape propagation, run after the exporter's value_info and ONNX shape
// inference have had their say. It walks the graph in topological order, folds small integer
// shape computations into Value::known_ints (keeping symbols such as `batch`), and fills in the
// dtypes and dims the earlier sources left unknown. It only makes a dim more specific: a static
// dim is never replaced, and a dim it cannot derive stays unknown.
#pragma once

#include <cstdint>
#include <optional>

#include "tpudoctor/ir/graph.h"

namespace tpudoctor::onnx_frontend {

// `rebatch`: the new batch when --batch replaced a static leading dim of 1 (see onnx.h).
void PropagateShapes(Graph& graph, std::optional<std::int64_t> rebatch = std::nullopt);

}  // namespace tpudoctor::onnx_frontend
