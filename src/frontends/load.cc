#include <optional>

#include "src/frontends/archives.h"
#include "src/support/zip_archive.h"
#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/frontend/hlo.h"
#include "tpudoctor/frontend/keras.h"
#include "tpudoctor/frontend/onnx.h"
#include "tpudoctor/frontend/stablehlo.h"
#include "tpudoctor/frontend/tf.h"
#include "tpudoctor/frontend/torch_export.h"

namespace tpudoctor {
namespace {

// Zip archives, opened once: a torch.export .pt2 or a Keras 3 .keras. A damaged or hostile
// archive is reported as such, not as an unknown format.
Result<LoadedModel> LoadArchive(const Source& source, const ShapeOptions& options) {
  auto zip = ZipArchive::Open(source.bytes, source.display_name);
  if (!zip) return zip.error();
  if (IsTorchExportArchive(**zip))
    return LoadTorchExportArchive(**zip, source.display_name, options);
  if (IsKerasArchive(**zip)) return LoadKerasArchive(**zip, source.display_name, options);
  return MakeError(
      source.display_name +
      ": a zip archive, but neither a torch.export .pt2 (no `models/model.json`) nor a "
      ".keras model (no `config.json`)");
}

}  // namespace

Result<LoadedModel> LoadModel(const Source& source, const ShapeOptions& options) {
  if (source.bytes.empty())
    return MakeError(source.display_name + ": file is empty, expected a model");
  if (LooksLikeZip(source.bytes)) return LoadArchive(source, options);
  if (SniffTorchExport(source) > 0) return LoadTorchExport(source, options);
  if (SniffKeras(source) > 0) return LoadKeras(source, options);
  // A binary protobuf's first bytes do not say whether it is TensorFlow's: a weak guess is settled
  // by loading it (once), and a failure lets the other formats try.
  std::optional<Error> tf_error;
  if (const int tf = SniffTensorFlow(source); tf >= kSniffCertain) {
    return LoadTensorFlow(source, options);
  } else if (tf > 0) {
    auto loaded = LoadTensorFlow(source, options);
    if (loaded) return loaded;
    tf_error = loaded.error();
  }
  const int hlo = SniffHlo(source);
  const int onnx = SniffOnnx(source);
  const int mlir = SniffStableHlo(source);
  if (mlir > 0 && mlir > hlo && mlir >= onnx) return LoadStableHlo(source, options);
  if (hlo > 0 && hlo >= onnx) return LoadHlo(source, options);
  if (onnx > 0) return LoadOnnx(source, options);
  // Nothing recognised the bytes: let the format the name promises say what is wrong with them.
  if (source.display_name.ends_with(".pb") || source.display_name.ends_with(".pbtxt") ||
      source.display_name.ends_with(".meta")) {
    return tf_error ? Result<LoadedModel>(*tf_error) : LoadTensorFlow(source, options);
  }
  if (source.display_name.ends_with(".json")) return LoadKeras(source, options);
  return MakeError(
      source.display_name +
      ": not a model format tpu-doctor reads (expected ONNX .onnx, XLA HLO text, "
      "StableHLO/MHLO MLIR text, a torch.export .pt2, a Keras .keras/JSON config, or a "
      "TensorFlow SavedModel/GraphDef)");
}

const std::vector<std::string>& InputFormats() {
  static const auto* formats =
      new std::vector<std::string>{"hlo", "keras", "onnx", "pt2", "stablehlo", "tf"};
  return *formats;
}

Result<LoadedModel> LoadModelAs(const Source& source, const ShapeOptions& options,
                                std::string_view format) {
  if (format.empty()) return LoadModel(source, options);
  if (source.bytes.empty())
    return MakeError(source.display_name + ": file is empty, expected a model");
  if (format == "onnx") return LoadOnnx(source, options);
  if (format == "hlo") return LoadHlo(source, options);
  if (format == "stablehlo") return LoadStableHlo(source, options);
  if (format == "pt2") return LoadTorchExport(source, options);
  if (format == "keras") return LoadKeras(source, options);
  if (format == "tf") return LoadTensorFlow(source, options);
  return MakeError("unknown input format `" + std::string(format) +
                   "`; expected one of hlo, keras, onnx, pt2, stablehlo, tf");
}

}  // namespace tpudoctor
