// MEM001 over-hbm: the model's memory at the requested batch exceeds the device's HBM.
#include "src/checks/factories.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

// A device's HBM, said per device where a chip holds two (v2, v3, TPU7x: one device per
// TensorCore), so it is not read against the per-chip figure `tpu-doctor targets` lists.
std::string Hbm(const CheckContext& ctx, double device_bytes) {
  const int per_chip = std::max(1, ctx.target.devices_per_chip);
  if (per_chip == 1) return FormatGiB(device_bytes) + " of HBM";
  return FormatGiB(device_bytes) + " of HBM per device (each of a chip's " +
         std::to_string(per_chip) + " TensorCores)";
}

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
    if (ctx.graph.partitions() > 1) {
      Partitioned(ctx, sink);
      return;
    }
    if (ctx.batch == 0) {
      FixedProgram(ctx, sink);
      return;
    }
    if (ctx.sharded_estimate != nullptr && ctx.sharded_estimate->fits) {
      FitsSharded(ctx, sink);
      return;
    }
    Diagnostic d = NewFinding();
    d.severity = Severity::kError;
    d.message = Needs(ctx) + " but " + ctx.target.name + " has " + Hbm(ctx, e->hbm_bytes) +
                "; the largest batch that fits is " + std::to_string(e->max_batch);
    d.location.graph = ctx.graph.name();
    d.notes.push_back(
        "weights " + FormatGiB(m.weights) + ", gradients " + FormatGiB(m.gradients) +
        ", optimizer state " + FormatGiB(m.optimizer_state + m.master_weights) + ", activations " +
        FormatGiB(m.activations) + ", transients " + FormatGiB(m.transients) +
        (m.padding_waste > 0 ? "; TPU tile padding accounts for " + FormatGiB(m.padding_waste)
                             : ""));
    if (const Estimate* s = ctx.sharded_estimate) {
      d.notes.push_back("sharded over the slice's " + std::to_string(ctx.slice_chips) + " chips (" +
                        ToString(s->parallel) + ", remat " + std::string(NameOf(s->remat)) +
                        ") it would still need " + FormatGiB(s->memory.total()) + " per chip");
    }
    d.notes.push_back(
        "`tpu-doctor estimate` compares targets and states the assumptions behind these numbers");
    d.fix = Fix{
        e->max_batch > 0
            ? "use a per-device batch of at most " + std::to_string(e->max_batch) +
                  " (accumulate gradients to keep the global batch), shard parameters and "
                  "optimizer "
                  "state (FSDP), rematerialize activations, or pick a target with more HBM"
            : "the weights and optimizer state alone do not fit: shard them across devices (FSDP / "
              "tensor parallelism; `tpu-doctor plan MODEL` finds a slice and sharding that fit) or "
              "pick a target with more HBM",
        FixApplicability::kDisplayOnly};
    sink.Add(std::move(d));
  }

 private:
  // "training at batch 8 needs 40.00 GiB per device"
  static std::string Needs(const CheckContext& ctx) {
    return std::string(ctx.options.train ? "training" : "inference") + " at batch " +
           std::to_string(ctx.batch) + " needs " + FormatGiB(ctx.estimate->memory.total()) +
           " per device";
  }

  // The step does not fit one chip of the slice the user named, but it does once its state is
  // sharded over the slice's chips: what a user of that slice would do, so a warning that says
  // how, not a blocker.
  void FitsSharded(const CheckContext& ctx, DiagnosticSink& sink) const {
    const Estimate& e = *ctx.estimate;
    const Estimate& s = *ctx.sharded_estimate;
    Diagnostic d = NewFinding();
    d.severity = Severity::kWarning;
    d.message = Needs(ctx) + ", more than " + ctx.target.name + "'s " + Hbm(ctx, e.hbm_bytes) +
                "; sharded over the slice's " + std::to_string(ctx.slice_chips) + " chips (" +
                ToString(s.parallel) + ", remat " + std::string(NameOf(s.remat)) + ") it needs " +
                FormatGiB(s.memory.total()) + " per chip and fits";
    d.location.graph = ctx.graph.name();
    d.notes.push_back("replicated on every chip (data parallelism alone) it does not fit");
    d.fix =
        Fix{"shard parameters, gradients and optimizer state over the slice (PyTorch/XLA "
            "FSDP, a JAX mesh with an fsdp axis, MaxText `ici_fsdp_parallelism`) and "
            "rematerialize per layer; `tpu-doctor plan MODEL` compares shardings and slices",
            FixApplicability::kDisplayOnly};
    sink.Add(std::move(d));
  }

  // An XLA program's shapes are fixed at export: its batch is part of the program.
  void FixedProgram(const CheckContext& ctx, DiagnosticSink& sink) const {
    const Estimate& e = *ctx.estimate;
    Diagnostic d = NewFinding();
    d.severity = Severity::kError;
    d.location.graph = ctx.graph.name();
    d.message = "the program needs about " + FormatGiB(e.memory.total()) + " per device but " +
                ctx.target.name + " has " + Hbm(ctx, e.hbm_bytes);
    d.notes.push_back(
        "counted as the program's inputs plus the largest set of values live at once, in the "
        "target's tiled layout; XLA's buffer assignment can reuse more, so treat it as an "
        "estimate");
    d.fix =
        Fix{"shard the program over devices (jax.sharding / pjit, then re-export), lower the "
            "batch baked into the program, rematerialize (jax.checkpoint), or pick a target "
            "with more HBM",
            FixApplicability::kDisplayOnly};
    sink.Add(std::move(d));
  }

  // An SPMD-partitioned XLA program has global shapes. tpu-doctor does not read per-tensor
  // shardings, so its even split is a lower bound: an error only when even that does not fit.
  void Partitioned(const CheckContext& ctx, DiagnosticSink& sink) const {
    const Estimate& e = *ctx.estimate;
    const std::int64_t n = ctx.graph.partitions();
    const double per_device = e.memory.total() / static_cast<double>(n);
    Diagnostic d = NewFinding();
    d.location.graph = ctx.graph.name();
    const std::string global = "the program's global (unsharded) tensors need " +
                               FormatGiB(e.memory.total()) + "; it is partitioned over " +
                               std::to_string(n) + " devices";
    if (per_device > e.hbm_bytes) {
      d.severity = Severity::kError;
      d.message = global + ", and even an even split (" + FormatGiB(per_device) +
                  " per device) is over " + ctx.target.name + "'s " + Hbm(ctx, e.hbm_bytes);
      d.fix = Fix{"partition over more devices or pick a target with more HBM",
                  FixApplicability::kDisplayOnly};
    } else {
      d.severity = Severity::kNote;
      d.message = global + ": about " + FormatGiB(per_device) +
                  " per device if evenly sharded, within " + ctx.target.name + "'s " +
                  Hbm(ctx, e.hbm_bytes);
      d.notes.push_back(
          "tpu-doctor does not read per-tensor shardings: replicated tensors make the real figure "
          "higher; XLA's memory report after SPMD partitioning is the exact number");
    }
    sink.Add(std::move(d));
  }
};

}  // namespace

std::unique_ptr<Check> MakeMem001OverHbm() { return std::make_unique<Mem001OverHbm>(); }

}  // namespace tpudoctor
