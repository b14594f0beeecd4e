// TPU001 unsupported-dtype: values of an element type the target cannot hold or compute.
#include <algorithm>

#include "src/checks/dtype_origins.h"
#include "src/checks/factories.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

class Tpu001UnsupportedDtype final : public Check {
 public:
  std::string_view code() const override { return "TPU001"; }
  std::string_view name() const override { return "unsupported-dtype"; }
  std::string_view summary() const override {
    return "a tensor has an element type the target cannot compute (float64, complex128, string on "
           "TPU)";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    for (const DTypeTraits& traits : AllDTypes()) {
      const DTypeRule rule = ctx.target.RuleFor(traits.dtype);
      if (rule.support != DTypeSupport::kUnsupported) continue;
      DTypeUse use = FindDTypeOrigins(ctx.graph, traits.dtype);
      // Literals converted down at once are folded by XLA: nothing of the type reaches the chip.
      std::erase_if(use.origins, FoldedLiteral);
      if (use.origins.empty()) continue;
      if (std::ranges::all_of(use.origins, ConfinedToComparisons)) {
        sink.Add(ComparisonOnly(ctx, traits.dtype, use));
        continue;
      }
      // Comparisons beside a real float64 origin are knock-ons of the same cause: report the rest.
      std::erase_if(use.origins, ConfinedToComparisons);
      // A JAX program traced with x64 on has one cause for every float64 value: one finding.
      if (traits.dtype == DType::kFloat64 && ctx.graph.facts().framework == Framework::kJax) {
        Diagnostic d = Report(ctx, traits.dtype, rule, use, use.origins.front());
        if (std::string note = OtherOriginsNote(use, traits.dtype, ", one cause"); !note.empty())
          d.notes.push_back(std::move(note));
        sink.Add(std::move(d));
        continue;
      }
      for (const DTypeOrigin& origin : use.origins)
        sink.Add(Report(ctx, traits.dtype, rule, use, origin));
    }
  }

 private:
  Diagnostic Report(const CheckContext& ctx, DType dtype, const DTypeRule& rule,
                    const DTypeUse& use, const DTypeOrigin& origin) const {
    const Framework framework = ctx.graph.facts().framework;
    Diagnostic d = OriginFinding(code(), Severity::kError, origin, dtype, rule, use,
                                 ctx.target.name, "does not support", framework);
    d.fix = Fix{FixSuggestion(dtype, framework), FixApplicability::kDisplayOnly};
    return d;
  }

  // float64 that never leaves a comparison: the booleans equal the float32 ones, and XLA's 64-bit
  // rewriting on TPU emulates widening casts and compares (elementwise ops it handles), so it runs.
  Diagnostic ComparisonOnly(const CheckContext& ctx, DType dtype, const DTypeUse& use) const {
    const DTypeOrigin& first = use.origins.front();
    const std::string dt(LongNameOf(dtype));
    Diagnostic d;
    d.code = std::string(code());
    d.severity = Severity::kNote;
    const Node& compare = FirstComparison(*first.graph, *first.value);
    d.message = "`" + compare.QualifiedOp() + "` compares values widened to " + dt +
                "; the result is boolean, so no " + dt + " tensor reaches the rest of the program";
    d.location = LocationOf(first.graph_path, compare);
    d.notes.push_back("a narrower value compared with a " + dt +
                      " constant it can represent (such as `x > -inf` with a Python or NumPy "
                      "float literal) gives the same booleans in its own type; on " +
                      ctx.target.name +
                      " XLA's 64-bit rewriting handles the widening casts and compares at the "
                      "cost of a few elementwise ops, so this is not a blocker");
    d.notes.push_back(Plural(use.values, "value", "values") + " in the model are " + dt +
                      ", all inside such comparisons");
    d.fix =
        Fix{"compare in the value's own type to drop the casts (`x > jnp.float32(-jnp.inf)`, "
            "`x > torch.finfo(x.dtype).min`, `tf.cast(c, x.dtype)`)",
            FixApplicability::kDisplayOnly};
    return d;
  }

  // The comparison a confined origin feeds (through layout ops); the origin itself otherwise.
  static const Node& FirstComparison(const Graph& g, const Value& v) {
    for (NodeId user : v.users) {
      const Node& n = g.node(user);
      if (n.kind == OpKind::kElementwise) return n;
      for (ValueId out : n.outputs) {
        if (!g.value(out).users.empty()) return FirstComparison(g, g.value(out));
      }
    }
    return g.node(v.producer);
  }

  static std::string FixSuggestion(DType dtype, Framework framework) {
    if (dtype == DType::kFloat64 && framework == Framework::kJax) {
      return "trace with x64 off (`jax.config.update(\"jax_enable_x64\", False)`, the default), "
             "or cast inputs and parameters to float32 (`x.astype(jnp.float32)`) before `jax.jit`";
    }
    if (dtype == DType::kFloat64 && framework == Framework::kKeras) {
      return "use float32 layers, or `keras.mixed_precision.set_global_policy(\"mixed_bfloat16\")` "
             "for TPU speed, and feed float32 data (`x.astype(\"float32\")`)";
    }
    if (dtype == DType::kFloat64 && framework == Framework::kTensorFlow) {
      return "make variables and inputs float32 (`tf.cast(x, tf.float32)`, "
             "`np.asarray(x, np.float32)`) and re-export";
    }
    switch (dtype) {
      case DType::kFloat64:
        return "use float32 (or bfloat16) end to end: `model.float()` and float32 inputs before "
               "export; "
               "in JAX keep `jax_enable_x64` off";
      case DType::kComplex128:
        return "use complex64: cast inputs to float32/complex64 before FFTs";
      case DType::kString:
        return "move string processing (tokenizing, lookups) into the input pipeline on the host "
               "and feed "
               "integer ids to the model";
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
