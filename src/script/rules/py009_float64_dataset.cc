#include <map>
#include <optional>

#include "src/script/rules/factories.h"
#include "src/script/rules/tfdata.h"
#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor::script {
namespace {

// How far names and dtype-keeping calls are followed back to the array's maker.
constexpr int kMaxFollow = 12;

// data/python/numpy_float64.tsv: NumPy callable → position of its dtype parameter (nullopt: it
// has none and always returns float64).
const std::map<std::string, std::optional<std::size_t>, std::less<>>& Float64Makers() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, std::optional<std::size_t>, std::less<>>();
    for (const auto& cols : EmbeddedTsvRows("data/python/numpy_float64.tsv")) {
      if (cols.size() != 2) continue;
      std::optional<std::size_t> at;
      if (cols[1] != "-") {
        auto n = ParseInt64(cols[1]);
        if (!n || *n < 0) continue;
        at = static_cast<std::size_t>(*n);
      }
      t->emplace(std::string(cols[0]), at);
    }
    return t;
  }();
  return *table;
}

// Whether a dtype expression is NumPy's float64: np.float64, np.double, np.float_, the builtin
// `float`, or the strings NumPy reads as float64.
bool IsFloat64Dtype(const ScriptModel& model, Node dtype) {
  if (auto s = StringLiteral(dtype)) {
    return *s == "float64" || *s == "double" || *s == "f8" || *s == "d" || *s == "float" ||
           *s == "<f8";
  }
  if (dtype.is("identifier") && dtype.text() == "float" && model.Canonical(dtype).empty()) {
    return true;
  }
  const std::string name = model.Canonical(dtype);
  return name == "numpy.float64" || name == "numpy.double" || name == "numpy.float_";
}

// The images of these Keras datasets are uint8 arrays (keras.io/api/datasets): dividing them by a
// Python number gives float64.
bool LoadsIntegerImages(const std::string& name) {
  for (std::string_view d : {"mnist", "fashion_mnist", "cifar10", "cifar100"}) {
    if (name == "keras.datasets." + std::string(d) + ".load_data") return true;
  }
  return false;
}

// NumPy calls and array methods whose result has their first argument's (or receiver's) dtype.
bool KeepsDtype(const Call& call) {
  if (call.name.empty() && call.receiver) {
    for (std::string_view m :
         {"reshape", "transpose", "squeeze", "copy", "flatten", "ravel", "swapaxes"}) {
      if (call.method == m) return true;
    }
    return false;
  }
  for (std::string_view n :
       {"numpy.reshape", "numpy.expand_dims", "numpy.squeeze", "numpy.transpose", "numpy.copy",
        "numpy.flip", "numpy.concatenate", "numpy.stack", "numpy.vstack", "numpy.hstack",
        "numpy.array", "numpy.asarray", "numpy.ascontiguousarray", "numpy.tile", "numpy.repeat"}) {
    if (call.name == n) return true;
  }
  return false;
}

// The array a dtype-keeping call keeps the dtype of: the receiver, or the first argument (the
// first member of a list of arrays).
Node KeptFrom(const Call& call) {
  if (call.name.empty()) return call.receiver;
  if (call.args.empty()) return {};
  Node first = call.args[0];
  if ((first.is("list") || first.is("tuple")) && first.named_count() > 0) first = first.named(0);
  return first;
}

bool IsNumber(Node n) {
  while (n.is("unary_operator") && n.named_count() == 1) n = n.named(0);
  return n.is("integer") || n.is("float");
}

// What an expression passes its array on from unchanged: the inside of parentheses, the value a
// name is bound to, the array a subscript slices. Null for anything else.
Node PassedFrom(const ScriptModel& model, Node expr) {
  if (expr.is("parenthesized_expression") && expr.named_count() == 1) return expr.named(0);
  if (expr.is("identifier")) return model.ValueAt(expr);
  if (expr.is("subscript")) return expr.field("value");
  return {};
}

struct Float64Source {
  Node node;        // the expression that makes the float64 array
  std::string why;  // how it does, for the message
};

std::optional<Float64Source> SourceOf(const ScriptModel& model, Node expr, int depth);

// Whether an array holds a Keras dataset's uint8 images (followed through names, slices and
// dtype-keeping calls).
bool IntegerImages(const ScriptModel& model, Node expr, int depth) {
  if (!expr || depth > kMaxFollow) return false;
  if (Node unpacked = expr.is("identifier") ? model.UnpackedAt(expr) : Node();
      unpacked.is("call")) {
    const Call* call = model.CallAt(unpacked);
    return call != nullptr && LoadsIntegerImages(call->name);
  }
  if (Node from = PassedFrom(model, expr)) return IntegerImages(model, from, depth + 1);
  const Call* call = expr.is("call") ? model.CallAt(expr) : nullptr;
  if (call == nullptr) return false;
  // `load_data()[0][0]`: the subscripts above reach the call itself.
  if (LoadsIntegerImages(call->name)) return true;
  if (KeepsDtype(*call) && !call->Keyword("dtype")) {
    return IntegerImages(model, KeptFrom(*call), depth + 1);
  }
  return false;
}

std::optional<Float64Source> CallSource(const ScriptModel& model, const Call& call, int depth) {
  const auto& makers = Float64Makers();
  if (auto it = makers.find(call.name); it != makers.end()) {
    Node dtype = call.Keyword("dtype");
    if (!dtype && it->second && *it->second < call.args.size()) dtype = call.args[*it->second];
    if (!dtype || IsFloat64Dtype(model, dtype)) {
      return Float64Source{call.node, dtype ? "float64 as asked" : "NumPy's default dtype"};
    }
    return std::nullopt;
  }
  if (call.name.empty() && call.method == "astype" && !call.args.empty()) {
    if (IsFloat64Dtype(model, call.args[0])) return Float64Source{call.node, "cast to float64"};
    return std::nullopt;
  }
  if (!KeepsDtype(call)) return std::nullopt;
  if (Node dtype = call.Keyword("dtype")) {
    if (IsFloat64Dtype(model, dtype)) return Float64Source{call.node, "float64 as asked"};
    return std::nullopt;
  }
  // np.array([0.5, 1.5]): Python floats make float64.
  if (call.name == "numpy.array" || call.name == "numpy.asarray") {
    Node first = call.args.empty() ? Node() : call.args[0];
    while ((first.is("list") || first.is("tuple")) && first.named_count() > 0) {
      first = first.named(0);
    }
    if (first.is("float")) return Float64Source{call.node, "Python floats make float64"};
  }
  return SourceOf(model, KeptFrom(call), depth + 1);
}

// Where an expression's value becomes a float64 NumPy array, if the code shows it does.
std::optional<Float64Source> SourceOf(const ScriptModel& model, Node expr, int depth) {
  if (!expr || depth > kMaxFollow) return std::nullopt;
  if (Node from = PassedFrom(model, expr)) return SourceOf(model, from, depth + 1);
  if (expr.is("call")) {
    const Call* call = model.CallAt(expr);
    return call == nullptr ? std::nullopt : CallSource(model, *call, depth);
  }
  if (expr.is("binary_operator")) {
    const Node left = expr.field("left"), right = expr.field("right");
    const std::string_view op = expr.child(1).type();
    if (op != "/" && op != "*" && op != "+" && op != "-") return std::nullopt;
    // float64 with anything NumPy holds stays float64.
    for (Node side : {left, right}) {
      if (auto s = SourceOf(model, side, depth + 1)) return Float64Source{expr, s->why};
    }
    // uint8 images / 255.0: true division of integers, or integers with a Python float, is
    // float64.
    const bool integer_left = IntegerImages(model, left, depth + 1);
    if (integer_left && IsNumber(right) && (op == "/" || right.is("float"))) {
      return Float64Source{expr, "NumPy turns the uint8 images of `load_data()` into float64"};
    }
  }
  return std::nullopt;
}

// The members of a from_tensor_slices argument: a tuple, list or dict of arrays (one level, and
// through a name bound to one), or the array itself.
std::vector<Node> Members(const ScriptModel& model, Node arg) {
  Node literal = arg.is("identifier") ? model.ValueAt(arg) : arg;
  std::vector<Node> out;
  if (literal.is("tuple") || literal.is("list")) {
    for (std::uint32_t i = 0; i < literal.named_count(); ++i) out.push_back(literal.named(i));
  } else if (literal.is("dictionary")) {
    for (std::uint32_t i = 0; i < literal.named_count(); ++i) {
      if (literal.named(i).is("pair")) out.push_back(literal.named(i).field("value"));
    }
  } else {
    out.push_back(arg);
  }
  return out;
}

// `expr.astype("float32")`, with parentheses where the expression needs them.
std::string AsFloat32(Node expr) {
  const bool primary = expr.is("identifier") || expr.is("call") || expr.is("subscript") ||
                       expr.is("attribute") || expr.is("parenthesized_expression");
  const std::string text(expr.text());
  return (primary ? text : "(" + text + ")") + ".astype(\"float32\")";
}

// A tf.data training pipeline built (from_tensor_slices / from_tensors) from NumPy arrays the code
// shows are float64: np.random draws, np.zeros/ones/loadtxt without a dtype, `.astype(float)`,
// Python-float lists, and a Keras dataset's uint8 images divided by 255.0. The dataset keeps
// float64 (Keras' `fit(x=array)` casts NumPy floats to float32 on the host; tf.data does not).
class Py009 final : public ScriptRule {
 public:
  TPUD_SCRIPT_RULE("PY009", "float64-dataset",
                   "a tf.data dataset built from float64 NumPy arrays carries float64 to the TPU")
  void Run(const ScriptContext& c) const override {
    if (!c.model.Imports("tensorflow")) return;
    const auto& training = c.TfData().training_pipeline_calls;
    for (const Call& call : c.model.calls()) {
      if (call.name != "tensorflow.data.Dataset.from_tensor_slices" &&
          call.name != "tensorflow.data.Dataset.from_tensors") {
        continue;
      }
      if (!training.contains(call.node.id())) continue;
      Node arg = Argument(call, 0, "tensors");
      if (!arg) continue;
      for (Node member : Members(c.model, arg)) Report(c, member);
    }
  }

 private:
  void Report(const ScriptContext& c, Node member) const {
    auto source = SourceOf(c.model, member, 0);
    if (!source) return;
    std::string message = "`" + std::string(member.text()) + "` is a float64 NumPy array";
    if (source->node.begin() != member.begin() || source->node.end() != member.end()) {
      message += " (`" + std::string(source->node.text()) + "`, line " +
                 std::to_string(c.model.Locate(source->node).line) + ")";
    }
    message += ": " + source->why +
               "; the dataset keeps it, so each batch goes to the TPU in float64, twice the bytes "
               "of float32, for the model to cast on arrival";
    // Whether the bytes matter depends on how fast the rest of the pipeline is: a note.
    Diagnostic d = c.Finding(code(), Severity::kNote, member, std::move(message));
    d.fix =
        Fix{"make the array float32 where the dataset is built (the model casts its inputs to "
            "float32 anyway; unsafe only for a model that computes in float64)",
            FixApplicability::kUnsafe};
    d.fix->edits.push_back(Replace(member, AsFloat32(member)));
    c.Add(std::move(d));
  }
};

}  // namespace

std::unique_ptr<ScriptRule> MakePy009Float64Dataset() { return std::make_unique<Py009>(); }

}  // namespace tpudoctor::script
