// XLA002 host-transfer: an XLA program talks to the host mid-computation — a Python callback
// (`jax.pure_callback`, `io_callback`, `jax.debug.print`), a host send/recv, infeed/outfeed.
#include "src/checks/factories.h"
#include "tpudoctor/knowledge/hlo_ops.h"

namespace tpudoctor {
namespace {

class Xla002HostTransfer final : public Check {
 public:
  std::string_view code() const override { return "XLA002"; }
  std::string_view name() const override { return "host-transfer"; }
  std::string_view summary() const override {
    return "the program calls back into host Python or transfers to/from the host in the middle of "
           "a step";
  }

  void Run(const CheckContext& ctx, DiagnosticSink& sink) const override {
    ForEachNodeWithPath(
        ctx.graph, ctx.graph.name(), [&](const Graph&, const std::string& path, const Node& n) {
          std::string what = Kind(n);
          if (what.empty()) return;
          Diagnostic d = NewFinding();
          d.severity = Severity::kWarning;
          d.message =
              what + " makes every step stop the device, copy data to the host and wait for it";
          d.location = LocationOf(path, n);
          d.notes.push_back(
              "on TPU, JAX lowers callbacks to host send/recv; they work but serialize the step, "
              "and "
              "`jax.export` refuses to serialize them");
          d.fix =
              Fix{"compute the value on the device (jnp instead of NumPy), move logging out of the "
                  "step "
                  "(return the values and print them outside jit), or keep the callback off the "
                  "hot loop",
                  FixApplicability::kDisplayOnly};
          sink.Add(std::move(d));
        });
  }

 private:
  static std::string Kind(const Node& n) {
    if (n.op == Op::kCustomCall) {
      for (const char* key : {"custom_call_target", "call_target_name"}) {
        if (auto t = n.StringAttr(key);
            t && LookupCustomCall(*t).platform == CallPlatform::kHostCallback) {
          return "host callback `" + *t + "`";
        }
      }
      return {};
    }
    if ((n.op == Op::kSend || n.op == Op::kRecv) &&
        n.StringAttr("is_host_transfer") == std::string("true")) {
      return "host " + n.op_type;
    }
    if (n.op == Op::kInfeed || n.op == Op::kOutfeed) return "`" + n.op_type + "`";
    return {};
  }
};

}  // namespace

std::unique_ptr<Check> MakeXla002HostTransfer() { return std::make_unique<Xla002HostTransfer>(); }

}  // namespace tpudoctor
