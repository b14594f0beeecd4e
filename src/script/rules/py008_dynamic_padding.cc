#include "src/script/rules/factories.h"
#include "src/script/rules/value_flow.h"

namespace tpudoctor::script {
namespace {

// Tokenizer calls and collators that pad each batch to its own longest sequence: every new length
// is a new input shape, and XLA (torch_xla, jax.jit) compiles the step again for each one. Hugging
// Face's TPU guidance is to pad to a fixed length (`padding="max_length"`) or to a multiple
// (`pad_to_multiple_of`), which bounds the shapes.
bool PadsToLongest(Node padding) {
  if (BoolLiteral(padding) == true) return true;
  auto s = StringLiteral(padding);
  return s && *s == "longest";
}

// Texts the script spells out (a string literal, or a list or tuple of them, directly or through
// the name they were assigned to): every run pads them to the same length, so there is one shape
// to compile, not one per batch (a demo's two fixed prompts).
bool ConstantTexts(const ScriptModel& m, Node texts) {
  const Node v = texts ? m.Resolve(texts) : Node();
  if (!v) return false;
  if (StringLiteral(v)) return true;
  if (!v.is("list") && !v.is("tuple")) return false;
  for (std::uint32_t i = 0; i < v.named_count(); ++i) {
    if (!StringLiteral(v.named(i))) return false;
  }
  return v.named_count() > 0;
}

bool IsCollator(const std::string& name) {
  return name == "transformers.DataCollatorWithPadding" ||
         name == "transformers.DataCollatorForSeq2Seq" ||
         name == "transformers.DataCollatorForTokenClassification" ||
         name == "transformers.DataCollatorForLanguageModeling";
}

// The expression a value ends up in, up through its members (`.input_ids`, `.shape[-1]`,
// `["input_ids"]`, `[:, :n]`) and the methods called on it (`.to(device)`, `.size(-1)`).
Node ThroughMembers(Node expr) {
  for (Node p = expr.parent();; p = p.parent()) {
    if (p.is("attribute") && p.field("object") == expr) {
      if (p.parent().is("call") && p.parent().field("function") == p) p = p.parent();
    } else if (!(p.is("subscript") && p.field("value") == expr)) {
      return expr;
    }
    expr = p;
  }
}

// What a script does with the ids a tokenizer padded, over all their uses.
struct IdsUses {
  bool given = false;        // to a model, a function, anything but what follows
  bool repadded = false;     // padded again: the first argument of a pad call
  bool length_read = false;  // their length (`.shape`, `.size()`, `len()`) used as a number
};

// The pad functions whose first argument is the array padded.
bool IsPad(const std::string& name) {
  return name == "jax.numpy.pad" || name == "numpy.pad" || name == "torch.nn.functional.pad" ||
         name == "tensorflow.pad";
}

// NumPy's, JAX's and PyTorch's array functions (their results are arrays made from their
// arguments), but not their pad functions.
bool IsArrayFunction(const std::string& name) {
  return (name.starts_with("jax.numpy.") || name.starts_with("numpy.") ||
          (name.starts_with("torch.") && !name.starts_with("torch.nn."))) &&
         !IsPad(name);
}

// Whether the members between a use and what it ends up in (ThroughMembers) read its length.
bool ReadsLength(Node use, Node through) {
  for (Node n = use; n && !(n == through); n = n.parent()) {
    const Node p = n.parent();
    if (p.is("attribute") && p.field("object") == n) {
      const std::string_view member = p.field("attribute").text();
      if (member == "shape" || member == "size" || member == "ndim") return true;
    }
  }
  return false;
}

void FollowIds(const ScriptModel& m, Node assignment, int depth, IdsUses& out);

// Adds one use of the ids to `out`. It only inspects them when it is (part of) the condition of
// an `if`, `while` or `assert` (`if untruncated_ids.shape[-1] >= text_input_ids.shape[-1] and
// not torch.equal(...)`), decodes (`tokenizer.batch_decode(ids)`) or prints them; an assignment
// (`tokens = untruncated_ids[i][start:]`) passes them on to the uses of its name; a pad call's
// first argument pads them again. Any other use gives them, or their length, to something.
void ClassifyUse(const ScriptModel& m, Node use, int depth, IdsUses& out) {
  bool length = false;
  for (int hops = 0; hops < 8; ++hops) {
    const Node through = ThroughMembers(use);
    length = length || ReadsLength(use, through);
    use = through;
    Node p = use.parent();
    while (p.is("comparison_operator") || p.is("boolean_operator") || p.is("not_operator") ||
           p.is("parenthesized_expression")) {
      use = p;
      p = p.parent();
    }
    if ((p.is("if_statement") || p.is("elif_clause") || p.is("while_statement")) &&
        p.field("condition") == use) {
      return;
    }
    if (p.is("assert_statement")) return;
    if (p.is("assignment") && p.field("right") == use && p.field("left").is("identifier")) {
      if (depth < 3) return FollowIds(m, p, depth + 1, out);
      break;
    }
    // Arithmetic on the ids (`mask.cumsum(-1) - 1`) makes an array of their shape: it is
    // followed.
    if (p.is("binary_operator") || p.is("unary_operator")) {
      use = p;
      continue;
    }
    const Call* call = p.is("argument_list") ? m.CallAt(p.parent()) : nullptr;
    if (call == nullptr) break;
    const std::string& method = call->method;
    if (method == "decode" || method == "batch_decode" || method == "print") return;
    if (!length && IsPad(call->name) && !call->args.empty() && call->args.front() == use) {
      out.repadded = true;
      return;
    }
    // Their length (`len(ids)`), or an array function of them — a comparison (`torch.equal`,
    // `np.array_equal`) or an array of their shape (`jnp.where(mask == 0, 1, positions)`): its
    // result is followed in turn.
    if (method == "len" || IsArrayFunction(call->name)) {
      length = length || method == "len";
      use = call->node;
      continue;
    }
    break;
  }
  (length ? out.length_read : out.given) = true;
}

// The uses of the name an assignment binds.
void FollowIds(const ScriptModel& m, Node assignment, int depth, IdsUses& out) {
  EveryUse(m, assignment, [&](Node use) {
    ClassifyUse(m, use, depth, out);
    return !out.given;
  });
}

// Whether the ids a tokenizer call pads never reach a model as it padded them. Hugging Face
// pipelines tokenize a prompt a second time with `padding="longest"` only to see whether the
// fixed-length call truncated it, and to log what was cut; that second batch compiles nothing.
// A script that pads the ids again (`jnp.pad(ids, ((0, 0), (0, length - ids.shape[1])))`) gives
// its model the length it chose, not the batch's longest: reading their length is then part of
// choosing it. A call whose result is not assigned to a name is given to something.
bool NeverGivenAsPadded(const ScriptModel& m, const Call& tokenize) {
  const Node ids = ThroughMembers(tokenize.node);
  const Node assignment = ids.parent();
  if (!assignment.is("assignment") || !(assignment.field("right") == ids) ||
      !assignment.field("left").is("identifier")) {
    return false;
  }
  IdsUses uses;
  FollowIds(m, assignment, 0, uses);
  return !uses.given && (!uses.length_read || uses.repadded);
}

class Py008 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PY008", "dynamic-padding",
                   "inputs padded to each batch's longest sequence: XLA compiles the step again "
                   "for every length")
  void Run(const ScriptContext& c) const override {
    const bool xla =
        c.model.Imports("torch_xla") || c.model.Imports("jax") || c.model.Imports("flax");
    if (!xla) return;
    const bool transformers = c.model.Imports("transformers");
    for (const Call& call : c.model.calls()) {
      if (call.Keyword("pad_to_multiple_of") || call.splat) continue;
      Node padding = call.Keyword("padding");
      // max_length does not change padding=True: it truncates, and only padding="max_length"
      // pads to it.
      const bool collator = IsCollator(call.name) && (!padding || PadsToLongest(padding));
      // A tokenizer handed in from elsewhere (`tokenizer, bert = models`) is known by its call:
      // `return_tensors=` belongs to Hugging Face's tokenizers and processors.
      const bool tokenizer =
          padding && PadsToLongest(padding) && (transformers || call.Keyword("return_tensors"));
      if (!collator && !tokenizer) continue;
      if (tokenizer &&
          ConstantTexts(c.model, call.args.empty() ? call.Keyword("text") : call.args.front()))
        continue;
      if (tokenizer && NeverGivenAsPadded(c.model, call)) continue;
      Diagnostic d = c.Finding(code(), Severity::kWarning, padding ? padding : call.node,
                               "`" + std::string(call.callee.text()) +
                                   "` pads each batch to its longest sequence: every new length "
                                   "is a new shape, and XLA compiles the step again for it");
      d.fix =
          Fix{"pad to a fixed length (`padding=\"max_length\", max_length=N`) or to a "
              "multiple (`pad_to_multiple_of=64`) so a few shapes cover every batch",
              FixApplicability::kDisplayOnly};
      c.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePy008DynamicPadding() { return std::make_unique<Py008>(); }

}  // namespace tpudoctor::script
