#include "tpudoctor/knowledge/op_support.h"

#include <unordered_set>

#include "tpudoctor/knowledge/hlo_ops.h"
#include "tpudoctor/knowledge/keras_layers.h"
#include "tpudoctor/knowledge/onnx_ops.h"
#include "tpudoctor/knowledge/op_semantics.h"
#include "tpudoctor/knowledge/tf_ops.h"
#include "tpudoctor/knowledge/torch_ops.h"

namespace tpudoctor {

std::optional<OpSupport> ParseOpSupport(std::string_view s) {
  if (s == "ok") return OpSupport::kOk;
  if (s == "dynamic") return OpSupport::kDynamic;
  if (s == "control") return OpSupport::kControl;
  if (s == "container") return OpSupport::kContainer;
  if (s == "string") return OpSupport::kString;
  if (s == "fallback" || s == "host" || s == "python") return OpSupport::kHostFallback;
  if (s == "opaque") return OpSupport::kOpaque;
  if (s == "unsupported") return OpSupport::kUnsupported;
  return std::nullopt;
}

OpInfo LookupOp(std::string_view domain, std::string_view op_type) {
  if (domain == "hlo") {
    if (auto kind = HloOpKind(op_type)) return {*kind, OpSupport::kOk, "", ""};
    // `tensor.extract`, `arith.index_cast`, `scf.if`: another MLIR dialect's op among StableHLO.
    if (const auto dot = op_type.find('.'); dot != std::string_view::npos && dot > 0) {
      return {OpKind::kUnknown, OpSupport::kUnknownOp,
              "an op of MLIR's `" + std::string(op_type.substr(0, dot)) +
                  "` dialect, not StableHLO: the program was lowered past StableHLO (IREE and "
                  "torch-mlir forms) or comes from a test harness, so it is not checked as a TPU "
                  "program would be",
              "check the program as plain StableHLO, before other lowerings "
              "(`jax.jit(f).lower(x).as_text()`, torch_xla's `exported_program_to_stablehlo`, "
              "`tf.function(...).experimental_get_compiler_ir`)"};
    }
    const std::string newer_xla =
        "check that the XLA version behind your TPU runtime knows this op (newer opcodes need a "
        "matching libtpu)";
    if (auto why = UnmappedMlirOp(op_type))
      return {OpKind::kUnknown, OpSupport::kUnknownOp, *why, newer_xla};
    return {OpKind::kUnknown, OpSupport::kUnknownOp, "not an HLO opcode this XLA version defines",
            newer_xla};
  }
  if (domain == "aten") return LookupAtenOp(op_type).info;
  if (domain == "keras") return LookupKerasLayer(op_type).info;
  if (domain == kKerasCustomDomain) return LookupKerasLayer({}).info;  // the custom-layer entry
  if (domain == "tf") return LookupTfOp(op_type).info;
  return LookupOnnxOp(domain, op_type);
}

OpInfo LookupOp(const Node& node) { return LookupOp(node.domain, node.op_type); }

const OpLookupMemo::Entry& OpLookupMemo::Get(std::string_view domain, std::string_view op_type) {
  key_.assign(domain).push_back('\n');
  key_.append(op_type);
  auto it = entries_.find(key_);
  if (it != entries_.end()) return it->second;
  Entry e;
  const OpInfo info = LookupOp(domain, op_type);
  e.kind = info.kind;
  e.support = info.support;
  e.semantics = LookupSemantics(domain, op_type);
  return entries_.emplace(key_, e).first->second;
}

namespace {

// Subgraphs are shared (an XLA computation called from many places): each is annotated once.
void Annotate(Graph& graph, std::unordered_set<const Graph*>& done, OpLookupMemo& memo) {
  if (!done.insert(&graph).second) return;
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
    Node& node = graph.mutable_node(static_cast<NodeId>(i));
    const OpLookupMemo::Entry& op = memo.Get(node.domain, node.op_type);
    node.support = op.support;
    node.op = op.semantics.op;
    node.traits = op.semantics.traits;
    node.control = ControlFlowOf(node);
    for (Subgraph& sub : node.subgraphs) {
      if (sub.graph) Annotate(*sub.graph, done, memo);
    }
  }
}

}  // namespace

void AnnotateOpSupport(Graph& graph) {
  std::unordered_set<const Graph*> done;
  OpLookupMemo memo;
  Annotate(graph, done, memo);
}

bool RunsOnHost(const Node& node) {
  if (node.support == OpSupport::kHostFallback) return true;
  if (node.framework_op.empty()) return false;
  if (node.op == Op::kAssert) return true;
  const TfOpInfo& tf = LookupTfOp(node.framework_op);
  return tf.known && tf.pipeline && (node.domain == "tf" || node.domain.empty());
}

}  // namespace tpudoctor
