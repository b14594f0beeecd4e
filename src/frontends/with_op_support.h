// Every frontend's last step: each node of the loaded graph (subgraphs included) gets its op
// support decided once, from the op tables of its vocabulary (knowledge/op_support.h), so checks
// read Node::support instead of looking ops up again.
#pragma once

#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/knowledge/op_support.h"

namespace tpudoctor {

inline Result<LoadedModel> WithOpSupport(Result<LoadedModel> loaded) {
  if (loaded) AnnotateOpSupport(loaded->graph);
  return loaded;
}

}  // namespace tpudoctor
