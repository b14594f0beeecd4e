// The TensorFlow frontend: SavedModels (`saved_model.pb`, or its folder), MetaGraphDefs (`.meta`),
// frozen GraphDefs (`.pb`) and text GraphDefs (`.pbtxt`), including the graphs tf.data datasets
// serialize to → Graph. Parsed with tpu-doctor's own mirror of TensorFlow's protos (proto/tf/).
//
// Which computation: a SavedModel's serving signature (`serving_default`, else the first), from its
// inputs to its outputs; a GraphDef without signatures, everything that feeds a result (checkpoint
// save/restore plumbing is left out). Function calls (`StatefulPartitionedCall`, `PartitionedCall`,
// a call by function name) are inlined, named by the caller's scope, so a Keras layer's ops carry
// the layer path; functional control flow (`While`, `If`, `Case`) and functions that dataset ops
// take (`map`'s `f`) become subgraphs. Types come from the op attributes (`T`, `dtype`, `DstT`,
// ...) and shapes from `_output_shapes`, placeholders and constants; variables become weights.
// Ops map to the canonical ops the analyses know by data/tf/ops.tsv and keep their TensorFlow name
// in `Node::framework_op`.
#pragma once

#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor {

// Certain (>= kSniffCertain) for a SavedModel's name or folder, a `.meta`, or GraphDef text; a
// guess (> 0) for a `.pb` or an extension-less protobuf, whose bytes alone do not say: LoadModel
// settles those by loading. Never parses the protobuf.
inline constexpr int kSniffCertain = 80;
int SniffTensorFlow(const Source& source);
Result<LoadedModel> LoadTensorFlow(const Source& source, const ShapeOptions& options);

}  // namespace tpudoctor
