#include "src/script/rules/value_flow.h"

namespace tpudoctor::script {
namespace {

// How far ReachesModel follows a value through names and calls (`x = tf.cast(...)`,
// `x = x / 255.0`, `model(x)`).
constexpr int kMaxFollow = 4;

// Whether a call that takes the value feeds it to a model: a callable of the script, or an input
// pipeline. A framework function (another tf.cast, NumPy) does not: a guide casting a tensor to
// show dtypes builds no model. Nor does a `step` method: that is how PyTorch's optimizers, LR
// schedulers and GradScaler (and Gym's environments) advance, never a model's forward
// (`optimizer.step(found_inf=flag)` takes an overflow flag, not an input).
bool FeedsModel(const Call* consumer) {
  if (consumer == nullptr) return false;
  const std::string& n = consumer->name;
  if (n == "tensorflow.data.Dataset.from_tensor_slices" ||
      n == "tensorflow.data.Dataset.from_tensors" || n == "torch.utils.data.TensorDataset") {
    return true;
  }
  const std::string& m = consumer->method;
  return n.empty() && m != "print" && m != "str" && m != "repr" && m != "format" && m != "len" &&
         m != "isinstance" && m != "type" && !(consumer->receiver && m == "step");
}

// The call whose argument list holds `expr` (directly, as a keyword value, or splatted), or null.
const Call* ConsumerOf(const ScriptModel& model, Node expr) {
  Node parent = expr.parent();
  if (parent.is("keyword_argument") || parent.is("dictionary_splat") || parent.is("list_splat")) {
    parent = parent.parent();
  }
  if (!parent.is("argument_list")) return nullptr;
  return model.CallAt(parent.parent());
}

// The expression an arithmetic value ends up in: up through operators and parentheses.
Node Outermost(Node expr) {
  for (Node p = expr.parent(); p.is("binary_operator") || p.is("unary_operator") ||
                               p.is("parenthesized_expression") || p.is("conditional_expression");
       p = p.parent()) {
    expr = p;
  }
  return expr;
}

bool ExpressionReaches(const ScriptModel& model, Node expr, const Flow& flow, int depth);

// Whether the value an assignment binds is used where it reaches a model.
bool ValueReaches(const ScriptModel& model, Node assignment, const Flow& flow, int depth) {
  return !EveryUse(model, assignment,
                   [&](Node use) { return !ExpressionReaches(model, use, flow, depth); });
}

bool ExpressionReaches(const ScriptModel& model, Node expr, const Flow& flow, int depth) {
  expr = Outermost(expr);
  Node parent = expr.parent();
  if (parent.is("expression_list") || parent.is("tuple")) parent = parent.parent();
  if (parent.is("return_statement")) return true;
  const Call* consumer = ConsumerOf(model, expr);
  if (consumer != nullptr && flow.ends_at && flow.ends_at(*consumer)) return false;
  if (FeedsModel(consumer)) return true;
  // Given to a framework function (tf.cast, tf.reshape): its result carries the value on.
  if (consumer != nullptr) {
    return depth < kMaxFollow && ExpressionReaches(model, consumer->node, flow, depth + 1);
  }
  if (parent.is("assignment") && parent.field("left").is("identifier") && depth < kMaxFollow) {
    return ValueReaches(model, parent, flow, depth + 1);
  }
  return false;
}

}  // namespace

bool EveryUse(const ScriptModel& model, Node assignment, const std::function<bool(Node)>& use) {
  const std::string_view name = assignment.field("left").text();
  const Node value = assignment.field("right");
  const int function = model.FunctionOf(assignment);
  bool holds = true;
  auto visit = [&](Node n, int) {
    if (!holds) return false;
    // A name being assigned (`e = ...` after `e = <value>`) is not a use of the value.
    const bool assigned = n.parent().is("assignment") && n.parent().field("left") == n;
    if (n.is("identifier") && n.text() == name && n.begin() > assignment.end() && !assigned &&
        model.ValueOf(name, n.begin(), model.FunctionOf(n)) == value) {
      holds = use(n);
    }
    return true;
  };
  if (function >= 0) {
    Walk(model.functions()[function].node, visit);
  } else {
    Walk(model.syntax(), visit);
  }
  return holds;
}

bool ReachesModel(const ScriptModel& model, Node expr, const Flow& flow) {
  return ExpressionReaches(model, expr, flow, 0);
}

}  // namespace tpudoctor::script
