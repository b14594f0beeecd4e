#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/frontend/hlo.h"
#include "tpudoctor/frontend/onnx.h"
#include "tpudoctor/frontend/stablehlo.h"

namespace tpudoctor {

Result<LoadedModel> LoadModel(const Source& source, const ShapeOptions& options) {
  if (source.bytes.empty())
    return MakeError(source.display_name + ": file is empty, expected a model");
  const int hlo = SniffHlo(source);
  const int onnx = SniffOnnx(source);
  const int mlir = SniffStableHlo(source);
  if (mlir > 0 && mlir > hlo && mlir >= onnx) return LoadStableHlo(source, options);
  if (hlo > 0 && hlo >= onnx) return LoadHlo(source, options);
  if (onnx > 0) return LoadOnnx(source, options);
  return MakeError(source.display_name +
                   ": not a model format tpu-doctor reads (expected ONNX .onnx, XLA HLO text or "
                   "StableHLO/MHLO MLIR text)");
}

}  // namespace tpudoctor
