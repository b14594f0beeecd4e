// PIPE003 no-prefetch: a pipeline with no `prefetch` anywhere: the host prepares each batch only
// when the device asks for it.
#include "src/checks/factories.h"
#include "src/checks/pipe/pipeline.h"

namespace tpudoctor {
namespace {

class Pipe003NoPrefetch final : public Check {
 public:
  std::string_view code() const override { return "PIPE003"; }
  std::string_view name() const override { return "no-prefetch"; }
  std::string_view summary() const override {
    return "a tf.data pipeline without prefetch: input preparation and the training step do not "
           "overlap";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    if (!pipe::IsPipelineGraph(ctx)) return;
    const Node* last = nullptr;
    bool prefetch = false;
    for (NodeId id : ctx.graph.topo_order()) {
      const Node& n = ctx.graph.node(id);
      if (!pipe::IsDatasetOp(n)) continue;
      prefetch |= n.op == Op::kPrefetchDataset;
      last = &n;
    }
    if (prefetch || last == nullptr) return;
    Diagnostic d = NewFinding();
    d.severity = Severity::kWarning;
    d.message = "the pipeline ending at `" + last->name +
                "` never prefetches: the host builds each batch only after the TPU asks for it, "
                "so the chip idles while it does";
    d.location = pipe::At(ctx.graph, *last);
    d.fix =
        Fix{"end the pipeline with `.prefetch(tf.data.AUTOTUNE)`", FixApplicability::kDisplayOnly};
    sink.Add(std::move(d));
  }
};

}  // namespace

std::unique_ptr<Check> MakePipe003NoPrefetch() { return std::make_unique<Pipe003NoPrefetch>(); }

}  // namespace tpudoctor
