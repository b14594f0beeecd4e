// SHP001 data-dependent-shape: an op whose output shape depends on tensor values (NonZero, Unique,
// Compress, NonMaxSuppression, or a Reshape/Expand/TopK/Range/... whose shape input is computed
// from runtime data). Reported once, at the root cause, with the number of knock-on values.
#include <map>

#include "src/checks/factories.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

struct OpAdvice {
  const char* what;  // what decides the output size
  const char* fix;
};

const std::map<Op, OpAdvice>& Advice() {
  static const auto* m = new std::map<Op, OpAdvice>{
      {Op::kNonZero,
       {"the number of non-zero elements",
        "keep a fixed-size mask instead of indices (`torch.where(mask, x, 0)`, multiply by the "
        "mask), or "
        "use a padded static size (`jnp.nonzero(x, size=N, fill_value=...)`)"}},
      {Op::kCompress,
       {"the number of true entries in the condition",
        "keep the full tensor and apply the mask with `Where`, or pad the selection to a static "
        "size"}},
      {Op::kUnique,
       {"the number of distinct values",
        "use a padded static size (`jnp.unique(x, size=N, fill_value=...)`), or move deduplication "
        "to "
        "the input pipeline"}},
      {Op::kNonMaxSuppression,
       {"the number of boxes that survive suppression",
        "use padded NMS with a fixed maximum output (`tf.image.non_max_suppression_padded`, or "
        "top-k "
        "boxes plus a validity mask), or run NMS as post-processing on the host"}},
  };
  return *m;
}

class Shp001DataDependentShape final : public Check {
 public:
  std::string_view code() const override { return "SHP001"; }
  std::string_view name() const override { return "data-dependent-shape"; }
  std::string_view summary() const override {
    return "an op's output shape depends on tensor values, which XLA's static compilation cannot "
           "take";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    for (const DynamicRoot& root : ctx.dynamism.roots()) {
      if (root.kind != RootKind::kDataDependentOp && root.kind != RootKind::kRuntimeShapeInput)
        continue;
      const Node& n = root.graph->node(root.node);
      Diagnostic d = NewFinding();
      d.severity = Severity::kError;
      d.location = LocationOf(root.graph_path, n);
      if (!n.outputs.empty()) d.location.value = root.graph->value(n.outputs[0]).name;
      auto advice = Advice().find(n.op);
      if (root.kind == RootKind::kDataDependentOp) {
        const std::string what = advice != Advice().end() ? advice->second.what : "tensor values";
        d.message = "output shape of `" + n.QualifiedOp() + "` depends on " + what +
                    ", but XLA compiles only static shapes";
      } else {
        d.message = "`" + n.QualifiedOp() + "` " + root.detail +
                    " is computed from runtime tensor values, so its output shape depends on data";
      }
      if (root.downstream > 0) {
        d.notes.push_back(
            Plural(root.downstream, "value", "values") +
            " downstream get a data-dependent shape from this op (not reported separately)");
      }
      d.notes.push_back(
          "PyTorch/XLA falls back to the CPU or recompiles for every new size; JAX rejects it "
          "under jit "
          "(ConcretizationTypeError); TensorFlow on TPU needs a static bound");
      const std::string fix =
          advice != Advice().end()
              ? advice->second.fix
              : "compute this input from static sizes (`x.shape`, constants) instead of "
                "tensor values, or pad to a static maximum and carry a mask";
      d.fix = Fix{fix, FixApplicability::kDisplayOnly};
      sink.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<Check> MakeShp001DataDependentShape() {
  return std::make_unique<Shp001DataDependentShape>();
}

}  // namespace tpudoctor
