#include "model_input.h"

#include "tpudoctor/support/embedded.h"

namespace tpudoctor::cli {

std::optional<LoadedModel> LoadModelArg(const ModelArgs& args, std::string& display_name,
                                        std::ostream& err) {
  Source source;
  if (args.model.empty()) {
    auto bytes = FindEmbedded(kExampleModel);
    if (!bytes) {
      err << "tpu-doctor: the bundled example model is missing from this build\n";
      return std::nullopt;
    }
    source.display_name = kExampleModel;
    source.bytes = std::string(*bytes);
  } else {
    auto read = ReadSource(args.model);
    if (!read) {
      err << "tpu-doctor: " << read.error().message << "\n";
      return std::nullopt;
    }
    source = std::move(*read);
  }
  display_name = source.display_name;
  ShapeOptions options;
  options.batch = args.batch;
  options.dims = args.dims;
  auto loaded = LoadModelAs(source, options, args.input_format);
  if (!loaded) {
    err << "tpu-doctor: " << loaded.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*loaded);
}

}  // namespace tpudoctor::cli
