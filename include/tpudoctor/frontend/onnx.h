// The ONNX frontend: ModelProto bytes → Graph, using the ONNX protobuf schema from libonnx.
//
// Weights are never read: initializers contribute their names, dtypes and shapes (and the values
// of small embedded integer tensors, which are shape arithmetic); external-data files are never
// opened, but their locations are validated so none points outside the model's folder. Shapes
// come from the exporter's value_info, ONNX shape inference (when libonnx knows the opset) and
// the frontend's own propagation with constant folding of shape computations; a dim nobody can
// tell stays unknown.
#pragma once

#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor {

int SniffOnnx(const Source& source);
Result<LoadedModel> LoadOnnx(const Source& source, const ShapeOptions& options);

}  // namespace tpudoctor
