#include <algorithm>

#include "src/script/rules/factories.h"
#include "src/script/rules/torch_xla.h"

namespace tpudoctor::script {
namespace {

// The names a loop binds before a call in it: its targets, and the names assigned in its body
// before the call (not inside functions or classes defined there).
std::vector<std::string_view> LoopNames(const Call& call) {
  std::vector<std::string_view> names;
  auto add_targets = [&](Node left) {
    Walk(left, [&](Node n, int) {
      if (n.is("identifier")) names.push_back(n.text());
      return true;
    });
  };
  if (call.loop.is("for_statement")) add_targets(call.loop.field("left"));
  Walk(call.loop.field("body"), [&](Node n, int) {
    if (n.is("assignment") && n.end() <= call.node.begin()) add_targets(n.field("left"));
    return !n.is("function_definition") && !n.is("class_definition") && !n.is("lambda");
  });
  return names;
}

// Whether an expression reads one of the names.
bool Reads(Node expr, const std::vector<std::string_view>& names) {
  bool reads = false;
  Walk(expr, [&](Node n, int) {
    if (n.is("identifier") && std::find(names.begin(), names.end(), n.text()) != names.end()) {
      reads = true;
    }
    return !reads;
  });
  return reads;
}

// Whether the jit's own arguments (`out_shardings=`, `in_shardings=`, static arguments) read a
// name the loop binds — its targets, or a name assigned in its body (`for layer_name, n in groups:
// jax.jit(f, out_shardings=sh[layer_name])`; `sharding = NamedSharding(mesh, spec_of[i]);
// jax.jit(alloc, out_shardings=sharding)`): each iteration asks for a different program, so a
// function made once would compile on every iteration as well.
bool ConfiguredPerIteration(const Call& jit, const std::vector<std::string_view>& names) {
  if (!jit.loop.is("for_statement") && !jit.loop.is("while_statement")) return false;
  return std::any_of(jit.kwargs.begin(), jit.kwargs.end(),
                     [&](const auto& kwarg) { return Reads(kwarg.second, names); });
}

// The shape an array-making call is given: `shape=`, else the first argument of a NumPy or
// jax.numpy constructor (`jnp.ones((n, d))`) or the second of a jax.random sampler
// (`jax.random.normal(key, (n, d))`); null for any other call.
Node ShapeArgument(const Call& c) {
  const bool numpy = c.name.starts_with("jax.numpy.") || c.name.starts_with("numpy.");
  const bool random = c.name.starts_with("jax.random.");
  if (!numpy && !random) return {};
  if (Node shape = c.Keyword("shape")) return shape;
  const std::size_t at = random ? 1 : 0;
  return c.args.size() > at ? c.args[at] : Node();
}

// Whether a call makes an array whose shape reads one of the names: itself, or — for a def of
// the file called with one of them (`make_inputs(case, bucket)`) — a call in its body whose shape
// reads the parameter that name is passed to.
bool SizesArrays(const ScriptModel& model, const Call& c,
                 const std::vector<std::string_view>& names) {
  if (Node shape = ShapeArgument(c)) return Reads(shape, names);
  const int f = model.LocalCallee(c);
  if (f < 0) return false;
  const Function& def = model.functions()[static_cast<std::size_t>(f)];
  std::vector<std::string_view> params;
  for (std::size_t i = 0; i < c.args.size() && i < def.params.size(); ++i) {
    if (Reads(c.args[i], names)) params.push_back(def.params[i]);
  }
  for (const auto& [key, value] : c.kwargs) {
    if (Reads(value, names)) params.push_back(key);
  }
  if (params.empty()) return false;
  for (const Call& inner : model.CallsIn(def.node)) {
    if (Node shape = ShapeArgument(inner); shape && Reads(shape, params)) return true;
  }
  return false;
}

// Whether the loop is a sweep over configurations the code lists (`for gb in (1, 2, 4):`,
// `for B, ctx in ((32, 4096), (64, 8192)):`, also under `enumerate` or through a name bound to
// such a list) whose body makes arrays sized by the configuration (`x = jnp.ones((n,))` with `n`
// computed from `gb`, or a def of the file given `gb` that does): each iteration's program has
// new shapes, so it compiles on every iteration whatever is jitted, and jitting once before the
// loop would save nothing. (A sweep over values alone — a learning rate closed over — is still
// flagged: one jitted function taking the value as an argument compiles once.)
bool SweepsShapes(const ScriptModel& model, const Call& jit,
                  const std::vector<std::string_view>& names) {
  if (!jit.loop.is("for_statement")) return false;
  Node over = Unparenthesize(model.Resolve(jit.loop.field("right")));
  if (over.is("call")) {
    const Call* wrapper = model.CallAt(over);
    if (wrapper == nullptr || wrapper->callee.text() != "enumerate" || wrapper->args.empty()) {
      return false;
    }
    over = Unparenthesize(model.Resolve(wrapper->args.front()));
  }
  if (!over.is("tuple") && !over.is("list") && !over.is("set") && !over.is("expression_list")) {
    return false;
  }
  for (const Call& c : model.CallsIn(jit.loop.field("body"))) {
    if (c.node.begin() >= jit.node.begin()) break;
    if (SizesArrays(model, c, names)) return true;
  }
  return false;
}

// Whether the jitted function is only compiled ahead of time, one program per iteration on
// purpose: the name it is assigned to is given to `jax.export.export` or lowered (`.lower(...)`,
// `.trace(...)`) later in the loop, and never called there (an exporter of one artifact per input
// signature). By name, not by binding: the exporter may assign the name in both arms of an `if`.
bool OnlyCompiledAheadOfTime(const ScriptModel& model, const Call& jit) {
  const Node assignment = jit.node.parent();
  if (!assignment.is("assignment") || !assignment.field("left").is("identifier")) return false;
  const std::string_view name = assignment.field("left").text();
  bool ahead_of_time = false;
  for (const Call& c : model.CallsIn(jit.loop)) {
    if (c.node.begin() < jit.node.end()) continue;
    if (c.callee.is("identifier") && c.callee.text() == name) return false;  // called
    if (c.name.ends_with("export.export") && !c.args.empty() && c.args[0].text() == name)
      ahead_of_time = true;
    if ((c.method == "lower" || c.method == "trace") && c.receiver && c.receiver.text() == name)
      ahead_of_time = true;
  }
  return ahead_of_time;
}

// Whether `fn` is a `functools.partial(...)` made inside the loop, there or through a name bound
// to it: a new partial object on each iteration, which jit's cache does not recognise (JAX's
// "Just-in-time compilation" guide: `jax.jit(partial(f))` in a loop compiles on every iteration).
bool NewPartialEachIteration(const ScriptModel& model, Node fn, Node loop) {
  const Node value = Unparenthesize(model.Resolve(fn));
  if (!value.is("call") || !Within(value, loop)) return false;
  const Call* made = model.CallAt(value);
  return made != nullptr && made->name == "functools.partial";
}

// Whether the jit is made only on the iterations that take a branch (`if need_compile:`, `if not
// compiled:`): the code shows a recompile when something changed, not one on every iteration.
bool OnlyOnSomeIterations(const Call& jit) {
  for (Node n = jit.node.parent(); n && n != jit.loop; n = n.parent()) {
    if (n.is("if_statement")) return true;
  }
  return false;
}

// jax.jit of a function created inside a loop: JAX caches compilations by the function object, so
// a lambda or a def made anew on each iteration is traced and compiled again every time.
class Py004 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PY004", "jit-in-loop",
                   "jax.jit of a function created inside a loop compiles it again on every "
                   "iteration")
  void Run(const ScriptContext& c) const override {
    for (const Call& call : c.model.calls()) {
      if (call.name != "jax.jit" && call.name != "jax.pmap") continue;
      if (!call.loop || call.args.empty()) continue;
      Node fn = call.args[0];
      bool made_in_loop = fn.is("lambda");
      if (fn.is("identifier")) {
        const int f = c.model.FunctionNamed(fn);
        made_in_loop = f >= 0 && Within(c.model.functions()[f].node, call.loop);
      }
      made_in_loop = made_in_loop || NewPartialEachIteration(c.model, fn, call.loop);
      if (!made_in_loop) continue;
      const std::vector<std::string_view> names = LoopNames(call);
      if (ConfiguredPerIteration(call, names) || SweepsShapes(c.model, call, names) ||
          OnlyCompiledAheadOfTime(c.model, call) || OnlyOnSomeIterations(call)) {
        continue;
      }
      Diagnostic d = c.Finding(code(), Severity::kWarning, call.node,
                               "`" + std::string(call.callee.text()) +
                                   "` of a function made inside the loop: each iteration has a "
                                   "new function object, so JAX traces and compiles it again");
      d.fix =
          Fix{"define the function and jit it once, before the loop; pass what changes as "
              "arguments",
              FixApplicability::kDisplayOnly};
      c.Add(std::move(d));
    }
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePy004JitInLoop() { return std::make_unique<Py004>(); }

}  // namespace tpudoctor::script
