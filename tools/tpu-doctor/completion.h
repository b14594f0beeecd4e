// Shell completion for the tpu-doctor command line (`tpu-doctor completion bash|zsh`).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tpudoctor::cli {

// The completion script for `shell` ("bash" or "zsh"; nullopt for any other), generated from
// `app`'s subcommands and options; `check_formats` are check's --format values.
std::optional<std::string> CompletionScript(const CLI::App& app, const std::string& shell,
                                            const std::vector<std::string>& check_formats);

}  // namespace tpudoctor::cli
