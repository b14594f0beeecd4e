// The `[tool.tpu-doctor]` section of a pyproject.toml: project defaults for `check`, so a
// repository can pin its target and rule selection once (flags given on the command line win).
//
//   [tool.tpu-doctor]
//   target = "tpu-v5p"
//   select = ["TPU", "SHP", "MEM"]
//   ignore = ["PERF003"]
//   fail-on = "warning"
//   train = true
//
// The file is the first pyproject.toml found from the working directory upwards; a pyproject.toml
// without the section ends the search (the project has no tpu-doctor settings).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tpudoctor/support/result.h"

namespace tpudoctor::cli {

struct ProjectConfig {
  std::string path;  // the pyproject.toml read, empty when none
  std::optional<std::string> target;
  std::optional<std::vector<std::string>> select;
  std::optional<std::vector<std::string>> ignore;
  std::optional<std::string> fail_on;
  std::optional<std::string> format;
  std::optional<bool> train;
  std::optional<std::string> optimizer;
  std::optional<std::string> precision;
  std::optional<std::int64_t> batch;
};

// Reads the section of `file` (a TOML document); an unknown key or a value of the wrong type is
// an error naming the file and the key.
Result<ProjectConfig> ParseProjectConfig(const std::string& text, const std::string& file);

// Finds and reads the project's config, starting at `dir`; an empty config when there is none.
Result<ProjectConfig> LoadProjectConfig(const std::filesystem::path& dir);

}  // namespace tpudoctor::cli
