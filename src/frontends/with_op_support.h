// Every frontend's last step: each node of the loaded graph (subgraphs included) gets its op
// support decided once, from the op tables of its vocabulary (knowledge/op_support.h), and its
// dot/convolution geometry read once (ir/geometry.h), so checks and the cost model read typed
// node fields instead of looking ops up or parsing attributes again.
#pragma once

#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/knowledge/op_support.h"

namespace tpudoctor {

inline Result<LoadedModel> WithOpSupport(Result<LoadedModel> loaded) {
  if (loaded) {
    AnnotateOpSupport(loaded->graph);
    FillGeometry(loaded->graph);
  }
  return loaded;
}

}  // namespace tpudoctor
