#include "src/cost/sharding.h"
#include "src/jobs/rules/job_rules.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

// With a model: the estimate's memory model on the job's slice at the model's per-device batch,
// data parallel (what TPUStrategy and torch_xla do by default); when that does not fit but FSDP
// over the slice with per-layer remat would, the finding is a warning that says so. A model that
// cannot be sized (a symbolic batch the job does not settle) is a note: nothing is left unsaid.
class Job008 final : public JobRule {
 public:
  TPUD_JOB_RULE("JOB008", "model-does-not-fit", "the model does not fit the job's TPU slice")
  void Run(const JobContext& c, DiagnosticSink& sink) const override {
    const JobSpec& s = c.spec;
    if (c.model == nullptr || s.generation == nullptr || s.chips == 0) return;
    auto target = FindTarget(s.generation->target);
    if (!target) return;
    if (!c.model->facts().batch) {
      NotChecked(c, "the model's batch dim is symbolic and the job names no batch", sink);
      return;
    }
    EstimateOptions o;
    o.train = c.train;
    o.optimizer = c.optimizer;
    o.precision = c.precision;
    o.batch = c.model->facts().StepBatch();
    o.chips = s.chips;
    // The sharding the job names (its MaxText-style flags), else data parallel.
    o.parallel = {0, s.fsdp_parallel, s.tensor_parallel};
    if (!ResolveParallelism(o.parallel, s.chips)) o.parallel = {};
    if (auto r = ParseRemat(s.remat)) o.remat = *r;
    auto dp = EstimateStep(*c.model, **target, o);
    if (!dp) {
      NotChecked(c, dp.error().message, sink);
      return;
    }
    if (dp->fits) return;
    o.parallel = {0, s.chips, 1};
    o.remat = Remat::kLayer;
    auto fsdp = EstimateStep(*c.model, **target, o);
    const bool sharded_fits = fsdp && fsdp->fits && (s.fsdp_parallel == 1 || s.remat != "layer");
    sink.Add(JobFinding(
        c, code(), sharded_fits ? Severity::kWarning : Severity::kError,
        "the model needs " + FormatBytes(dp->memory.total()) +
            ((*target)->devices_per_chip > 1 ? " per TensorCore (" : " per chip (") +
            ToString(dp->parallel) + ", remat " + std::string(NameOf(dp->remat)) + ") on " +
            SliceName(s) + " at batch " + std::to_string(o.batch) + " per device, more than its " +
            FormatBytes(dp->hbm_bytes) + " of HBM" +
            (sharded_fits ? "; it fits only with FSDP over the slice and per-layer remat (" +
                                FormatBytes(fsdp->memory.total()) + ")"
                          : "; even FSDP over the slice with per-layer remat needs " +
                                (fsdp ? FormatBytes(fsdp->memory.total()) : std::string("more"))),
        "", "`tpu-doctor plan MODEL` finds a slice, batch and sharding that fit"));
  }

 private:
  void NotChecked(const JobContext& c, const std::string& why, DiagnosticSink& sink) const {
    sink.Add(JobFinding(c, code(), Severity::kNote,
                        "the model's memory on " + SliceName(c.spec) + " was not checked: " + why,
                        "", "give the per-device batch with --batch, or name it in the job"));
  }
};

}  // namespace

std::unique_ptr<JobRule> MakeJob008ModelDoesNotFit() { return std::make_unique<Job008>(); }

}  // namespace tpudoctor
