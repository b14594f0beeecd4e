#include "src/script/rules/factories.h"

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

class Py008 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PY008", "dynamic-padding",
                   "inputs padded to each batch's longest sequence: XLA compiles the step again "
                   "for every length")
  void Run(const ScriptContext& c) const override {
    const bool xla =
        c.model.Imports("torch_xla") || c.model.Imports("jax") || c.model.Imports("flax");
    if (!xla || !c.model.Imports("transformers")) return;
    for (const Call& call : c.model.calls()) {
      if (call.Keyword("pad_to_multiple_of") || call.splat) continue;
      Node padding = call.Keyword("padding");
      // max_length does not change padding=True: it truncates, and only padding="max_length"
      // pads to it.
      const bool collator = IsCollator(call.name) && (!padding || PadsToLongest(padding));
      const bool tokenizer = padding && PadsToLongest(padding);
      if (!collator && !tokenizer) continue;
      if (tokenizer &&
          ConstantTexts(c.model, call.args.empty() ? call.Keyword("text") : call.args.front()))
        continue;
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
