#include "src/script/rules/tfdata.h"

#include <algorithm>
#include <unordered_set>

namespace tpudoctor::script {

std::vector<const Call*> DatasetCalls(const ScriptModel& model, std::string_view method) {
  std::vector<const Call*> out;
  for (const Call& c : model.calls()) {
    if (c.method == method && c.receiver && c.name.empty() &&
        model.KindOf(c.receiver) == Kind::kDataset) {
      out.push_back(&c);
    }
  }
  return out;
}

Node Argument(const Call& call, std::size_t index, std::string_view keyword) {
  if (Node k = call.Keyword(keyword)) return k;
  return index < call.args.size() ? call.args[index] : Node();
}

std::vector<const Call*> ChainBefore(const ScriptModel& model, const Call& call) {
  return call.receiver ? model.Chain(call.receiver) : std::vector<const Call*>{};
}

bool HasStep(const std::vector<const Call*>& chain, std::string_view method) {
  for (const Call* c : chain) {
    if (c->method == method) return true;
    if (c->method == "apply" && !c->args.empty() && c->args[0].is("call")) {
      const std::string_view inner = c->args[0].field("function").text();
      if (inner.ends_with(method)) return true;
    }
  }
  return false;
}

Node FunctionBody(const ScriptModel& model, Node fn) {
  if (fn.is("lambda")) return fn;
  if (fn.is("identifier")) {
    const int f = model.FunctionNamed(fn);
    if (f >= 0) return model.functions()[f].node;
  }
  return {};
}

namespace {

bool IsPythonWrapper(const std::string& name) {
  return name == "tensorflow.py_function" || name == "tensorflow.numpy_function" ||
         name == "tensorflow.py_func";
}

// How deep PythonCallWithin follows the script's own functions.
constexpr int kMaxCallDepth = 3;

}  // namespace

const Call* PythonCallWithin(const ScriptModel& model, Node body, int depth) {
  if (!body || depth > kMaxCallDepth) return nullptr;
  for (const Call& c : model.CallsIn(body)) {
    if (IsPythonWrapper(c.name)) return &c;
    const int f = model.LocalCallee(c);
    if (f < 0 || model.functions()[f].node == body) continue;
    // A def decorated with @tf.py_function / @tf.numpy_function is Python when called.
    for (const std::string& d : model.functions()[f].decorators) {
      if (IsPythonWrapper(d)) return &c;
    }
    if (const Call* inner = PythonCallWithin(model, model.functions()[f].node, depth + 1)) {
      return inner;
    }
  }
  return nullptr;
}

namespace {

// Whether a node of a function body runs only under a Python condition of the body (`if
// training:`, `x if flag else y`): whether tf.data's trace of the function holds it depends on
// values the script computes when it builds the pipeline.
bool UnderCondition(Node node, Node body) {
  for (Node n = node.parent(); n && n.begin() >= body.begin() && !(n == body); n = n.parent()) {
    if (n.is("if_statement") || n.is("conditional_expression") || n.is("elif_clause") ||
        n.is("else_clause"))
      return true;
  }
  return false;
}

}  // namespace

bool CallsStateful(const ScriptModel& model, Node body) {
  if (PythonCallWithin(model, body)) return true;
  for (const Call& c : model.CallsIn(body)) {
    const std::string& n = c.name;
    if ((n.starts_with("tensorflow.random.") || n.starts_with("tensorflow.image.random_") ||
         n.starts_with("numpy.random.") || n == "tensorflow.random_uniform" ||
         n == "tensorflow.random_normal") &&
        !UnderCondition(c.node, body)) {
      return true;
    }
  }
  return false;
}

namespace {

// A call that takes a training step: a `tf.GradientTape`, `apply_gradients`, `train_on_batch`,
// or `strategy.run(...)`.
bool TakesStep(const Call& c) {
  return c.name == "tensorflow.GradientTape" || c.method == "apply_gradients" ||
         c.method == "train_on_batch" || (c.method == "run" && c.receiver);
}

// Whether one of the script's functions takes a training step, itself or through the functions
// of the script it calls (a few levels deep).
bool FunctionTrains(const ScriptModel& model, int f, int depth = 0) {
  if (depth > 3) return false;
  for (const Call& c : model.CallsIn(model.functions()[static_cast<std::size_t>(f)].node)) {
    if (TakesStep(c)) return true;
    if (const int g = model.LocalCallee(c); g >= 0 && g != f && FunctionTrains(model, g, depth + 1))
      return true;
  }
  return false;
}

// Whether a loop's body takes a training step, itself or by calling one of the script's
// tf.function steps that does (an evaluation `test_step` takes no gradient). A loop that prints a
// few elements (`for x in ds.take(3)`) is not training.
bool TrainsInBody(const ScriptModel& model, Node loop) {
  for (const Call& c : model.CallsIn(loop.field("body"))) {
    if (TakesStep(c)) return true;
    if (const int f = model.LocalCallee(c);
        f >= 0 && model.functions()[static_cast<std::size_t>(f)].tf_function &&
        FunctionTrains(model, f))
      return true;
  }
  return false;
}

// What a for loop iterates, through the wrappers that only number or show the elements
// (`enumerate(ds)`, `iter(ds)`, `tqdm(ds)`).
Node Iterated(const ScriptModel& model, Node iterable) {
  for (int depth = 0; depth < 4 && iterable.is("call"); ++depth) {
    const Call* call = model.CallAt(iterable);
    if (call == nullptr || call->receiver || call->args.empty()) break;
    const std::string_view callee = call->callee.text();
    if (callee != "enumerate" && callee != "iter" && !callee.ends_with("tqdm")) break;
    iterable = call->args[0];
  }
  return iterable;
}

// The datasets calls hand to training: the first argument (or `x=`) of Keras `fit`, what
// `strategy.experimental_distribute_dataset` takes, what the function given to
// `strategy.distribute_datasets_from_function` returns.
std::vector<TrainingInput> CallTrainingInputs(const ScriptModel& model) {
  std::vector<TrainingInput> out;
  for (const Call& c : model.calls()) {
    if (c.method == "fit") {
      if (!c.args.empty()) out.push_back({c.args[0]});
      if (Node x = c.Keyword("x")) out.push_back({x});
    } else if (c.method == "experimental_distribute_dataset" && !c.args.empty()) {
      out.push_back({c.args[0], /*prefetched=*/true});
    } else if (c.method == "distribute_datasets_from_function" && !c.args.empty() &&
               c.args[0].is("identifier")) {
      const int f = model.FunctionIn(c.args[0].text(), c.function);
      if (f >= 0) {
        for (Node r : model.Returns(f)) out.push_back({r});
      }
    }
  }
  return out;
}

void InsertChain(const ScriptModel& model, Node end, std::unordered_set<const void*>& calls) {
  for (const Call* c : model.Chain(end)) calls.insert(c->node.id());
}

}  // namespace

TfDataFacts TfDataFacts::Of(const ScriptModel& model) {
  TfDataFacts facts;
  facts.training_inputs = CallTrainingInputs(model);
  // Each for loop once: what one that trains iterates is a training input; what the others
  // iterate is only looked at.
  for (Node loop : model.for_loops()) {
    const Node iterated = Iterated(model, loop.field("right"));
    if (TrainsInBody(model, loop)) {
      facts.training_inputs.push_back({iterated});
    } else {
      InsertChain(model, iterated, facts.looked_at_pipeline_calls);
    }
  }
  std::vector<Node> ends;
  for (const TrainingInput& input : facts.training_inputs) ends.push_back(input.dataset);
  for (int f = 0; f < static_cast<int>(model.functions().size()); ++f) {
    for (Node r : model.Returns(f)) ends.push_back(r);
  }
  for (Node end : ends) {
    if (model.KindOf(end) == Kind::kDataset) InsertChain(model, end, facts.training_pipeline_calls);
  }
  return facts;
}

}  // namespace tpudoctor::script
