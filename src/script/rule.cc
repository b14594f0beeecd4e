#include "src/script/rule.h"

#include <mutex>

#include "src/script/rules/tfdata.h"

namespace tpudoctor::script {

struct ScriptContext::Shared {
  std::once_flag tfdata_once;
  std::unique_ptr<TfDataFacts> tfdata;
};

ScriptContext::ScriptContext(const ScriptModel& model, std::string file, DiagnosticSink& sink)
    : model(model), file(std::move(file)), sink(sink), shared_(std::make_shared<Shared>()) {}

ScriptContext::ScriptContext(const ScriptContext& other, DiagnosticSink& sink)
    : model(other.model), file(other.file), sink(sink), shared_(other.shared_) {}

ScriptContext::~ScriptContext() = default;

const TfDataFacts& ScriptContext::TfData() const {
  std::call_once(shared_->tfdata_once,
                 [&] { shared_->tfdata = std::make_unique<TfDataFacts>(TfDataFacts::Of(model)); });
  return *shared_->tfdata;
}

Diagnostic ScriptContext::Finding(std::string_view code, Severity severity, Node at,
                                  std::string message) const {
  Diagnostic d;
  d.code = std::string(code);
  d.severity = severity;
  d.message = std::move(message);
  const Position p = model.Locate(at);
  d.location.file = file;
  d.location.line = p.line;
  d.location.column = p.column;
  d.location.cell = p.cell;
  return d;
}

std::string ScriptContext::Autotune() const {
  for (const char* name : {"AUTOTUNE", "AUTO"}) {
    Node value = model.ValueOf(name, UINT32_MAX, -1);
    const std::string canonical = model.Canonical(value);
    if (canonical == "tensorflow.data.AUTOTUNE" ||
        canonical == "tensorflow.data.experimental.AUTOTUNE") {
      return name;
    }
  }
  const std::string tf = model.AliasOf("tensorflow");
  return tf.empty() ? std::string() : tf + ".data.AUTOTUNE";
}

TextEdit AddKeyword(const Call& call, std::string_view keyword, std::string_view value) {
  Node args = call.node.field("arguments");
  // Insert before the closing parenthesis, after the last argument (and its trailing comma).
  std::uint32_t at = args.end() - 1;
  bool trailing_comma = false;
  bool any = args.named_count() > 0;
  for (std::uint32_t i = args.count(); i-- > 0;) {
    Node c = args.child(i);
    if (c.is(")")) continue;
    if (c.is(",")) trailing_comma = true;
    if (c.is("comment")) continue;
    if (!c.is(",")) {
      at = trailing_comma ? args.child(i + 1).end() : c.end();
      break;
    }
  }
  std::string text = std::string(keyword) + "=" + std::string(value);
  if (!any) return {at, at, text};
  return {at, at, (trailing_comma ? " " : ", ") + text};
}

TextEdit RemoveKeyword(const Call& call, std::string_view name) {
  Node args = call.node.field("arguments");
  for (std::uint32_t i = 0; i < args.count(); ++i) {
    Node c = args.child(i);
    if (!c.is("keyword_argument") || c.field("name").text() != name) continue;
    // Remove the comma before it (or, for the first argument, the one after it).
    if (i > 0 && args.child(i - 1).is(",")) return {args.child(i - 1).begin(), c.end(), ""};
    if (i + 1 < args.count() && args.child(i + 1).is(",")) {
      const std::uint32_t next =
          i + 2 < args.count() ? args.child(i + 2).begin() : args.child(i + 1).end();
      return {c.begin(), next, ""};
    }
    return {c.begin(), c.end(), ""};
  }
  return {};
}

TextEdit Replace(Node node, std::string replacement) {
  return {node.begin(), node.end(), std::move(replacement)};
}

bool InJaxTrace(const ScriptModel& model, int function) {
  return model.InFunctionWhere(function, [](const Function& f) { return f.jax_traced; });
}

}  // namespace tpudoctor::script
