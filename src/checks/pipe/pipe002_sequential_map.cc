// PIPE002 sequential-map: `dataset.map(f)` without `num_parallel_calls` runs `f` on one element at
// a time.
#include "src/checks/factories.h"
#include "src/checks/pipe/pipeline.h"

namespace tpudoctor {
namespace {

class Pipe002SequentialMap final : public Check {
 public:
  std::string_view code() const override { return "PIPE002"; }
  std::string_view name() const override { return "sequential-map"; }
  std::string_view summary() const override {
    return "a tf.data map without num_parallel_calls processes one element at a time";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    pipe::ForEachDatasetOp(ctx, [&](const Graph& g, const Node& n) {
      const bool sequential = n.op == Op::kMapDataset;
      const bool one = n.op == Op::kParallelMapDataset && pipe::LastConstInput(g, n) == 1;
      if (!sequential && !one) return;
      Diagnostic d = NewFinding();
      d.severity = Severity::kWarning;
      d.message = pipe::Named(n) +
                  " maps one element at a time (no num_parallel_calls): the host's other cores "
                  "sit idle while the TPU waits for input";
      d.location = pipe::At(g, n);
      d.fix = Fix{"`dataset.map(f, num_parallel_calls=tf.data.AUTOTUNE)`",
                  FixApplicability::kDisplayOnly};
      sink.Add(std::move(d));
    });
  }
};

}  // namespace

std::unique_ptr<Check> MakePipe002SequentialMap() {
  return std::make_unique<Pipe002SequentialMap>();
}

}  // namespace tpudoctor
