#include <algorithm>

#include "src/script/rules/factories.h"

namespace tpudoctor::script {
namespace {

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Whether a parameter's annotation names an array type (`jax.Array`, `jnp.ndarray`, jaxtyping's
// `Float[Array, "n"]`): a name or attribute whose last part is `Array` or `ndarray`.
bool AnnotatedArray(Node typed_parameter) {
  bool array = false;
  Walk(typed_parameter.field("type"), [&](Node n, int) {
    const Node last = n.is("attribute") ? n.field("attribute") : n;
    if (last.is("identifier") && (last.text() == "Array" || last.text() == "ndarray")) {
      array = true;
    }
    return !array;
  });
  return array;
}

// The parameters of a jitted function that JAX traces: not static, not `self`, and without a
// default (a default's value may be a Python constant the caller never overrides). Under
// equinox.filter_jit alone, only those annotated as arrays: it holds every other value static.
std::vector<std::string> TracedParams(const Function& f) {
  std::vector<std::string> out;
  Node params = f.node.field("parameters");
  for (std::uint32_t i = 0; i < params.named_count(); ++i) {
    Node p = params.named(i);
    if (!p.is("identifier") && !p.is("typed_parameter")) continue;
    if (!f.traces_every_argument && !(p.is("typed_parameter") && AnnotatedArray(p))) continue;
    std::string name(p.is("identifier") ? p.text() : p.named(0).text());
    if (name == "self" || name == "cls" || Contains(f.static_params, name)) continue;
    out.push_back(std::move(name));
  }
  return out;
}

// A parameter the test reads as a value: the test itself, or an operand of a comparison or a
// boolean operator (not `x is None`, not `x.shape[0] > 1`, not `len(x)`: those are static).
Node ValueTested(Node test, const std::vector<std::string>& traced) {
  auto is_traced = [&](Node n) { return n.is("identifier") && Contains(traced, n.text()); };
  if (test.is("parenthesized_expression") && test.named_count() == 1) {
    return ValueTested(test.named(0), traced);
  }
  if (is_traced(test)) return test;
  if (test.is("not_operator")) return ValueTested(test.field("argument"), traced);
  if (test.is("boolean_operator")) {
    if (Node l = ValueTested(test.field("left"), traced)) return l;
    return ValueTested(test.field("right"), traced);
  }
  if (test.is("comparison_operator")) {
    for (std::uint32_t i = 0; i < test.count(); ++i) {
      if (test.child(i).is("is") || test.child(i).is("is not") || test.child(i).is("in") ||
          test.child(i).is("not in")) {
        return {};
      }
    }
    for (std::uint32_t i = 0; i < test.named_count(); ++i) {
      Node operand = test.named(i);
      if (operand.is("subscript")) operand = operand.field("value");
      if (is_traced(operand)) return operand;
    }
  }
  return {};
}

// Python `if`/`while` on a traced argument of a jitted function: under jax.jit the argument is an
// abstract tracer with no value, so converting it to a bool raises TracerBoolConversionError
// (ConcretizationTypeError).
class Py005 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PY005", "traced-control-flow",
                   "Python if/while on a traced argument of a jax.jit function")
  void Run(const ScriptContext& c) const override {
    const auto& functions = c.model.functions();
    for (std::size_t i = 0; i < functions.size(); ++i) {
      const Function& f = functions[i];
      if (!f.jax_traced || !f.node.is("function_definition")) continue;
      const std::vector<std::string> traced = TracedParams(f);
      if (traced.empty()) continue;
      Walk(f.node.field("body"), [&](Node n, int) {
        if (n.is("function_definition") || n.is("lambda") || n.is("class_definition")) {
          return false;  // a nested function has its own arguments
        }
        Node test;
        if (n.is("if_statement") || n.is("while_statement") || n.is("elif_clause")) {
          test = n.field("condition");
        }
        if (Node value = ValueTested(test, traced)) Report(c, n, value, f);
        return true;
      });
    }
  }

 private:
  void Report(const ScriptContext& c, Node statement, Node value, const Function& f) const {
    const std::string keyword = statement.is("while_statement") ? "while" : "if";
    Diagnostic d = c.Finding(code(), Severity::kError, statement,
                             "`" + keyword + "` on `" + std::string(value.text()) +
                                 "`, a traced argument of the jitted `" + f.name +
                                 "`: it has no value while JAX traces, so jax.jit raises "
                                 "TracerBoolConversionError");
    d.fix =
        Fix{"use `jnp.where` / `jax.lax.cond` / `jax.lax.while_loop`, or mark the argument "
            "static (`static_argnames=(\"" +
                std::string(value.text()) + "\",)`) if it is a Python value",
            FixApplicability::kDisplayOnly};
    c.Add(std::move(d));
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePy005TracedControlFlow() { return std::make_unique<Py005>(); }

}  // namespace tpudoctor::script
