// Builds the IR from a TensorFlow GraphDef and its function library (see
// include/tpudoctor/frontend/tf.h for what is read and how).
#pragma once

#include <string>
#include <vector>

#include "proto/tf/graph.pb.h"
#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor::tf_frontend {

struct Signature {
  std::vector<std::string> inputs;   // tensor names, "serving_default_x:0"
  std::vector<std::string> outputs;  // "StatefulPartitionedCall:0"
  // Input shapes the signature records, by tensor name (-1: unknown).
  std::map<std::string, std::vector<std::int64_t>> input_shapes;
};

// Builds `out.graph` from `graph`: the computation from `sig.inputs` to `sig.outputs`, or, when
// the signature is empty, everything that feeds a result.
Result<Ok> BuildTfGraph(const tpudoctor::tf::GraphDef& graph, const Signature& sig,
                        const ShapeOptions& options, LoadedModel& out);

}  // namespace tpudoctor::tf_frontend
