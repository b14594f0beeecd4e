#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {

std::vector<std::vector<std::string_view>> EmbeddedTsvRows(std::string_view path) {
  return TsvRows(FindEmbedded(path).value_or(""));
}

std::vector<std::vector<std::string_view>> TsvRows(std::string_view contents) {
  std::vector<std::vector<std::string_view>> rows;
  for (std::string_view line : SplitLines(contents)) {
    if (line.empty() || line.front() == '#') continue;
    rows.push_back(Split(line, '\t'));
  }
  return rows;
}

}  // namespace tpudoctor
