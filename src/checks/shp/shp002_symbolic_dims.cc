// SHP002 symbolic-dims: dims that are still symbolic or unknown after --batch/--dim. A symbol is
// fine for XLA (it gets a value at compile time) but leaves the analysis unable to size tensors;
// an input dim nobody named is a warning, because nothing says what value it will have.
#include <set>

#include "src/checks/factories.h"
#include "src/checks/pipe/pipeline.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

class Shp002SymbolicDims final : public Check {
 public:
  std::string_view code() const override { return "SHP002"; }
  std::string_view name() const override { return "symbolic-dims"; }
  std::string_view summary() const override {
    return "input dims are still symbolic or unknown; says which --batch/--dim flag makes them "
           "static";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    if (pipe::IsPipelineGraph(ctx)) return;  // a tf.data graph: no device shapes
    std::set<std::string> symbols;
    std::vector<std::string> symbol_order;
    bool unknown_input = false;
    for (ValueId id : ctx.graph.inputs()) {
      const Value& v = ctx.graph.value(id);
      if (!v.type.shape.rank_known()) {
        sink.Add(UnknownInput(ctx, v, "its rank is unknown"));
        unknown_input = true;
        continue;
      }
      for (std::size_t i = 0; i < v.type.shape.rank(); ++i) {
        const Dim& d = v.type.shape.dim(i);
        // `<=N` is a bounded dynamic dim of an XLA program: XLA003's, not a flag to set.
        if (d.is_symbol() && symbols.insert(d.symbol()).second) {
          symbol_order.push_back(d.symbol());
        }
        // An XLA program's `?` dims are XLA003's (shape polymorphism): one finding per cause.
        if (d.is_unknown()) {
          if (!ctx.graph.facts().xla_program)
            sink.Add(UnknownInput(ctx, v, "dim " + std::to_string(i) + " has no size or name"));
          unknown_input = true;
        }
      }
    }
    if (!symbol_order.empty()) sink.Add(SymbolNote(ctx, symbol_order));
    // With symbolic or unknown inputs, unknown intermediate dims are expected: the findings above
    // cover them. Only gaps left once every input is static are tpu-doctor's own.
    const int gaps = symbol_order.empty() && !unknown_input ? CountUnknownIntermediates(ctx) : 0;
    if (gaps > 0) {
      Diagnostic d = NewFinding();
      d.severity = Severity::kNote;
      d.message = Plural(gaps, "intermediate value has", "intermediate values have") +
                  " dims tpu-doctor could not derive; they are left out of size estimates";
      d.location.graph = ctx.graph.name();
      sink.Add(std::move(d));
    }
  }

 private:
  Diagnostic UnknownInput(const CheckContext& ctx, const Value& v, const std::string& what) const {
    Diagnostic d = NewFinding();
    d.severity = Severity::kNote;
    d.message = "input `" + v.name + "` has shape " + v.type.shape.ToString() + ": " + what +
                "; XLA compiles it with the shape fed at run time (a recompile per new shape), but "
                "sizes and costs need one";
    d.location.graph = ctx.graph.name();
    d.location.value = v.name;
    d.fix = Fix{
        "export with a fixed size, or name the dim (a dynamic axis) and pass `--dim NAME=VALUE`",
        FixApplicability::kDisplayOnly};
    return d;
  }

  Diagnostic SymbolNote(const CheckContext& ctx, const std::vector<std::string>& symbols) const {
    std::vector<std::string> quoted, flags;
    for (const std::string& s : symbols) {
      quoted.push_back("`" + s + "`");
      flags.push_back("`--dim " + s + "=N`");
    }
    Diagnostic d = NewFinding();
    d.severity = Severity::kNote;
    d.message = "input dims " + Join(quoted, ", ") +
                " are symbolic; XLA fixes them at compile time, but sizes and costs need values";
    d.location.graph = ctx.graph.name();
    d.notes.push_back("make them static with `--batch N` (the leading dim of the inputs) or " +
                      Join(flags, " "));
    d.notes.push_back(
        "every distinct value compiles a separate XLA program: keep the batch and sequence "
        "length fixed (pad to buckets) on TPU");
    return d;
  }

  // Values with an unknown dim that no data-dependent op explains: gaps in shape inference.
  static int CountUnknownIntermediates(const CheckContext& ctx) {
    int count = 0;
    for (const Value& v : ctx.graph.values()) {
      if (v.origin != ValueOrigin::kNodeOutput || v.name.empty()) continue;
      if (ctx.dynamism.facts(ctx.graph, v.id).dyn_shape) continue;
      if (v.type.kind != ValueKind::kTensor) continue;
      bool unknown = !v.type.shape.rank_known();
      for (const Dim& d : v.type.shape.dims()) unknown |= d.is_unknown();
      count += unknown ? 1 : 0;
    }
    return count;
  }
};

}  // namespace

std::unique_ptr<Check> MakeShp002SymbolicDims() { return std::make_unique<Shp002SymbolicDims>(); }

}  // namespace tpudoctor
