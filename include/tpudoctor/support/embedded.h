// Files embedded into the binary at build time: rule docs (docs/rules/*.md), targets
// (data/targets/*.json) and op tables (data/onnx/*.tsv). Paths are relative to the repository
// root. The tool never reads these from disk at run time, so the binary works from anywhere.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace tpudoctor {

struct EmbeddedFile {
  std::string_view path;
  std::string_view contents;
};

// All embedded files, sorted by path.
const std::vector<EmbeddedFile>& EmbeddedFiles();
std::optional<std::string_view> FindEmbedded(std::string_view path);

// The rows of an embedded tab-separated table: one vector of columns per line, blank lines and
// `#` comment lines skipped. Empty when the file is not embedded.
std::vector<std::vector<std::string_view>> EmbeddedTsvRows(std::string_view path);
// The same for any text (the rows view it).
std::vector<std::vector<std::string_view>> TsvRows(std::string_view contents);

}  // namespace tpudoctor
