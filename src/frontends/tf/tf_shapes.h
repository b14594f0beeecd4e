// Output shapes of common TensorFlow ops, for graphs saved without `_output_shapes` (frozen
// GraphDefs): convolutions and pools by data format, padding and strides; matmuls; bias, batch
// norm and pointwise ops; reductions, reshapes, squeezes, concats and transposes whose axes or
// shapes are constants. Anything else stays unknown.
#pragma once

#include <optional>
#include <vector>

#include "proto/tf/graph.pb.h"
#include "tpudoctor/ir/graph.h"

namespace tpudoctor::tf_frontend {

// `inputs` are the node's data inputs (nullptr where absent). nullopt when not inferred.
std::optional<Shape> InferTfShape(const tpudoctor::tf::NodeDef& node,
                                  const std::vector<const Value*>& inputs);

}  // namespace tpudoctor::tf_frontend
