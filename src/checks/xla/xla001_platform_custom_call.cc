// XLA001 platform-custom-call: an XLA program calls a custom-call target that exists only on CPU
// or GPU (LAPACK, cuSOLVER, cuBLAS/cuDNN, Triton, ...): it was lowered for another platform.
#include <algorithm>
#include <map>

#include "src/checks/factories.h"
#include "tpudoctor/knowledge/hlo_ops.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

class Xla001PlatformCustomCall final : public Check {
 public:
  std::string_view code() const override { return "XLA001"; }
  std::string_view name() const override { return "platform-custom-call"; }
  std::string_view summary() const override {
    return "a custom call exists only on CPU or GPU: the program was lowered for another platform";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    std::map<std::string, std::vector<std::pair<std::string, const Node*>>> by_target;
    std::vector<std::string> order;
    std::vector<std::string> internal;  // XLA:GPU rewrites in an optimized dump
    const Node* first_internal = nullptr;
    std::string first_internal_path;
    ForEachNodeWithPath(
        ctx.graph, ctx.graph.name(), [&](const Graph&, const std::string& path, const Node& n) {
          auto target = CustomCallTarget(n);
          if (!target) return;
          const CallPlatform p = LookupCustomCall(*target).platform;
          if (p == CallPlatform::kGpuInternal) {
            if (std::find(internal.begin(), internal.end(), *target) == internal.end())
              internal.push_back(*target);
            if (first_internal == nullptr) {
              first_internal = &n;
              first_internal_path = path;
            }
            return;
          }
          if (p != CallPlatform::kCpuOnly && p != CallPlatform::kGpuOnly) return;
          if (!by_target.count(*target)) order.push_back(*target);
          by_target[*target].emplace_back(path, &n);
        });
    if (first_internal != nullptr) {
      Diagnostic d = NewFinding();
      d.severity = Severity::kNote;
      d.message = "this is a dump optimized for GPU: " + Join(internal, ", ") +
                  " are XLA:GPU's rewrites of standard ops; the program behind them is portable";
      d.location = LocationOf(first_internal_path, *first_internal);
      d.notes.push_back(
          "costs and layouts in a GPU-optimized dump are the GPU's; dump before optimization "
          "(`jax.jit(f).lower(x).as_text(dialect=\"hlo\")`) or on a TPU for TPU numbers");
      sink.Add(std::move(d));
    }
    for (const std::string& target : order) {
      const auto& hits = by_target[target];
      const CustomCallInfo info = LookupCustomCall(target);
      const bool gpu = info.platform == CallPlatform::kGpuOnly;
      Diagnostic d = NewFinding();
      d.severity = Severity::kError;
      d.message = "custom call `" + target + "` exists only on " + (gpu ? "GPU" : "CPU") +
                  ": this program was lowered for " + (gpu ? "a GPU" : "the CPU") +
                  " and cannot run on " + ctx.target.name;
      d.location = LocationOf(hits.front().first, *hits.front().second);
      if (!info.note.empty()) d.notes.push_back(target + ": " + info.note);
      if (hits.size() > 1) d.notes.push_back(std::to_string(hits.size()) + " calls to this target");
      d.notes.push_back(
          "the lowering is chosen per platform: on TPU the same JAX function lowers to TPU kernels "
          "(eigh -> Eigh, qr -> Qr, lu/solve/inv -> LuDecomposition) or plain HLO");
      d.fix =
          Fix{"lower the program for TPU: run `jax.jit(f).lower(...)` on a TPU device, or "
              "`jax.export(jax.jit(f), platforms=['tpu'])`; ops with no TPU lowering at all (eig, "
              "Schur, "
              "tridiagonal solves) must be replaced or run on the host",
              FixApplicability::kDisplayOnly};
      sink.Add(std::move(d));
    }
  }

  static std::optional<std::string> CustomCallTarget(const Node& n) {
    if (n.op != Op::kCustomCall) return std::nullopt;
    for (const char* key : {"custom_call_target", "call_target_name"}) {
      if (auto t = n.StringAttr(key)) return *t;
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Check> MakeXla001PlatformCustomCall() {
  return std::make_unique<Xla001PlatformCustomCall>();
}

}  // namespace tpudoctor
