#include <algorithm>

#include "src/script/rules/factories.h"
#include "src/script/rules/torch_xla.h"

namespace tpudoctor::script {
namespace {

// JAX functions whose output size depends on the values, unless `size=` fixes it (jnp.where
// with one argument is jnp.nonzero). Source: jax.numpy's docs for each ("... the size argument
// must be specified ... to be used under jit").
bool IsJaxSizedOp(const Call& call) {
  const std::string& n = call.name;
  if (n == "jax.numpy.where") return call.args.size() == 1 && !call.Keyword("x");
  return n == "jax.numpy.nonzero" || n == "jax.numpy.argwhere" || n == "jax.numpy.flatnonzero" ||
         n == "jax.numpy.unique" || n == "jax.numpy.unique_values" ||
         n == "jax.numpy.unique_counts" || n == "jax.numpy.unique_inverse" ||
         n == "jax.numpy.unique_all" || n == "jax.numpy.union1d" || n == "jax.numpy.intersect1d" ||
         n == "jax.numpy.setdiff1d" || n == "jax.numpy.setxor1d" || n == "jax.numpy.extract" ||
         n == "jax.numpy.compress";
}

bool IsTorchDynamicOp(const Call& call) {
  const std::string& n = call.name;
  if (n == "torch.nonzero" || n == "torch.unique" || n == "torch.masked_select" ||
      n == "torch.argwhere" || n == "torch.unique_consecutive") {
    return true;
  }
  if (!call.name.empty() || !call.receiver) return false;
  const std::string& m = call.method;
  return m == "nonzero" || m == "masked_select" || m == "unique" || m == "argwhere" ||
         m == "unique_consecutive";
}

// Whether a function is (inside) a method of a torch.nn.Module subclass: code that runs on the
// XLA device. Data preparation (a Dataset's __getitem__, pandas) runs on the host and may size
// things as it likes.
bool InTorchModule(const ScriptModel& model, int function) {
  return model.InFunctionWhere(function, [](const Function& f) {
    return std::find(f.class_bases.begin(), f.class_bases.end(), "torch.nn.Module") !=
           f.class_bases.end();
  });
}

// Whether an operand of a comparison is a static size: it reads a `.shape` or `.ndim`
// (`x.shape[0]`), or it is `len(...)`.
bool IsStaticSize(Node operand) {
  const Node callee = operand.is("call") ? operand.field("function") : Node();
  if (callee.is("identifier") && callee.text() == "len") return true;
  bool reads = false;
  Walk(operand, [&](Node n, int) {
    if (n.is("attribute")) {
      const std::string_view name = n.field("attribute").text();
      reads = reads || name == "shape" || name == "ndim";
    }
    return !reads;
  });
  return reads;
}

// Whether an index is a boolean mask made by comparing tensors (`x > 0`, `labels != pad_id`, `~m`
// or `a & b` of such): indexing with it keeps the elements where it is true, as many as the
// values say. A comparison of literals or of static sizes (`x.shape[0] > 1`, `len(x)`) is a
// Python bool, not a mask.
bool IsComparisonMask(Node index) {
  index = Unparenthesize(index);
  if (index.is("unary_operator")) return IsComparisonMask(index.field("argument"));
  if (index.is("binary_operator")) {
    const std::string_view op = index.field("operator").text();
    return (op == "&" || op == "|") &&
           (IsComparisonMask(index.field("left")) || IsComparisonMask(index.field("right")));
  }
  if (!index.is("comparison_operator")) return false;
  bool tensor = false;
  for (std::uint32_t i = 0; i < index.named_count(); ++i) {
    const Node operand = Unparenthesize(index.named(i));
    if (IsStaticSize(operand)) return false;
    tensor = tensor || operand.is("identifier") || operand.is("subscript") ||
             operand.is("attribute") || operand.is("call");
  }
  return tensor;
}

// Whether a subscript is read (`y = x[mask]`), not assigned to (`x[mask] = 0`, which keeps the
// shape: torch lowers it to a select).
bool IsRead(Node subscript) {
  const Node parent = subscript.parent();
  return !((parent.is("assignment") || parent.is("augmented_assignment")) &&
           parent.field("left") == subscript);
}

// Ops whose output shape depends on tensor values, in code XLA compiles: under jax.jit they
// raise (a ConcretizationTypeError asking for `size=`); in a torch_xla script they make the
// graph's shapes dynamic, which torch_xla runs with bounded padding or a recompilation per size
// (only in an nn.Module's methods: code that runs on the device).
class Shp001 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("SHP001", "data-dependent-shape",
                   "an op's output shape depends on tensor values, which XLA's static "
                   "compilation cannot take")
  void Run(const ScriptContext& c) const override {
    const bool torch_xla = c.model.Imports("torch_xla");
    const std::vector<Node> on_device = torch_xla ? DeviceRegions(c.model) : std::vector<Node>();
    auto runs_on_device = [&](Node at) {
      return std::any_of(on_device.begin(), on_device.end(),
                         [&](Node region) { return Within(at, region); });
    };
    ReportBooleanMasks(c, on_device);
    for (const Call& call : c.model.calls()) {
      if (IsJaxSizedOp(call) && !call.Keyword("size") && !call.splat &&
          InJaxTrace(c.model, call.function)) {
        Diagnostic d = c.Finding(code(), Severity::kError, call.node,
                                 "`" + std::string(call.callee.text()) +
                                     "` without `size=` inside a jitted function: its output "
                                     "size depends on the values, and jax.jit refuses it "
                                     "(ConcretizationTypeError)");
        d.fix =
            Fix{"pass `size=` (the largest count possible) and `fill_value=`; or use a mask "
                "of fixed shape (`jnp.where(cond, x, 0)`)",
                FixApplicability::kDisplayOnly};
        c.Add(std::move(d));
      } else if (IsTorchDynamicOp(call) && runs_on_device(call.node)) {
        Diagnostic d = c.Finding(code(), Severity::kWarning, call.node,
                                 "`" + std::string(call.callee.text()) +
                                     "` has an output size that depends on the values: on "
                                     "torch_xla the graph becomes dynamic, padded to a bound "
                                     "or compiled again for each size");
        d.fix =
            Fix{"keep shapes fixed: a mask multiplied in (`x * mask`), `torch.where(cond, x, "
                "0)`, or a fixed-size top-k",
                FixApplicability::kDisplayOnly};
        c.Add(std::move(d));
      }
    }
  }

 private:
  // The code torch_xla runs on the device, as disjoint regions: the methods of nn.Module
  // subclasses (the outermost function of each) and the training step loops, none inside another.
  static std::vector<Node> DeviceRegions(const ScriptModel& model) {
    std::vector<Node> regions = StepLoops(model);
    for (std::size_t i = 0; i < model.functions().size(); ++i) {
      const Function& f = model.functions()[i];
      if (InTorchModule(model, static_cast<int>(i)) &&
          (f.parent < 0 || !InTorchModule(model, f.parent))) {
        regions.push_back(f.node);
      }
    }
    std::erase_if(regions, [&](Node r) {
      return std::any_of(regions.begin(), regions.end(),
                         [&](Node o) { return o != r && Within(r, o); });
    });
    return regions;
  }

  void ReportBooleanMasks(const ScriptContext& c, const std::vector<Node>& regions) const {
    for (Node region : regions) {
      Walk(region, [&](Node n, int) {
        if (!n.is("subscript") || !IsRead(n)) return true;
        const Node index = n.field("subscript");
        if (n.named_count() != 2 || !IsComparisonMask(index)) return true;
        Diagnostic d = c.Finding(code(), Severity::kWarning, n,
                                 "`" + std::string(n.text()) +
                                     "` keeps the elements where a comparison holds: its size "
                                     "depends on the values, so on torch_xla the graph becomes "
                                     "dynamic, padded to a bound or compiled again for each size");
        d.fix =
            Fix{"keep shapes fixed: multiply by the mask, `torch.where(mask, x, 0)`, or "
                "reduce with the mask as a weight",
                FixApplicability::kDisplayOnly};
        c.Add(std::move(d));
        return true;
      });
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakeShp001DataDependentShape() { return std::make_unique<Shp001>(); }

}  // namespace tpudoctor::script
