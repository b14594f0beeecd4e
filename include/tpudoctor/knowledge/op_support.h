// Whether an op lowers to a static-shape XLA program on a TPU, for every op vocabulary tpu-doctor
// reads: ONNX domains, HLO opcodes, ATen operators of torch.export programs, TensorFlow ops and
// Keras layers. Frontends record the answer on each node (Node::support, AnnotateOpSupport);
// LookupOp also gives the reason for messages, and never cares which table answered. The facts live
// in data/ (embedded); each table's header names its sources.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tpudoctor/ir/graph.h"
#include "tpudoctor/ir/op_kind.h"
#include "tpudoctor/knowledge/op_semantics.h"

namespace tpudoctor {

struct OpInfo {
  OpKind kind = OpKind::kUnknown;
  OpSupport support = OpSupport::kUnknownOp;
  std::string reason;  // why it is not kOk; empty otherwise
  std::string fix;     // what to do about it, where the op's vocabulary says more than its support
};

// The support column of the data tables: ok, dynamic, control, container, string, fallback (also
// host and python: ops that run on the host), opaque, unsupported.
std::optional<OpSupport> ParseOpSupport(std::string_view word);

// Any domain: "" / "ai.onnx" / other ONNX domains, "hlo", "aten", "keras", "tf".
OpInfo LookupOp(std::string_view domain, std::string_view op_type);
// The same for a node's op (what it says of Node::support, and why).
OpInfo LookupOp(const Node& node);

// What LookupOp and LookupSemantics say of each distinct op met in one pass over a graph: a model
// has thousands of nodes but tens of distinct ops, and the tables are keyed by string. One per
// pass (not thread-safe); the reason and fix strings are not kept (LookupOp gives them).
class OpLookupMemo {
 public:
  struct Entry {
    OpKind kind = OpKind::kUnknown;
    OpSupport support = OpSupport::kUnknownOp;
    OpSemantics semantics;
  };
  const Entry& Get(std::string_view domain, std::string_view op_type);

 private:
  std::unordered_map<std::string, Entry> entries_;
  std::string key_;  // domain '\n' op_type, reused between calls
};

// Sets Node::support of every node of `graph` and its subgraphs from the tables above. Frontends
// call it once, as their last step; graphs built by hand (tests) call it after building.
void AnnotateOpSupport(Graph& graph);

// True for ops that run on the host, never inside the compiled device step: host fallbacks,
// tf.data ops, and TensorFlow's Assert (which the TF-XLA bridge drops).
bool RunsOnHost(const Node& node);

}  // namespace tpudoctor
