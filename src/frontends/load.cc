#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/frontend/onnx.h"

namespace tpudoctor {

Result<LoadedModel> LoadModel(const Source& source, const ShapeOptions& options) {
  if (source.bytes.empty())
    return MakeError(source.display_name + ": file is empty, expected a model");
  if (SniffOnnx(source) > 0) return LoadOnnx(source, options);
  return MakeError(source.display_name +
                   ": not a model format tpu-doctor reads (expected an ONNX .onnx file)");
}

}  // namespace tpudoctor
