#include <algorithm>

#include "src/script/rules/factories.h"
#include "src/script/rules/torch_xla.h"

namespace tpudoctor::script {
namespace {

// `.item()`, `.cpu()` and `.tolist()` on every step of a torch_xla training loop. torch_xla
// records the step lazily and runs it at the step's end; reading a value on the host makes it
// compile and run the graph so far, wait for it, and copy the result back, every step. Under an
// `if` (logging every N steps) it is left alone: that is the documented way to log.
// Whether a call runs on every iteration of one of the step loops: some loop around it (up to its
// function) is a step loop, with no `if`, `try` or conditional expression in between.
bool EveryStep(const Call& call, const std::vector<Node>& loops) {
  for (Node n = call.node.parent(); n; n = n.parent()) {
    if (n.is("function_definition") || n.is("lambda") || n.is("class_definition")) return false;
    if (n.is("if_statement") || n.is("elif_clause") || n.is("else_clause") ||
        n.is("try_statement") || n.is("conditional_expression") || n.is("boolean_operator")) {
      return false;
    }
    if (std::any_of(loops.begin(), loops.end(), [&](Node l) { return l == n; })) return true;
  }
  return false;
}

// The names a step loop calls `.backward()` on (`loss.backward()`): tensors of the step.
std::vector<std::string_view> StepTensors(const ScriptModel& model, Node loop) {
  std::vector<std::string_view> out;
  for (const Call& c : model.CallsIn(loop)) {
    if (c.method == "backward" && c.receiver.is("identifier")) out.push_back(c.receiver.text());
  }
  return out;
}

// Whether an expression reads one of `names` as a value (not `x.shape`, not `x is None`).
Node ReadsTensor(Node expr, const std::vector<std::string_view>& names) {
  Node found;
  Walk(expr, [&](Node n, int) {
    if (found) return false;
    if (n.is("attribute")) return false;  // loss.shape, loss.dtype: host metadata
    if (n.is("identifier") && std::find(names.begin(), names.end(), n.text()) != names.end()) {
      found = n;
    }
    return true;
  });
  return found;
}

// Whether `expr` is a tensor made on the host right there: a torch factory call without `device=`
// (`torch.randint(0, n, (1,)).item()` draws a Python int from a CPU tensor: no device work and
// no wait), directly or through the name it was assigned to. Factories allocate on the CPU unless
// told otherwise (`device=`, or `torch.set_default_device`, which the caller checks once). Only
// factories that take sizes and numbers: `torch.tensor(loss)` would copy a device tensor to the
// host in the factory itself.
bool HostTensor(const ScriptModel& model, Node expr) {
  static constexpr std::string_view kFactories[] = {
      "torch.arange",  "torch.empty",    "torch.eye",      "torch.from_numpy",
      "torch.full",    "torch.linspace", "torch.ones",     "torch.rand",
      "torch.randint", "torch.randn",    "torch.randperm", "torch.zeros"};
  const Call* call = model.CallAt(model.Resolve(expr));
  return call != nullptr && !call->splat && !call->Keyword("device") &&
         std::find(std::begin(kFactories), std::end(kFactories), call->name) !=
             std::end(kFactories);
}

class Py001 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PY001", "host-sync-in-step",
                   "a torch_xla training step reads a tensor on the host (.item(), .cpu(), "
                   ".tolist()) on every step")
  void Run(const ScriptContext& c) const override {
    if (!c.model.Imports("torch_xla")) return;
    const std::vector<Node> loops = StepLoops(c.model);
    const bool cpu_default =
        std::none_of(c.model.calls().begin(), c.model.calls().end(),
                     [](const Call& call) { return call.name == "torch.set_default_device"; });
    for (const Call& call : c.model.calls()) {
      if (!call.receiver || !call.name.empty() || !call.args.empty()) continue;
      if (call.method != "item" && call.method != "cpu" && call.method != "tolist") continue;
      if (!EveryStep(call, loops) || (cpu_default && HostTensor(c.model, call.receiver))) continue;
      Report(c, call.node, "`" + std::string(call.callee.text()) + "()`");
    }
    // `if loss < best:` or `print(loss)` on the step's loss: Python needs its value.
    for (Node loop : loops) {
      const std::vector<std::string_view> tensors = StepTensors(c.model, loop);
      if (tensors.empty()) continue;
      Walk(loop.field("body"), [&](Node n, int) {
        if (n.is("function_definition") || n.is("lambda") || n.is("class_definition")) {
          return false;
        }
        if (n.is("if_statement") || n.is("while_statement")) {
          if (Node t = ReadsTensor(n.field("condition"), tensors)) {
            Report(c, n,
                   "`" + std::string(n.is("if_statement") ? "if" : "while") + "` on `" +
                       std::string(t.text()) + "`");
          }
          return false;  // what is under the branch runs only sometimes
        }
        if (n.is("call")) {
          const Call* call = c.model.CallAt(n);
          if (call != nullptr && call->method == "print" && !call->receiver) {
            for (Node a : call->args) {
              if (a.is("identifier") &&
                  std::find(tensors.begin(), tensors.end(), a.text()) != tensors.end()) {
                Report(c, n, "`print(" + std::string(a.text()) + ")`");
              }
            }
          }
        }
        return !n.is("try_statement") && !n.is("conditional_expression");
      });
    }
  }

 private:
  void Report(const ScriptContext& c, Node at, const std::string& what) const {
    Diagnostic d = c.Finding(code(), Severity::kWarning, at,
                             what +
                                 " on every training step: torch_xla must run the step so "
                                 "far and copy the value to the host before Python goes on, "
                                 "so the host and the TPU take turns");
    d.fix =
        Fix{"accumulate on the device and read it every N steps (`if step % N == 0:`), or "
            "log with `xm.add_step_closure`",
            FixApplicability::kDisplayOnly};
    c.Add(std::move(d));
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePy001HostSyncInStep() { return std::make_unique<Py001>(); }

}  // namespace tpudoctor::script
