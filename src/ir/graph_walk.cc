#include "tpudoctor/ir/graph_walk.h"

namespace tpudoctor {

std::string GraphPath(const std::string& parent_path, const Node& node, const Subgraph& sub) {
  return parent_path + "/" + node.name + "." + sub.attr_name;
}

}  // namespace tpudoctor
