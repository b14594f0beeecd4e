// Loading the model a subcommand was given (or the bundled example), shared by subcommands.
#pragma once

#include <ostream>
#include <string>

#include "commands.h"
#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor::cli {

// The example model embedded into the binary, run by `tpu-doctor check` with no model.
inline constexpr const char* kExampleModel = "examples/resnet50.onnx";

// Loads args.model (or the example); on failure writes one line to `err` and returns nullopt.
std::optional<LoadedModel> LoadModelArg(const ModelArgs& args, std::string& display_name,
                                        std::ostream& err);

}  // namespace tpudoctor::cli
