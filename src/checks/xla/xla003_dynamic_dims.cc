// XLA003 dynamic-dims: an XLA program with dynamic dimensions — bounded (`f32[<=N]`: padded to the
// bound on TPU, a warning) or unbounded (`f32[?]` in HLO: XLA:TPU needs static or bounded shapes,
// an error; `tensor<?x...>` in StableHLO: shape-polymorphic, refined per call, a note).
#include "src/checks/factories.h"

namespace tpudoctor {
namespace {

class Xla003DynamicDims final : public Check {
 public:
  std::string_view code() const override { return "XLA003"; }
  std::string_view name() const override { return "dynamic-dims"; }
  std::string_view summary() const override {
    return "an XLA program has bounded (<=N) or unbounded (?) dimensions";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    const Value* bounded = nullptr;
    const Value* unbounded = nullptr;
    int bounded_count = 0, unbounded_count = 0;
    if (!ctx.graph.facts().xla_program) return;
    for (const Value& v : ctx.graph.values()) {
      bool b = false, u = false;
      for (const Dim& d : v.type.shape.dims()) {
        b |= d.is_bounded();
        u |= d.is_unknown();
      }
      if (b && bounded_count++ == 0) bounded = &v;
      if (u && unbounded_count++ == 0) unbounded = &v;
    }
    if (unbounded != nullptr && ctx.graph.facts().format == "stablehlo") {
      // A shape-polymorphic StableHLO module (jax.export with symbolic dims) is specialized to the
      // call's static shapes (stablehlo-refine-shapes) before XLA compiles it: like a symbolic
      // batch dim, not a blocker.
      sink.Add(Make(ctx, *unbounded, unbounded_count, Severity::kNote,
                    "has a shape-polymorphic dimension: the module is specialized to the static "
                    "shapes of each call (shape refinement) before XLA compiles it, so every new "
                    "size compiles a new program",
                    "keep the sizes a TPU job feeds fixed (pad to a few buckets); to cost it here, "
                    "export with concrete shapes"));
    } else if (unbounded != nullptr) {
      sink.Add(Make(
          ctx, *unbounded, unbounded_count, Severity::kError,
          "has an unbounded dynamic dimension: XLA:TPU compiles static or bounded shapes only",
          "export with static shapes (or a bounded `<=N` size); for jax.export shape polymorphism, "
          "specialize the shapes before compiling for TPU"));
    }
    if (bounded != nullptr) {
      sink.Add(Make(ctx, *bounded, bounded_count, Severity::kWarning,
                    "has a bounded dynamic dimension: XLA:TPU pads it to the bound, so memory and "
                    "time are those "
                    "of the largest size",
                    "fine when the bound is tight; a static shape avoids the padding and the "
                    "runtime size bookkeeping"));
    }
  }

 private:
  Diagnostic Make(const CheckContext& ctx, const Value& v, int count, Severity severity,
                  const std::string& what, const std::string& fix) const {
    Diagnostic d = NewFinding();
    d.severity = severity;
    d.message = "`" + v.name + "` " + v.type.ToString() + " " + what;
    d.location.graph = ctx.graph.name();
    d.location.value = v.name;
    if (v.producer != kNoNode)
      d.location = LocationOf(ctx.graph.name(), ctx.graph.node(v.producer)),
      d.location.value = v.name;
    if (count > 1) d.notes.push_back(std::to_string(count) + " values have such dims");
    d.fix = Fix{fix, FixApplicability::kDisplayOnly};
    return d;
  }
};

}  // namespace

std::unique_ptr<Check> MakeXla003DynamicDims() { return std::make_unique<Xla003DynamicDims>(); }

}  // namespace tpudoctor
