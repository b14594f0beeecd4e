// The Keras frontend: Keras 3 `.keras` archives (their `config.json`; weights are never read),
// bare `model.to_json()` configs, and the Keras config embedded in other containers (legacy HDF5
// `model_config`, SavedModel `keras_metadata.pb`) → Graph.
//
// Sequential and Functional models, nested models included, become one graph: each layer call is
// the node(s) its shape rule emits (src/frontends/keras/keras_layers.h), named by the layer, with
// `Node::framework_op` set to the layer's class. Shapes come from the input layers and each
// layer's config; the batch dim is the symbol `batch` until --batch gives it a value. Dtype
// policies (`float64`, `mixed_bfloat16`, `mixed_float16`) set each layer's compute and variable
// dtypes. A layer class Keras does not define is a custom layer: kept as an opaque node (rule
// TPU003 says its code is not in the file); when its config has a `build_config`, the next
// layer's recorded input shape carries the shapes on.
#pragma once

#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor {

int SniffKeras(const Source& source);
Result<LoadedModel> LoadKeras(const Source& source, const ShapeOptions& options);

// A Keras model config (the JSON of `model.to_json()`) found inside another container;
// `display_name` names it in errors.
Result<LoadedModel> LoadKerasConfig(std::string_view json_text, const std::string& display_name,
                                    const ShapeOptions& options);

}  // namespace tpudoctor
