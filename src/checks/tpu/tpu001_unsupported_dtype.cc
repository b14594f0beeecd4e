// TPU001 unsupported-dtype: values of an element type the target cannot hold or compute
// (complex128, strings on TPU), and 64-bit values in the ops XLA:TPU's 64-bit rewrite cannot
// compile (bitcast-convert between float64 and int64, TPU kernels).
#include <algorithm>

#include "src/checks/dtype_origins.h"
#include "src/checks/factories.h"
#include "tpudoctor/knowledge/x64.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

class Tpu001UnsupportedDtype final : public Check {
 public:
  std::string_view code() const override { return "TPU001"; }
  std::string_view name() const override { return "unsupported-dtype"; }
  std::string_view summary() const override {
    return "a tensor has an element type the target cannot compute (complex128, string on TPU), "
           "or a 64-bit value meets an op XLA:TPU's 64-bit rewrite cannot compile";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    for (const DTypeTraits& traits : AllDTypes()) {
      const DTypeRule rule = ctx.target.RuleFor(traits.dtype);
      if (rule.support != DTypeSupport::kUnsupported || !ctx.analysis.HasDType(traits.dtype))
        continue;
      DTypeUse use = FindDTypeOrigins(ctx.graph, traits.dtype);
      // Literals converted down at once are folded by XLA: nothing of the type reaches the chip.
      std::erase_if(use.origins, FoldedLiteral);
      if (use.origins.empty()) continue;
      // A JAX program traced with x64 on has one cause for every complex128 value: one finding.
      if (ctx.graph.facts().framework == Framework::kJax) {
        Diagnostic d = Report(ctx, traits.dtype, rule, use, use.origins.front());
        if (std::string note = OtherOriginsNote(use, traits.dtype, ", one cause"); !note.empty())
          d.notes.push_back(std::move(note));
        sink.Add(std::move(d));
        continue;
      }
      for (const DTypeOrigin& origin : use.origins)
        sink.Add(Report(ctx, traits.dtype, rule, use, origin));
    }
    const bool wide = ctx.analysis.HasDType(DType::kFloat64) ||
                      ctx.analysis.HasDType(DType::kInt64) || ctx.analysis.HasDType(DType::kUInt64);
    if (ctx.target.is_tpu() && wide) ReportRewriteGaps(ctx, sink);
  }

 private:
  Diagnostic Report(const CheckContext& ctx, DType dtype, const DTypeRule& rule,
                    const DTypeUse& use, const DTypeOrigin& origin) const {
    const Framework framework = ctx.graph.facts().framework;
    Diagnostic d = OriginFinding(code(), Severity::kError, origin, dtype, rule, use,
                                 ctx.target.name, "does not support", framework);
    d.fix = Fix{FixSuggestion(dtype), FixApplicability::kDisplayOnly};
    return d;
  }

  // float64, int64 and uint64 compile on TPU through XLA's 64-bit rewrite (TPU002 says what it
  // costs), except in the ops the rewrite has no rule for: each is a compile error.
  void ReportRewriteGaps(const CheckContext& ctx, DiagnosticSink& sink) const {
    ForEachNodeWithPath(
        ctx.graph, ctx.graph.name(), [&](const Graph& g, const std::string& path, const Node& n) {
          const auto gap = X64RewriteGapOf(g, n);
          if (!gap) return;
          const Value* wide = gap->value;
          const std::string dt(LongNameOf(wide->type.dtype));
          Diagnostic d = NewFinding();
          d.severity = Severity::kError;
          d.message = "`" + n.QualifiedOp() + "` on " + dt + " value `" + wide->name +
                      "` cannot be compiled for " + ctx.target.name +
                      ": XLA:TPU's 64-bit rewrite has no rule for it";
          d.location = LocationOf(path, n);
          d.notes.push_back(gap->what_fails + " (source: " + gap->source + ")");
          d.notes.push_back(
              "XLA fails with `UNIMPLEMENTED: While rewriting computation to not contain X64 "
              "element types, XLA encountered an HLO for which this rewriting is not implemented`");
          d.fix =
              Fix{"do this step in 32 bits (float32 and int32: JAX "
                  "`lax.bitcast_convert_type(x.astype(jnp.float32), jnp.int32)`, TensorFlow "
                  "`tf.bitcast(tf.cast(x, tf.float32), tf.int32)`), or on the host",
                  FixApplicability::kDisplayOnly};
          sink.Add(std::move(d));
        });
  }

  static std::string FixSuggestion(DType dtype) {
    switch (dtype) {
      case DType::kComplex128:
        return "use complex64: cast inputs to float32/complex64 before FFTs";
      case DType::kString:
        return "move string processing (tokenizing, lookups) into the input pipeline on the host "
               "and feed integer ids to the model";
      default:
        return "convert to a type the target supports before this point";
    }
  }
};

}  // namespace

std::unique_ptr<Check> MakeTpu001UnsupportedDtype() {
  return std::make_unique<Tpu001UnsupportedDtype>();
}

}  // namespace tpudoctor
