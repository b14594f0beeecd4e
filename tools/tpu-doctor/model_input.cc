#include "model_input.h"

namespace tpudoctor::cli {

std::optional<Source> ReadModelArg(const ModelArgs& args, std::ostream& err) {
  auto source = args.model.empty() ? BundledExample() : ReadSource(args.model);
  if (!source) {
    err << "tpu-doctor: " << source.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*source);
}

std::optional<LoadedModel> LoadModelArg(const ModelArgs& args, std::ostream& err) {
  auto source = ReadModelArg(args, err);
  if (!source) return std::nullopt;
  const AnalyzeOptions options = ModelOptions(args);
  auto loaded = LoadModelAs(*source, options.shapes, options.input_format);
  if (!loaded) {
    err << "tpu-doctor: " << loaded.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*loaded);
}

AnalyzeOptions ModelOptions(const ModelArgs& args) {
  AnalyzeOptions options;
  options.shapes.batch = args.batch;
  options.shapes.dims = args.dims;
  options.shapes.moe_capacity_factor = args.moe_capacity_factor;
  options.input_format = args.input_format;
  options.free_model = args.free_model;
  return options;
}

}  // namespace tpudoctor::cli
