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

// Array methods whose result is an array computed from the receiver (`x.sum()`, `x.any()`,
// `x.item()`): traced when the receiver is. Attributes (`x.shape`, `x.ndim`, a module's
// `training` flag) are left alone: they may be static.
constexpr std::string_view kArrayMethods[] = {"all", "any",  "argmax", "argmin", "astype", "item",
                                              "max", "mean", "min",    "prod",   "round",  "std",
                                              "sum", "var",  "clip",   "squeeze"};
// jax.numpy functions that read only an array's static facts (shape, dtype).
constexpr std::string_view kStaticFunctions[] = {
    "shape",        "ndim",      "size",     "result_type",   "issubdtype", "dtype", "isscalar",
    "iscomplexobj", "isrealobj", "can_cast", "promote_types", "finfo",      "iinfo"};

template <std::size_t N>
bool OneOf(const std::string_view (&set)[N], std::string_view s) {
  return std::find(std::begin(set), std::end(set), s) != std::end(set);
}

// The traced parameter an expression's value is computed from, or null when it is not (or may
// not be) traced: the parameter itself, an element of it (`x[0]`), arithmetic on it (`x + 1`),
// an array method of it (`x.sum()`), or a jax.numpy / jax.lax function of it (`jnp.any(x)`).
Node TracedSource(const ScriptModel& model, Node e, const std::vector<std::string>& traced) {
  e = Unparenthesize(e);
  if (e.is("identifier")) return Contains(traced, e.text()) ? e : Node();
  if (e.is("subscript")) return TracedSource(model, e.field("value"), traced);
  if (e.is("unary_operator")) return TracedSource(model, e.field("argument"), traced);
  if (e.is("binary_operator")) {
    if (Node l = TracedSource(model, e.field("left"), traced)) return l;
    return TracedSource(model, e.field("right"), traced);
  }
  if (!e.is("call")) return {};
  const Call* call = model.CallAt(e);
  if (call == nullptr) return {};
  if (call->receiver && call->name.empty() && OneOf(kArrayMethods, call->method)) {
    return TracedSource(model, call->receiver, traced);
  }
  if ((call->name.starts_with("jax.numpy.") || call->name.starts_with("jax.lax.")) &&
      !OneOf(kStaticFunctions, call->method)) {
    for (Node arg : call->args) {
      if (Node source = TracedSource(model, arg, traced)) return source;
    }
  }
  return {};
}

// The traced value a test converts to a bool: the test itself, or an operand of a comparison or
// a boolean operator (not `x is None`, not `x.shape[0] > 1`, not `len(x)`: those are static).
// Returns the tested expression; `source` is set to the traced parameter it comes from.
Node ValueTested(const ScriptModel& model, Node test, const std::vector<std::string>& traced,
                 Node& source) {
  if (test.is("parenthesized_expression") && test.named_count() == 1) {
    return ValueTested(model, test.named(0), traced, source);
  }
  if (test.is("not_operator")) return ValueTested(model, test.field("argument"), traced, source);
  if (test.is("boolean_operator")) {
    if (Node l = ValueTested(model, test.field("left"), traced, source)) return l;
    return ValueTested(model, test.field("right"), traced, source);
  }
  if (test.is("comparison_operator")) {
    for (std::uint32_t i = 0; i < test.count(); ++i) {
      if (test.child(i).is("is") || test.child(i).is("is not") || test.child(i).is("in") ||
          test.child(i).is("not in")) {
        return {};
      }
    }
    for (std::uint32_t i = 0; i < test.named_count(); ++i) {
      const Node operand = test.named(i);
      if ((source = TracedSource(model, operand, traced))) return operand;
    }
    return {};
  }
  if ((source = TracedSource(model, test, traced))) return test;
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
        Node source;
        if (Node value = ValueTested(c.model, test, traced, source)) {
          Report(c, n, value, source, f);
        }
        return true;
      });
    }
  }

 private:
  void Report(const ScriptContext& c, Node statement, Node value, Node source,
              const Function& f) const {
    const std::string keyword = statement.is("while_statement") ? "while" : "if";
    const std::string tested = value == source
                                   ? "`" + std::string(value.text()) + "`, a traced argument"
                                   : "`" + std::string(value.text()) + "`, computed from `" +
                                         std::string(source.text()) + "`, a traced argument";
    Diagnostic d = c.Finding(code(), Severity::kError, statement,
                             "`" + keyword + "` on " + tested + " of the jitted `" + f.name +
                                 "`: it has no value while JAX traces, so jax.jit raises "
                                 "TracerBoolConversionError");
    d.fix =
        Fix{"use `jnp.where` / `jax.lax.cond` / `jax.lax.while_loop`, or mark the argument "
            "static (`static_argnames=(\"" +
                std::string(source.text()) + "\",)`) if it is a Python value",
            FixApplicability::kDisplayOnly};
    c.Add(std::move(d));
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePy005TracedControlFlow() { return std::make_unique<Py005>(); }

}  // namespace tpudoctor::script
