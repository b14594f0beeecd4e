// The model a subcommand was given (or the bundled example), shared by subcommands.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "commands.h"
#include "tpudoctor/analyze.h"
#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor::cli {

// The bytes of args.model (or the bundled example); on failure writes one line to `err`.
std::optional<Source> ReadModelArg(const ModelArgs& args, std::ostream& err);

// Loads args.model (or the example); on failure writes one line to `err` and returns nullopt.
std::optional<LoadedModel> LoadModelArg(const ModelArgs& args, std::ostream& err);

// AnalyzeOptions with the model flags filled in.
AnalyzeOptions ModelOptions(const ModelArgs& args);

}  // namespace tpudoctor::cli
