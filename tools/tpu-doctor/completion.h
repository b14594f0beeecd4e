// Shell completion for the tpu-doctor command line (`tpu-doctor completion bash|zsh`).
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tpudoctor::cli {

// A flag's fixed values, by (subcommand, flag); subcommand "" for any.
using CompletionValues = std::map<std::pair<std::string, std::string>, std::vector<std::string>>;

// The completion script for `shell` ("bash" or "zsh"; nullopt for any other), generated from
// `app`'s subcommands and options; `values` are the fixed value sets the command line checks
// (targets, input formats and the names the analysis parses are added here).
std::optional<std::string> CompletionScript(const CLI::App& app, const std::string& shell,
                                            const CompletionValues& values);

}  // namespace tpudoctor::cli
