#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {

std::vector<std::vector<std::string_view>> EmbeddedTsvRows(std::string_view path) {
  std::vector<std::vector<std::string_view>> rows;
  for (std::string_view line : SplitLines(FindEmbedded(path).value_or(""))) {
    if (line.empty() || line.front() == '#') continue;
    rows.push_back(Split(line, '\t'));
  }
  return rows;
}

}  // namespace tpudoctor
