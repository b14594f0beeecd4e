#include <algorithm>
#include <optional>

#include "src/script/rules/factories.h"
#include "src/script/rules/value_flow.h"

namespace tpudoctor::script {
namespace {

// Dtypes the TPU does not compute natively, as the frameworks spell them, and what to use.
struct SlowDtype {
  std::string_view wide;    // the float64 or float16 spelling's last name
  std::string_view narrow;  // what replaces it
};
constexpr SlowDtype kSlow[] = {
    {"float64", "float32"}, {"double", "float32"}, {"float16", "bfloat16"}, {"half", "bfloat16"}};

const SlowDtype* SlowByName(std::string_view name) {
  for (const SlowDtype& s : kSlow) {
    if (name == s.wide) return &s;
  }
  return nullptr;
}

bool IsFrameworkName(std::string_view name) {
  for (std::string_view root : {"tensorflow.", "torch.", "jax.", "keras.", "flax."}) {
    if (name.starts_with(root)) return true;
  }
  return false;
}

// A dtype expression that names float64/float16 through a framework (`tf.float64`,
// `torch.double`, `jnp.float16`) or as a string ("float64"); null when it does not.
const SlowDtype* SlowDtypeOf(const ScriptModel& model, Node expr) {
  if (auto s = StringLiteral(expr)) return SlowByName(*s);
  const std::string name = model.Canonical(expr);
  if (name.empty() || (!IsFrameworkName(name) && !name.starts_with("numpy."))) return nullptr;
  return SlowByName(std::string_view(name).substr(name.rfind('.') + 1));
}

// The expression's text with its dtype name narrowed: `torch.float64` → `torch.float32`,
// `"float16"` → `"bfloat16"`.
std::string Narrowed(Node expr, const SlowDtype& slow) {
  std::string text(expr.text());
  const std::size_t at = text.rfind(slow.wide);
  if (at == std::string::npos) return text;
  return text.replace(at, slow.wide.size(), slow.narrow);
}

// Whether the tensor a call makes reaches a model (value_flow.h). A cast to a dtype the TPU
// computes natively (`tf.cast(x, tf.int32)`) ends the wide value there.
bool ReachesModel(const ScriptModel& model, const Call& made) {
  Flow flow;
  flow.ends_at = [&model](const Call& consumer) {
    if (consumer.name != "tensorflow.cast") return false;
    Node to = consumer.Keyword("dtype");
    if (!to && consumer.args.size() >= 2) to = consumer.args[1];
    return to && SlowDtypeOf(model, to) == nullptr;
  };
  return ReachesModel(model, made.node, flow);
}

// A layer or model constructor of a framework: its dtype= is the dtype the layer computes in
// (`nn.Linear(..., dtype=)`, `flax.linen.Dense(dtype=)`, `keras.layers.Dense(dtype=)`), as is an
// autocast region's. Keras's Input is not: it types the model's input, which the first layer casts
// to its own dtype.
bool BuildsModule(const std::string& name) {
  for (std::string_view not_module : {"torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.",
                                      "keras.layers.Input", "keras.Input"}) {
    if (name.starts_with(not_module)) return false;
  }
  for (std::string_view root :
       {"torch.nn.", "flax.linen.", "flax.nnx.", "keras.layers.", "keras.Sequential", "keras.Model",
        "keras.models.", "keras.applications.",
        // Autocast regions compute their matmuls and convolutions in the dtype they are given.
        "torch.autocast", "torch.amp.autocast"}) {
    if (name.starts_with(root)) return true;
  }
  return false;
}

// Whether a class the script defines is a torch module (`class Net(nn.Module)`).
bool IsLocalModuleClass(const ScriptModel& model, std::string_view name) {
  for (const Function& f : model.functions()) {
    if (!f.class_node || f.class_node.field("name").text() != name) continue;
    for (const std::string& base : f.class_bases) {
      if (base.starts_with("torch.nn.") || base.starts_with("transformers.")) return true;
    }
  }
  return false;
}

// Whether an expression is a torch module: made by a torch.nn constructor, a `from_pretrained`
// of transformers, or a class of the script that subclasses nn.Module — through the names it is
// bound to and the calls that return the module itself (`.to(device)`, `.cuda()`, `.train()`).
bool IsModule(const ScriptModel& model, Node expr, int depth = 0) {
  const Node value = model.Resolve(expr);
  const Call* made = value.is("call") ? model.CallAt(value) : nullptr;
  if (made == nullptr || depth > 4) return false;
  if (made->name.starts_with("torch.nn.") && BuildsModule(made->name)) return true;
  if (made->name.starts_with("transformers.") && made->method == "from_pretrained") return true;
  if (made->name.empty() && !made->receiver && IsLocalModuleClass(model, made->callee.text())) {
    return true;
  }
  const std::string& m = made->method;
  const bool returns_self = m == "to" || m == "cuda" || m == "cpu" || m == "float" || m == "half" ||
                            m == "double" || m == "bfloat16" || m == "train" || m == "eval" ||
                            m == "type" || m == "requires_grad_";
  return made->name.empty() && made->receiver && returns_self &&
         IsModule(model, made->receiver, depth + 1);
}

// Whether a `.to()`, `.type()`, `.half()` or `.double()` converts a module rather than a tensor:
// a statement of its own (a tensor's conversion returns a new tensor, so only a module's is done
// in place), or a receiver that is a module (IsModule).
bool ConvertsModule(const ScriptModel& model, const Call& call) {
  return call.node.parent().is("expression_statement") ||
         (call.receiver && IsModule(model, call.receiver));
}

// Whether a loaded model is only read for its weights (`model.state_dict()` handed to a
// converter, `named_parameters()`), never run: a script converting a PyTorch checkpoint for JAX
// loads it in float16 on the host, and the TPU computes in whatever dtype the converted
// parameters are given. A model never used again counts too.
bool OnlyItsWeightsRead(const ScriptModel& model, const Call& load) {
  const Node assignment = load.node.parent();
  if (!assignment.is("assignment") || !assignment.field("left").is("identifier")) return false;
  return EveryUse(model, assignment, [&](Node use) {
    const Node attribute = use.parent();
    if (!attribute.is("attribute") || attribute.field("object") != use) return false;
    const std::string_view name = attribute.field("attribute").text();
    return name == "state_dict" || name == "named_parameters" || name == "parameters" ||
           name == "config" || name == "save_pretrained";
  });
}

// Whether the script runs a model loaded in this dtype on an XLA device: a PyTorch dtype in a
// torch_xla script, a JAX one in a JAX script. A PyTorch model loaded in float16 elsewhere (a
// GPU captioner preparing data, a reference run beside a JAX port) is not the TPU's work.
bool LoadsForXla(const ScriptModel& model, Node dtype) {
  const std::string name = model.Canonical(dtype);
  if (name.starts_with("jax.")) return true;
  return model.Imports("torch_xla");
}

// What the dtype of a call decides:
// - kModel: what the model computes in — a global switch, a layer's or model's dtype=, a module
//   converted (`model.half()`, `net.to(torch.float64)`): a warning;
// - kTensor: one tensor's element type — made (`tf.constant(..., dtype=)`, `jnp.stack(...,
//   dtype=)`), cast (`tf.cast`) or converted (`x.to(torch.float16)`). The model computes in its
//   layers' dtype: Keras layers cast floating inputs to their compute dtype, Flax layers and
//   jax.numpy promote a float16 input against float32 weights to float32, and PyTorch refuses an
//   input whose dtype differs from the weights'. Such a tensor sets the computation's type only
//   where the weights are made the same way, which the script does not show at the call: a note,
//   and only when the tensor reaches a model (ReachesModel);
// - kNone: a tensor that reaches no model (a guide printing dtypes, a host computation).
enum class Decides { kNone, kTensor, kModel };

// An autocast region for CUDA (`torch.autocast("cuda", dtype=torch.float16)`): a TPU run does not
// enter it.
bool CudaAutocast(const Call& call) {
  if (call.name != "torch.autocast" && call.name != "torch.amp.autocast") return false;
  Node device = call.Keyword("device_type");
  if (!device && !call.args.empty()) device = call.args[0];
  return device && StringLiteral(device) == "cuda";
}

Decides WhatDtypeDecides(const ScriptModel& model, const Call& call) {
  if (CudaAutocast(call)) return Decides::kNone;
  const bool converts = call.name.empty() && (call.method == "to" || call.method == "type" ||
                                              call.method == "half" || call.method == "double");
  if (converts ? ConvertsModule(model, call) : BuildsModule(call.name)) return Decides::kModel;
  return ReachesModel(model, call) ? Decides::kTensor : Decides::kNone;
}

std::string WhatItCosts(const SlowDtype& s) {
  return s.narrow == "float32"
             ? "TPUs have no float64 units, so XLA emulates it with pairs of float32, many "
               "times slower, and the MXU does not take it"
             : "TPUs compute float16 through float32 at no gain, as bfloat16 is their 16-bit "
               "type (same range as float32, no loss scaling needed)";
}

bool NamesSlowDtype(std::string_view text) {
  for (std::string_view d : {"float16", "float64", "double", "half", "fp16"}) {
    if (text.find(d) != std::string_view::npos) return true;
  }
  return false;
}

// Whether a branch condition names a slow dtype, itself or through the names it reads, one
// assignment back (`needs_upcasting = self.vae.dtype == torch.float16 and ...; if
// needs_upcasting: self.vae.to(dtype=torch.float16)`: restoring the dtype the model had).
bool ConditionNamesSlowDtype(const ScriptModel& model, Node condition) {
  if (!condition) return false;
  if (NamesSlowDtype(condition.text())) return true;
  bool named = false;
  Walk(condition, [&](Node n, int) {
    if (named) return false;
    if (n.is("identifier")) {
      const Node value = model.ValueAt(n);
      named = value && NamesSlowDtype(value.text());
    }
    return true;
  });
  return named;
}

// Whether a try statement's body looks for a TPU (makes a TPUClusterResolver or a TPUStrategy):
// its except clauses are the script's path when there is none (`except ValueError:` — the idiom
// of the Cloud TPU notebooks, which then pick a GPU strategy).
bool DetectsTpu(const ScriptModel& model, Node try_statement) {
  const Node body = try_statement.field("body");
  if (!body) return false;
  for (const Call& call : model.CallsIn(body)) {
    if (call.name.find("TPUClusterResolver") != std::string::npos ||
        call.name.find("TPUStrategy") != std::string::npos) {
      return true;
    }
  }
  return false;
}

// How sure the code is to take the dtype: a warning when it always does; a note when the dtype is
// chosen in a branch the script takes at run time (`if FLAGS.mixed_precision:` — a flag, a
// platform check: whether it runs on a TPU is a guess); nothing when the branch is the code doing
// what it was asked (its condition names the dtype: `if dtype == tf.float16:`, or reads a name
// assigned from such a test), when the same if-chain has a bfloat16 branch (a multi-platform
// script whose TPU branch is already bfloat16), or when it is the except clause of a try that
// looks for a TPU (it runs when there is none).
std::optional<Severity> SeverityAt(const ScriptModel& model, Node at) {
  for (Node n = at.parent(); n; n = n.parent()) {
    if (n.is("function_definition") || n.is("lambda") || n.is("class_definition")) break;
    if (n.is("except_clause") && DetectsTpu(model, n.parent())) return std::nullopt;
    const bool clause = n.is("if_statement") || n.is("elif_clause") ||
                        n.is("conditional_expression") || n.is("else_clause");
    if (!clause) continue;
    if (ConditionNamesSlowDtype(model, n.field("condition"))) return std::nullopt;
    Node chain = n;
    while (chain && !chain.is("if_statement") && !chain.is("conditional_expression")) {
      chain = chain.parent();
    }
    if (chain && chain.text().find("bfloat16") != std::string_view::npos) return std::nullopt;
    if (chain && ConditionNamesSlowDtype(model, chain.field("condition"))) return std::nullopt;
    return Severity::kNote;
  }
  return Severity::kWarning;
}

// " — only in a branch the script chooses at run time" for a note.
std::string BranchNote(Severity severity) {
  return severity == Severity::kNote
             ? " (in a branch the script takes at run time: only if it runs on the TPU)"
             : "";
}

// float64 or float16 given to the model's framework: dtype= of a TensorFlow/PyTorch/JAX/Keras
// call, `.double()`/`.half()`/`.to(torch.float64)` on tensors and modules, and the global
// switches (torch.set_default_dtype, keras set_floatx / mixed_float16, jax_enable_x64).
// NumPy's own float64 arrays on the host are not flagged: only what the framework computes in; a
// tensor made, cast or converted to such a dtype is a note, and only when it reaches a model
// (WhatDtypeDecides).
class Tpu002 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("TPU002", "slow-dtype",
                   "float64 or float16 given to the framework: TPUs compute neither natively")
  void Run(const ScriptContext& c) const override {
    const bool torch = c.model.Imports("torch");
    for (const Call& call : c.model.calls()) {
      if (CheckSwitch(c, call)) continue;
      if (torch && (call.method == "double" || call.method == "half") && call.receiver &&
          call.args.empty() && call.kwargs.empty()) {
        const SlowDtype& s = *SlowByName(call.method);
        const std::string to = s.narrow == "float32" ? "float" : "bfloat16";
        Report(c, call.callee.field("attribute"), s, "`." + call.method + "()`", to,
               WhatDtypeDecides(c.model, call));
        continue;
      }
      // A pretrained model loaded in a dtype (Hugging Face's transformers and diffusers take
      // `torch_dtype=` or `dtype=`; their Flax classes `dtype=`): its weights, and so what it
      // computes in, are that dtype.
      if (call.method == "from_pretrained" && call.receiver) {
        Node dtype = call.Keyword("torch_dtype");
        if (!dtype) dtype = call.Keyword("dtype");
        const SlowDtype* s = dtype ? SlowDtypeOf(c.model, dtype) : nullptr;
        if (s != nullptr && LoadsForXla(c.model, dtype) && !OnlyItsWeightsRead(c.model, call)) {
          Report(c, dtype, *s, "`" + std::string(dtype.text()) + "`", Narrowed(dtype, *s));
        }
        continue;
      }
      const bool framework =
          IsFrameworkName(call.name) || (torch && call.receiver && call.name.empty() &&
                                         (call.method == "to" || call.method == "type"));
      if (!framework) continue;
      Node dtype = call.Keyword("dtype");
      if (!dtype && (call.method == "to" || call.method == "type") && !call.args.empty()) {
        dtype = call.args[0];
      }
      if (!dtype && call.name == "tensorflow.cast" && call.args.size() >= 2) dtype = call.args[1];
      if (!dtype) continue;
      const SlowDtype* s = SlowDtypeOf(c.model, dtype);
      if (s == nullptr) continue;
      Report(c, dtype, *s, "`" + std::string(dtype.text()) + "`", Narrowed(dtype, *s),
             WhatDtypeDecides(c.model, call));
    }
  }

 private:
  static void Report(const ScriptContext& c, Node at, const SlowDtype& s, const std::string& what,
                     std::string replacement, Decides decides = Decides::kModel) {
    if (decides == Decides::kNone) return;
    const std::optional<Severity> at_branch = SeverityAt(c.model, at);
    if (!at_branch) return;
    const std::string wide(s.wide == "double" ? "float64" : s.wide == "half" ? "float16" : s.wide);
    Severity severity = *at_branch;
    std::string message;
    if (decides == Decides::kModel) {
      message = what + " makes the model compute in " + wide + "; " + WhatItCosts(s);
    } else {
      severity = Severity::kNote;
      message = what + " makes a " + wide +
                " tensor that reaches the model; unless the weights are " + wide +
                " too, the layers compute in their own dtype (Keras casts inputs to it, Flax "
                "and jax.numpy promote to the weights' type) and this costs a conversion. Where "
                "they are, " +
                WhatItCosts(s);
    }
    Diagnostic d = c.Finding("TPU002", severity, at, message + BranchNote(*at_branch));
    d.fix = Fix{"use " + std::string(s.narrow), FixApplicability::kUnsafe};
    // A name the script aliased (`float64 as f64`) cannot be narrowed by rewriting it.
    if (replacement != at.text()) {
      d.fix->edits.push_back(Replace(at, std::move(replacement)));
    } else {
      d.fix->applicability = FixApplicability::kDisplayOnly;
    }
    c.Add(std::move(d));
  }

  // The global dtype switches; true when the call is one (flagged or not).
  static bool CheckSwitch(const ScriptContext& c, const Call& call) {
    Node value;
    const SlowDtype* slow = nullptr;
    if (call.name == "torch.set_default_dtype" || call.name == "keras.backend.set_floatx" ||
        call.name == "keras.config.set_floatx") {
      if (call.args.empty()) return true;
      value = call.args[0];
      slow = SlowDtypeOf(c.model, value);
      if (slow != nullptr) {
        Report(c, value, *slow,
               "`" + std::string(call.callee.text()) + "(" + std::string(value.text()) + ")`",
               StringLiteral(value) ? "\"" + std::string(slow->narrow) + "\""
                                    : Narrowed(value, *slow));
      }
      return true;
    }
    if (call.name == "keras.mixed_precision.set_global_policy" ||
        call.name == "keras.mixed_precision.Policy" ||
        call.name == "keras.mixed_precision.experimental.Policy" ||
        call.name == "keras.config.set_dtype_policy") {
      if (call.args.empty() || StringLiteral(call.args[0]) != "mixed_float16") return true;
      const std::optional<Severity> severity = SeverityAt(c.model, call.args[0]);
      if (!severity) return true;
      Diagnostic d = c.Finding("TPU002", *severity, call.args[0],
                               "the `mixed_float16` policy computes in float16, which TPUs run "
                               "through float32 at no gain: `mixed_bfloat16` is the TPU's "
                               "policy (no loss scaling needed)" +
                                   BranchNote(*severity));
      d.fix = Fix{"use the `mixed_bfloat16` policy",
                  FixApplicability::kUnsafe,
                  {Replace(call.args[0], "\"mixed_bfloat16\"")}};
      c.Add(std::move(d));
      return true;
    }
    if (call.method == "update" && call.args.size() == 2 &&
        (call.name == "jax.config.update" || call.name.ends_with("config.update")) &&
        StringLiteral(call.args[0]) == "jax_enable_x64" && BoolLiteral(call.args[1]) == true) {
      const std::optional<Severity> severity = SeverityAt(c.model, call.node);
      if (!severity) return true;
      Diagnostic d = c.Finding("TPU002", *severity, call.node,
                               "`jax_enable_x64` makes JAX's default float and int types 64-bit: "
                               "TPUs have no float64 units (XLA emulates them, many times slower) "
                               "and 64-bit integers take two registers" +
                                   BranchNote(*severity));
      d.fix = Fix{"leave x64 off; ask for float64 only where it is needed on the host",
                  FixApplicability::kUnsafe,
                  {Replace(call.args[1], "False")}};
      c.Add(std::move(d));
      return true;
    }
    return false;
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakeTpu002SlowDtype() { return std::make_unique<Tpu002>(); }

}  // namespace tpudoctor::script
