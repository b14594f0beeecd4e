// PERF003 batch-multiple: the per-core batch is not a multiple of 8 on TPU.
#include "src/checks/factories.h"

namespace tpudoctor {
namespace {

class Perf003BatchMultiple final : public Check {
 public:
  std::string_view code() const override { return "PERF003"; }
  std::string_view name() const override { return "batch-multiple"; }
  std::string_view summary() const override {
    return "the per-core batch is not a multiple of 8, so TPU tiles carry padding rows";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    // Batch 1 is a deliberate latency choice for serving, not a sizing mistake. A static batch
    // under 8 written in the file is the example input the model was exported with (torch.export
    // and tf.function traces keep it), not the batch it trains or serves with: a judgement, as
    // the file cannot say which. The batch given with --batch is the user's own.
    if (!ctx.target.is_tpu() || !ctx.target.tiling || ctx.estimate == nullptr) return;
    // The batch is the second-minor dim of the activations: rows of 32-bit tiles.
    const TargetSpec::Tiling& tiles = *ctx.target.tiling;
    const std::int64_t rows = tiles.Rows(32);
    if (ctx.batch <= 1 || ctx.batch % rows == 0) return;
    if (ctx.graph.facts().batch_source == BatchSource::kModel && ctx.batch < rows) return;
    const std::int64_t up = (ctx.batch / rows + 1) * rows;
    const std::string tile = "(" + std::to_string(rows) + "," + std::to_string(tiles.minor) + ")";
    Diagnostic d = NewFinding();
    d.severity = Severity::kWarning;
    d.message = "the per-core batch is " + std::to_string(ctx.batch) + ", not a multiple of " +
                std::to_string(rows) + ": " + std::to_string(up - ctx.batch) + " of every " +
                std::to_string(up) + " rows in the TPU's " + tile + " tiles are padding";
    d.location.graph = ctx.graph.name();
    d.location.value = ctx.graph.value(ctx.graph.inputs()[0]).name;
    d.notes.push_back(
        "Cloud TPU performance guide: the batch size per core should be a multiple of 8, or of 128 "
        "for the best MXU use when the feature dims are small");
    d.fix = Fix{"use a per-core batch of " + std::to_string(up) +
                    (ctx.batch > rows ? " or " + std::to_string(up - rows) : "") +
                    " (global batch = per-core batch x cores)",
                FixApplicability::kDisplayOnly};
    sink.Add(std::move(d));
  }
};

}  // namespace

std::unique_ptr<Check> MakePerf003BatchMultiple() {
  return std::make_unique<Perf003BatchMultiple>();
}

}  // namespace tpudoctor
