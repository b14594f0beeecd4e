// What tpu-doctor knows about Keras layer classes (data/keras/layers.tsv): the rule that infers a
// layer's output shape, the canonical ONNX-domain op the analyses treat it as, and whether it
// compiles to XLA. A class the table does not list is a custom layer, whose code is not in the
// model file.
#pragma once

#include <string>
#include <string_view>

#include "tpudoctor/knowledge/op_support.h"

namespace tpudoctor {

struct KerasLayerInfo {
  std::string shape_rule;  // "dense", "conv", ... ; "unknown" when the shape cannot be inferred
  std::string canonical;   // ONNX default-domain op, or empty
  OpInfo info;
  bool builtin = false;
};

// A reference into the static table (or the one entry for custom layers).
const KerasLayerInfo& LookupKerasLayer(std::string_view class_name);

}  // namespace tpudoctor
