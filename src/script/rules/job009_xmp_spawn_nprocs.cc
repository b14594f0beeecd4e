#include <optional>

#include "src/script/rules/factories.h"

namespace tpudoctor::script {
namespace {

// Whether the script selects torch_xla's old XRT runtime (`os.environ["XRT_TPU_CONFIG"] = ...`),
// under which nprocs=8 was the idiom.
bool SelectsXrt(const ScriptModel& model) {
  bool xrt = false;
  Walk(model.syntax(), [&](Node n, int) {
    if (n.is("subscript") && StringLiteral(n.field("subscript")) == "XRT_TPU_CONFIG") xrt = true;
    return !xrt;
  });
  return xrt;
}

// xmp.spawn(fn, nprocs=N) with N > 1: torch_xla's PJRT runtime (the only one since torch_xla 2.1)
// starts one process per device itself and raises "Unsupported nprocs" for anything but None or 1.
class Job009 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("JOB009", "xmp-spawn-nprocs",
                   "xmp.spawn(nprocs=N) with N > 1 on torch_xla's PJRT runtime")
  void Run(const ScriptContext& c) const override {
    std::optional<bool> xrt;  // computed for the first spawn: it walks the whole file
    for (const Call& call : c.model.calls()) {
      if (call.name != "torch_xla.distributed.xla_multiprocessing.spawn") continue;
      Node nprocs = call.Keyword("nprocs");
      const bool positional = !nprocs && call.args.size() >= 3;  // spawn(fn, args, nprocs)
      if (positional) nprocs = call.args[2];
      auto n = IntLiteral(nprocs);
      if (!n || *n <= 1) continue;
      if (!xrt) xrt = SelectsXrt(c.model);
      if (*xrt) continue;
      Diagnostic d = c.Finding(code(), Severity::kError, nprocs,
                               "`xmp.spawn(..., nprocs=" + std::to_string(*n) +
                                   ")`: torch_xla's PJRT runtime takes nprocs=None (one process "
                                   "per device) or 1, and raises `Unsupported nprocs` for " +
                                   std::to_string(*n));
      d.fix = Fix{"drop nprocs: xmp.spawn starts one process per TPU device itself",
                  FixApplicability::kSafe};
      if (!positional) d.fix->edits.push_back(RemoveKeyword(call, "nprocs"));
      if (positional) d.fix->applicability = FixApplicability::kDisplayOnly;
      c.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakeJob009XmpSpawnNprocs() { return std::make_unique<Job009>(); }

}  // namespace tpudoctor::script
