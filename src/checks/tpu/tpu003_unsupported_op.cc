// TPU003 unsupported-op: ops with no XLA lowering, or that cannot run on the device at all —
// string processing, sequence/map/optional containers, classic-ML and custom-domain ops, and
// anything outside the known operator set. Reported once per op type, at its first node.
#include <map>

#include "src/checks/factories.h"
#include "src/checks/pipe/pipeline.h"
#include "tpudoctor/knowledge/op_support.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

bool Unsupported(OpSupport s) {
  return s == OpSupport::kContainer || s == OpSupport::kString || s == OpSupport::kHostFallback ||
         s == OpSupport::kOpaque || s == OpSupport::kUnsupported || s == OpSupport::kUnknownOp;
}

// How to find and replace host fallbacks, in the terms of the framework the model came from.
std::string HostFallbackFix(Framework framework) {
  switch (framework) {
    case Framework::kPyTorch:
      return "rewrite it from ops PyTorch/XLA lowers, or move it out of the compiled step; "
             "PyTorch/XLA's metrics report (`torch_xla.debug.metrics.short_metrics_report()`) "
             "counts each fallback as `aten::NAME`";
    case Framework::kTensorFlow:
    case Framework::kKeras:
      return "move it out of the TPU step (into the tf.data pipeline, or after the step for "
             "summaries and checkpoints), or replace it with ops that have XLA kernels; "
             "`tf.config.set_soft_device_placement(False)` turns the silent host placement into "
             "an error that names it";
    case Framework::kJax:
      return "replace the callback with jax.numpy/lax ops, or move it out of the jitted step";
    default:
      return "rewrite it from ops the framework lowers to XLA, or move it out of the compiled "
             "step";
  }
}

std::string FixFor(OpSupport s, Framework framework) {
  switch (s) {
    case OpSupport::kString:
      return "do string processing in the input pipeline on the host; feed the model integer ids";
    case OpSupport::kContainer:
      return "replace sequences with fixed-shape tensors (stack the elements, padded to a static "
             "length); re-export without list outputs";
    case OpSupport::kHostFallback:
      return HostFallbackFix(framework);
    case OpSupport::kOpaque:
      return "rebuild the layer from built-in Keras layers or keras.ops (then tpu-doctor sees it), "
             "or check the model as the XLA program it compiles to (`jax.jit(...).lower(...)`, "
             "`tf.function(jit_compile=True).experimental_get_compiler_ir`)";
    case OpSupport::kUnknownOp:
      return "re-export with a standard ONNX opset (torch.onnx.export with a registered opset), or "
             "implement the op from standard ops";
    default:
      return "move this op out of the compiled model (pre/post-processing on the host), or rewrite "
             "it "
             "from ops XLA lowers";
  }
}

// "`Foo`" or "3 `Foo` ops".
std::string Subject(const std::string& key, std::size_t count) {
  if (count <= 1) return "`" + key + "`";
  return Plural(static_cast<std::int64_t>(count), "`" + key + "` op", "`" + key + "` ops");
}

std::string Predicate(OpSupport s, bool plural) {
  switch (s) {
    case OpSupport::kHostFallback:
      return plural ? "run on the host CPU, not on" : "runs on the host CPU, not on";
    case OpSupport::kOpaque:
      return "cannot be checked for";
    default:
      return plural ? "have no XLA lowering for" : "has no XLA lowering for";
  }
}

class Tpu003UnsupportedOp final : public Check {
 public:
  std::string_view code() const override { return "TPU003"; }
  std::string_view name() const override { return "unsupported-op"; }
  std::string_view summary() const override {
    return "an op has no XLA/TPU lowering or cannot run on the device (string, sequence, custom "
           "domain)";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    // A tf.data graph runs on the host by design; the PIPE rules judge it.
    if (pipe::IsPipelineGraph(ctx)) return;
    struct Group {
      OpInfo info;
      std::string first_path;
      const Node* first = nullptr;
      std::vector<std::string> names;
    };
    std::map<std::string, Group> groups;
    std::vector<std::string> order;
    ForEachNodeWithPath(ctx.graph, ctx.graph.name(),
                        [&](const Graph&, const std::string& path, const Node& n) {
                          if (!Unsupported(n.support)) return;
                          OpInfo info = LookupOp(n);  // for its reason
                          const std::string key = n.QualifiedOp();
                          auto [it, inserted] = groups.try_emplace(key);
                          if (inserted) {
                            it->second.info = std::move(info);
                            it->second.first_path = path;
                            it->second.first = &n;
                            order.push_back(key);
                          }
                          it->second.names.push_back(n.name);
                        });
    for (const std::string& key : order) {
      const Group& g = groups[key];
      Diagnostic d = NewFinding();
      // An op an XLA program holds that tpu-doctor's tables do not know (a newer opcode, another
      // dialect's op) is not evidence of a problem: say so, do not block.
      const bool unknown_xla = ctx.graph.facts().xla_program;
      // A host fallback runs (slowly) and opaque code may well compile: warnings. Only ops with
      // no way to run on the device block.
      const bool runs = unknown_xla || g.info.support == OpSupport::kHostFallback ||
                        g.info.support == OpSupport::kOpaque;
      d.severity = runs ? Severity::kWarning : Severity::kError;
      d.message = Subject(key, g.names.size()) + " " +
                  Predicate(g.info.support, g.names.size() > 1) + " " + ctx.target.name + ": " +
                  g.info.reason;
      d.location = LocationOf(g.first_path, *g.first);
      if (g.names.size() > 1) {
        std::vector<std::string> shown;
        for (std::size_t i = 0; i < g.names.size() && i < 5; ++i)
          shown.push_back("`" + g.names[i] + "`");
        d.notes.push_back("nodes: " + Join(shown, ", ") + (g.names.size() > 5 ? ", ..." : ""));
      }
      d.fix =
          Fix{g.info.fix.empty() ? FixFor(g.info.support, ctx.graph.facts().framework) : g.info.fix,
              FixApplicability::kDisplayOnly};
      sink.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<Check> MakeTpu003UnsupportedOp() { return std::make_unique<Tpu003UnsupportedOp>(); }

}  // namespace tpudoctor
