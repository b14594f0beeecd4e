// PIPE005 sequential-interleave: `interleave` without `num_parallel_calls` opens and reads its
// files one after another.
#include "src/checks/factories.h"
#include "src/checks/pipe/pipeline.h"

namespace tpudoctor {
namespace {

class Pipe005SequentialInterleave final : public Check {
 public:
  std::string_view code() const override { return "PIPE005"; }
  std::string_view name() const override { return "sequential-interleave"; }
  std::string_view summary() const override {
    return "a tf.data interleave without num_parallel_calls reads its sources one at a time";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    pipe::ForEachDatasetOp(ctx, [&](const Graph& g, const Node& n) {
      if (n.op != Op::kInterleaveDataset) return;
      Diagnostic d = NewFinding();
      d.severity = Severity::kWarning;
      d.message = pipe::Named(n) +
                  " reads its sources sequentially (no num_parallel_calls): file reads from "
                  "Cloud Storage are latency-bound and do not overlap";
      d.location = pipe::At(g, n);
      d.fix =
          Fix{"`dataset.interleave(f, cycle_length=N, num_parallel_calls=tf.data.AUTOTUNE, "
              "deterministic=False)`",
              FixApplicability::kDisplayOnly};
      sink.Add(std::move(d));
    });
  }
};

}  // namespace

std::unique_ptr<Check> MakePipe005SequentialInterleave() {
  return std::make_unique<Pipe005SequentialInterleave>();
}

}  // namespace tpudoctor
