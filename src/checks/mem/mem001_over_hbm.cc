// MEM001 over-hbm: the model's memory at the requested batch exceeds the device's HBM.
#include "src/checks/factories.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

std::string GiB(double b) { return FormatFixed(b / (1024.0 * 1024 * 1024), 2) + " GiB"; }

class Mem001OverHbm final : public Check {
 public:
  std::string_view code() const override { return "MEM001"; }
  std::string_view name() const override { return "over-hbm"; }
  std::string_view summary() const override {
    return "memory at this batch (weights, gradients, optimizer state, activations) exceeds the "
           "device's HBM";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    const Estimate* e = ctx.estimate;
    if (e == nullptr || e->fits) return;
    const MemoryBreakdown& m = e->memory;
    Diagnostic d;
    d.code = std::string(code());
    d.severity = Severity::kError;
    d.message = std::string(ctx.options.train ? "training" : "inference") + " at batch " +
                std::to_string(ctx.batch) + " needs " + GiB(m.total()) + " per device but " +
                ctx.target.name + " has " + GiB(e->hbm_bytes) +
                " of HBM; the largest batch that fits is " + std::to_string(e->max_batch);
    d.location.graph = ctx.graph.name();
    d.notes.push_back(
        "weights " + GiB(m.weights) + ", gradients " + GiB(m.gradients) + ", optimizer state " +
        GiB(m.optimizer_state + m.master_weights) + ", activations " + GiB(m.activations) +
        ", transients " + GiB(m.transients) +
        (m.padding_waste > 0 ? "; TPU tile padding accounts for " + GiB(m.padding_waste) : ""));
    d.notes.push_back(
        "`tpu-doctor estimate` compares targets and states the assumptions behind these numbers");
    d.fix = Fix{
        e->max_batch > 0
            ? "use a per-device batch of at most " + std::to_string(e->max_batch) +
                  " (accumulate gradients to keep the global batch), shard parameters and "
                  "optimizer "
                  "state (FSDP), rematerialize activations, or pick a target with more HBM"
            : "the weights and optimizer state alone do not fit: shard them across devices (FSDP / "
              "tensor parallelism) or pick a target with more HBM",
        FixApplicability::kDisplayOnly};
    sink.Add(std::move(d));
  }
};

}  // namespace

std::unique_ptr<Check> MakeMem001OverHbm() { return std::make_unique<Mem001OverHbm>(); }

}  // namespace tpudoctor
