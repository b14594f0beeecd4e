// TPU002 slow-dtype: element types the target runs, but not natively — float64 on TPU (float32
// pairs), float16 on TPU (bfloat16 is the native 16-bit float), int64 arithmetic (emulated with
// 32-bit pairs), float8 on chips without a float8 mode.
#include "src/checks/dtype_origins.h"
#include "src/checks/factories.h"
#include "tpudoctor/knowledge/x64.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

bool IsArithmetic(OpKind kind) {
  return kind == OpKind::kElementwise || kind == OpKind::kMatMul || kind == OpKind::kReduce ||
         kind == OpKind::kConv;
}

class Tpu002SlowDtype final : public Check {
 public:
  std::string_view code() const override { return "TPU002"; }
  std::string_view name() const override { return "slow-dtype"; }
  std::string_view summary() const override {
    return "a dtype runs on the target but not natively: float64 on TPU (float32 pairs), float16 "
           "(use bfloat16), int64 arithmetic";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    for (const DTypeTraits& traits : AllDTypes()) {
      const DTypeRule rule = ctx.target.RuleFor(traits.dtype);
      if (rule.support != DTypeSupport::kSlow || !ctx.analysis.HasDType(traits.dtype)) continue;
      if (traits.cls == DTypeClass::kSignedInt || traits.cls == DTypeClass::kUnsignedInt) {
        ReportIntArithmetic(ctx, traits.dtype, rule, sink);
      } else {
        ReportOrigins(ctx, traits.dtype, rule, sink);
      }
    }
  }

 private:
  // Integer index and shape tensors are everywhere and cheap; only arithmetic on runtime values
  // pays for the emulation, so only that is reported, once per graph.
  void ReportIntArithmetic(const CheckContext& ctx, DType dtype, const DTypeRule& rule,
                           DiagnosticSink& sink) const {
    std::vector<std::pair<std::string, const Node*>> hits;
    ForEachNodeWithPath(
        ctx.graph, ctx.graph.name(), [&](const Graph& g, const std::string& path, const Node& n) {
          if (!IsArithmetic(n.kind) || n.outputs.empty()) return;
          const Value& out = g.value(n.outputs[0]);
          if (out.type.dtype != dtype || !ctx.dynamism.facts(g, out.id).runtime_data) return;
          hits.emplace_back(path, &n);
        });
    if (hits.empty()) return;
    const std::string dt(LongNameOf(dtype));
    Diagnostic d = NewFinding();
    d.severity = Severity::kWarning;
    d.message = Plural(static_cast<std::int64_t>(hits.size()), "op does ", "ops do ") + dt +
                " arithmetic on runtime values (first: `" + hits[0].second->QualifiedOp() +
                "` at `" + hits[0].second->name + "`)";
    d.location = LocationOf(hits[0].first, *hits[0].second);
    d.notes.push_back(rule.why + " (source: " + rule.source + ")");
    std::vector<std::string> names;
    for (std::size_t i = 0; i < hits.size() && i < 5; ++i)
      names.push_back("`" + hits[i].second->name + "`");
    d.notes.push_back("ops: " + Join(names, ", ") + (hits.size() > 5 ? ", ..." : ""));
    d.fix =
        Fix{"use int32 for ids, positions and counters (they fit): cast at the input pipeline; "
            "PyTorch/XLA: `XLA_USE_32BIT_LONG=1`; JAX uses int32 unless `jax_enable_x64` is on",
            FixApplicability::kDisplayOnly};
    sink.Add(std::move(d));
  }

  void ReportOrigins(const CheckContext& ctx, DType dtype, const DTypeRule& rule,
                     DiagnosticSink& sink) const {
    // One finding per dtype: a slow type is one choice (a float16 policy, a half() export) that
    // shows up at the input, the weights and every cast; the first origin locates it.
    DTypeUse use = FindDTypeOrigins(ctx.graph, dtype);
    std::erase_if(use.origins, FoldedLiteral);  // converted down at compile time: never on chip
    // A narrower value widened only to be compared gives the same booleans: a few emulated
    // elementwise ops, and nothing of the slow type reaches the rest of the program.
    std::erase_if(use.origins, ConfinedToComparisons);
    if (use.origins.empty()) return;
    {
      const DTypeOrigin& origin = use.origins.front();
      const Framework framework = ctx.graph.facts().framework;
      Diagnostic d = OriginFinding(code(), Severity::kWarning, origin, dtype, rule, use,
                                   ctx.target.name, "runs slowly", framework);
      if (std::string note = OtherOriginsNote(use, dtype); !note.empty())
        d.notes.push_back(std::move(note));
      if (dtype == DType::kFloat64 && ctx.target.is_tpu()) {
        const Float64Path& path = Float64PathOf(framework);
        d.notes.push_back("behaviour applied: " + path.applied + " (source: " + path.source + ")");
        d.fix = Fix{path.fix, FixApplicability::kDisplayOnly};
      }
      if (dtype == DType::kFloat16 && ctx.target.is_tpu()) {
        d.fix =
            Fix{"use bfloat16 instead of float16: same size, wider range, native on every TPU "
                "(Keras: `mixed_bfloat16`; PyTorch: `torch.autocast(dtype=torch.bfloat16)`)",
                FixApplicability::kDisplayOnly};
      }
      sink.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<Check> MakeTpu002SlowDtype() { return std::make_unique<Tpu002SlowDtype>(); }

}  // namespace tpudoctor
