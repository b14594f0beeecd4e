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

// Whether the Keras version that wrote the file defines the class: built-ins differ between
// tf-keras/Keras 2.x (data/keras/keras2_layers.txt) and Keras 3 (keras3_layers.txt, aliases
// included), so a custom layer may share its name with a built-in of the other version.
// `keras_version` is the file's (`"2.15.0"`, `"3.6.0"`); empty when unknown: any built-in counts.
bool KerasVersionDefines(std::string_view class_name, std::string_view keras_version);

// The domain of nodes that stand for custom layers (classes the file's Keras does not define):
// LookupOp answers for them with the custom-layer entry.
inline constexpr std::string_view kKerasCustomDomain = "keras.custom";

}  // namespace tpudoctor
