// Shape rules for Keras layers: given a layer's config and its input types, the IR nodes that
// stand for it (usually one; a MultiHeadAttention is its projections, scores, softmax and
// context), their output types and the layer's weights. The rule for a class comes from
// data/keras/layers.tsv. Rules never fail: what they cannot infer becomes an unknown shape and a
// `problem` the frontend reports as a LOAD note.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tpudoctor/ir/graph.h"

namespace tpudoctor::keras {

struct LayerCall {
  std::string class_name;
  const nlohmann::json* config = nullptr;  // the layer's "config" object
  std::vector<TensorType> inputs;
  DType compute = DType::kFloat32;   // the dtype policy's compute dtype
  DType variable = DType::kFloat32;  // ... and variable dtype
};

struct Weight {
  std::string name;  // "kernel", "bias", ...
  TensorType type;
};

// One IR node. Its inputs index a pool that holds the layer's inputs, then each earlier stage's
// output in order; its weights are appended after them (or put first, for Gather).
struct Stage {
  std::string op;  // canonical ONNX-domain op; empty keeps `keras::Class`
  OpKind kind = OpKind::kUnknown;
  std::vector<int> inputs;
  std::vector<int> weights;  // indices into LayerResult::weights
  bool weights_first = false;
  std::vector<Attribute> attrs;
  TensorType output;
};

struct LayerResult {
  std::vector<Stage> stages;
  std::vector<Weight> weights;
  std::vector<int> outputs;  // pool indices of the layer's outputs
  std::string problem;       // why a shape is unknown, if it is
};

// `rule` and `canonical` as listed in data/keras/layers.tsv.
LayerResult InferLayer(const std::string& rule, const std::string& canonical, OpKind kind,
                       const LayerCall& call);

}  // namespace tpudoctor::keras
