// PIPE006 small-shuffle-buffer: `shuffle(buffer_size)` with a buffer far smaller than a dataset
// needs to be mixed (a judgement: under 1,000 elements; see docs/rules/PIPE006.md).
#include <set>

#include "src/checks/factories.h"
#include "src/checks/pipe/pipeline.h"

namespace tpudoctor {
namespace {

constexpr std::int64_t kSmallBuffer = 1000;

class Pipe006SmallShuffle final : public Check {
 public:
  std::string_view code() const override { return "PIPE006"; }
  std::string_view name() const override { return "small-shuffle-buffer"; }
  std::string_view summary() const override {
    return "a tf.data shuffle buffer too small to mix the data";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    pipe::ForEachDatasetOp(ctx, [&](const Graph& g, const Node& n) {
      if (n.op != Op::kShuffleDataset) return;
      const auto buffer = pipe::ConstInput(g, n, 1);
      if (!buffer || *buffer >= kSmallBuffer) return;
      Diagnostic d = NewFinding();
      d.severity = Severity::kWarning;
      d.message = pipe::Named(n) + " shuffles with a buffer of " + std::to_string(*buffer) +
                  " elements: consecutive batches come from the same stretch of the input, which "
                  "hurts convergence";
      d.location = pipe::At(g, n);
      d.notes.push_back(
          "a shuffle is uniform only with a buffer as large as the dataset; with sharded files, "
          "shuffle the file list too");
      d.fix =
          Fix{"`dataset.shuffle(buffer_size=10_000)` or more (memory permitting), after "
              "shuffling the list of input files",
              FixApplicability::kDisplayOnly};
      sink.Add(std::move(d));
    });
  }
};

}  // namespace

std::unique_ptr<Check> MakePipe006SmallShuffle() { return std::make_unique<Pipe006SmallShuffle>(); }

}  // namespace tpudoctor
