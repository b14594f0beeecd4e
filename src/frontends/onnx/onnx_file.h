// An ONNX file split at its top-level graph's nodes and initializers.
//
// Parsed whole, a large graph's messages take several times the file's bytes (64 MB for an 8 MB
// file of 100,000 nodes, nearly all of it NodeProto and TensorProto), and the frontend needs each
// node only while it adds it to the IR. SplitOnnxFile parses everything else of the ModelProto and
// leaves each top-level node and initializer as the bytes of the file that encode it, noting of
// each node the names of its outputs (the builder declares every output before it adds the first
// node) and whether an attribute holds a tensor or a subgraph (which loading checks before it
// builds); ParseTopLevel parses one of them, into a message the caller reuses.
//
// The split reads the file as a parse of the whole ModelProto would: repeated `graph` fields
// merge, a field of the wrong wire type is kept as an unknown field, and ParseTopLevel gives each
// message the recursion budget it would have had at its depth in the file.
#pragma once

#include <google/protobuf/message_lite.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "tpudoctor/support/result.h"

namespace tpudoctor::onnx_frontend {

// A top-level node: its encoded NodeProto, and what the split read of it without parsing it.
struct EncodedNode {
  std::string_view bytes;
  std::uint32_t first_output = 0;  // its outputs are OnnxFile::outputs[first_output, + outputs)
  std::uint32_t outputs = 0;
  bool has_tensor_or_graph = false;  // an attribute with a `t`, `g` or `graphs` field
};

struct OnnxFile {
  // Every field of the file but the top-level graph's `node` and `initializer`.
  onnx::ModelProto model;
  bool has_graph = false;  // whether the file has a `graph` field (model.has_graph() always is)
  // The top-level nodes and the encoded TensorProto of each top-level initializer, in file order.
  // All views point into the bytes given to SplitOnnxFile, which must outlive them.
  std::vector<EncodedNode> nodes;
  std::vector<std::string_view> initializers;
  std::vector<std::string_view> outputs;  // the output names of every node, in order
};

// Fails (with no message: the caller names the file) when `bytes` are not a protobuf message.
// The nodes' bytes are only read as far as their outputs and attributes: ParseTopLevel finds the
// rest of a damaged node.
Result<OnnxFile> SplitOnnxFile(std::string_view bytes);

// Parses one of OnnxFile's nodes or initializers into `into` (cleared first).
bool ParseTopLevel(std::string_view bytes, google::protobuf::MessageLite& into);

}  // namespace tpudoctor::onnx_frontend
