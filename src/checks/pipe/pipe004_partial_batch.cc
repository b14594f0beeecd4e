// PIPE004 partial-batch: `batch` (or `padded_batch`) without `drop_remainder=True`: the batch dim
// is unknown (`None`) and the last batch is smaller, which XLA's static compilation for TPU cannot
// take.
#include <set>

#include "src/checks/factories.h"
#include "src/checks/pipe/pipeline.h"

namespace tpudoctor {
namespace {

class Pipe004PartialBatch final : public Check {
 public:
  std::string_view code() const override { return "PIPE004"; }
  std::string_view name() const override { return "partial-batch"; }
  std::string_view summary() const override {
    return "a tf.data batch without drop_remainder=True: a dynamic batch dim the TPU cannot "
           "compile statically";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    pipe::ForEachDatasetOp(ctx, [&](const Graph& g, const Node& n) {
      // Batch ops whose last input is drop_remainder, and the V1 ops that have none.
      bool partial = n.op == Op::kBatchKeepsRemainder;
      std::string why = "has no drop_remainder";
      if (n.op == Op::kBatchDataset) {
        const auto flag = pipe::LastConstInput(g, n);
        if (flag == 1) return;
        partial = true;
        why = flag ? "has drop_remainder=False" : "takes drop_remainder from a tensor";
      }
      if (!partial) return;
      Diagnostic d = NewFinding();
      d.severity = Severity::kError;
      d.message = pipe::Named(n) + " " + why +
                  ": its batch dim is unknown and the last batch is smaller, but XLA compiles the "
                  "TPU step for one static batch size";
      d.location = pipe::At(g, n);
      d.notes.push_back(
          "TPU runs abort on this with dynamic-shape errors from the first op that needs the batch "
          "size (seen with concatenations and UpSampling2D resizes)");
      d.fix =
          Fix{"`dataset.batch(batch_size, drop_remainder=True)` (also for `padded_batch`); "
              "repeat or pad the data if every example must be seen",
              FixApplicability::kDisplayOnly};
      sink.Add(std::move(d));
    });
  }
};

}  // namespace

std::unique_ptr<Check> MakePipe004PartialBatch() { return std::make_unique<Pipe004PartialBatch>(); }

}  // namespace tpudoctor
