#include "src/script/script_model.h"

#include <algorithm>
#include <unordered_map>

#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor::script {
namespace {

// Python's own parser refuses more than 200 nested parentheses (the tokenizer's MAXLEVEL) and 100
// indentation levels (MAXINDENT). A parenthesis costs a few tree levels, so a tree deeper than
// kMaxTreeDepth is not Python that runs; indentation is counted as nested `block` nodes.
constexpr int kMaxParentheses = 200;
constexpr int kMaxTreeDepth = 1000;
constexpr int kMaxIndentLevels = 100;

std::string NestingError() {
  return "its code is nested deeper than Python accepts (" + std::to_string(kMaxIndentLevels) +
         " indentation levels, " + std::to_string(kMaxParentheses) + " nested parentheses)";
}

// How far KindOf and Chain follow names and calls: a real pipeline is a few assignments long;
// the bound keeps `a = b; b = a` from looping.
constexpr int kMaxFollow = 32;

// data/python/modules.tsv, longest alias first.
const std::vector<std::pair<std::string, std::string>>& ModuleAliases() {
  static const auto* aliases = [] {
    auto* v = new std::vector<std::pair<std::string, std::string>>();
    for (const auto& cols : EmbeddedTsvRows("data/python/modules.tsv")) {
      if (cols.size() == 2) v->emplace_back(std::string(cols[0]), std::string(cols[1]));
    }
    std::ranges::sort(*v,
                      [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    return v;
  }();
  return *aliases;
}

// data/python/conventional_aliases.tsv: name → module.
const std::unordered_map<std::string, std::string, ViewHash, std::equal_to<>>&
ConventionalAliases() {
  static const auto* aliases = [] {
    auto* m = new std::unordered_map<std::string, std::string, ViewHash, std::equal_to<>>();
    for (const auto& cols : EmbeddedTsvRows("data/python/conventional_aliases.tsv")) {
      if (cols.size() == 2) m->emplace(std::string(cols[0]), std::string(cols[1]));
    }
    return m;
  }();
  return *aliases;
}

// The identifier an attribute chain starts from (`tf` of `tf.data.Dataset.map`), or null.
Node RootName(Node expr) {
  expr = Unparenthesize(expr);
  while (expr.is("attribute")) expr = Unparenthesize(expr.field("object"));
  return expr.is(NodeType::kIdentifier) ? expr : Node();
}

std::optional<Kind> ParseKind(std::string_view name) {
  if (name == "dataset") return Kind::kDataset;
  if (name == "loader") return Kind::kLoader;
  if (name == "strategy") return Kind::kStrategy;
  if (name == "keras-model") return Kind::kKerasModel;
  if (name == "array-from-file") return Kind::kArrayFromFile;
  return std::nullopt;
}

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kDataset:
      return "dataset";
    case Kind::kLoader:
      return "loader";
    case Kind::kStrategy:
      return "strategy";
    case Kind::kKerasModel:
      return "keras-model";
    case Kind::kArrayFromFile:
      return "array-from-file";
    case Kind::kUnknown:
      break;
  }
  return "unknown";
}

// data/python/api.tsv: callable → kind of its result.
using KindTable = std::unordered_map<std::string, Kind, ViewHash, std::equal_to<>>;

const KindTable& ReturnKinds() {
  static const auto* table = [] {
    auto* t = new KindTable();
    for (const auto& cols : EmbeddedTsvRows("data/python/api.tsv")) {
      if (cols.size() != 2) continue;
      if (auto kind = ParseKind(cols[1])) t->emplace(std::string(cols[0]), *kind);
    }
    return t;
  }();
  return *table;
}

std::string FoldAliases(std::string name) {
  for (const auto& [alias, canonical] : ModuleAliases()) {
    if (name == alias ||
        (name.size() > alias.size() && name.starts_with(alias) && name[alias.size()] == '.')) {
      return canonical + name.substr(alias.size());
    }
  }
  return name;
}

bool IsLoop(Node n) { return n.is(NodeType::kForStatement) || n.is(NodeType::kWhileStatement); }
bool IsFunction(Node n) { return n.is(NodeType::kFunctionDefinition) || n.is(NodeType::kLambda); }
// The identifier a parameter binds, or null (`*args`, a tuple pattern).
Node ParamIdentifier(Node p) {
  if (p.is("identifier")) return p;
  if (p.is("default_parameter") || p.is("typed_default_parameter")) {
    Node name = p.field("name");
    return name.is("identifier") ? name : Node();
  }
  if (p.is("typed_parameter") && p.named_count() > 0 && p.named(0).is("identifier")) {
    return p.named(0);
  }
  return {};
}

// jax.jit's `static_argnames=("a", ...)` / `static_argnums=(1, ...)` (pmap's
// `static_broadcasted_argnums`): the parameters JAX does not trace.
void AddStaticParams(std::string_view key, Node value, Function& f) {
  std::vector<Node> items;
  if (value.is("tuple") || value.is("list")) {
    for (std::uint32_t j = 0; j < value.named_count(); ++j) items.push_back(value.named(j));
  } else {
    items.push_back(value);
  }
  for (Node item : items) {
    if (key == "static_argnames") {
      if (auto s = StringLiteral(item)) f.static_params.push_back(*s);
    } else if (key == "static_argnums" || key == "static_broadcasted_argnums") {
      if (auto n = IntLiteral(item); n && *n >= 0 && *n < std::ssize(f.params)) {
        f.static_params.push_back(f.params[static_cast<std::size_t>(*n)]);
      }
    }
  }
}

// The function transforms the model knows, by the canonical name of a decorator or of a call
// given the function (`jax.jit(step)`).
enum class Transform { kNone, kJaxEveryArgument, kJaxArraysOnly, kTfFunction };

Transform TransformOf(std::string_view name) {
  if (name == "jax.jit" || name == "jax.pmap" || name == "flax.nnx.jit") {
    return Transform::kJaxEveryArgument;
  }
  if (name == "equinox.filter_jit") return Transform::kJaxArraysOnly;  // non-arrays are static
  if (name == "tensorflow.function") return Transform::kTfFunction;
  return Transform::kNone;
}

void Mark(Transform t, Function& f) {
  f.jax_traced |= t == Transform::kJaxEveryArgument || t == Transform::kJaxArraysOnly;
  f.traces_every_argument |= t == Transform::kJaxEveryArgument;
  f.tf_function |= t == Transform::kTfFunction;
}

}  // namespace

Node Unparenthesize(Node n) {
  while (n.is(NodeType::kParenthesizedExpression) && n.named_count() == 1) n = n.named(0);
  return n;
}

Node Call::Keyword(std::string_view name) const {
  for (const auto& [k, v] : kwargs) {
    if (k == name) return v;
  }
  return {};
}

std::optional<bool> BoolLiteral(Node node) {
  node = Unparenthesize(node);
  if (node.is("true")) return true;
  if (node.is("false")) return false;
  return std::nullopt;
}

std::optional<std::int64_t> IntLiteral(Node node) {
  node = Unparenthesize(node);
  if (!node.is("integer")) return std::nullopt;
  std::string digits;
  for (char c : node.text()) {
    if (c != '_') digits += c;
  }
  return ParseInt64(digits);
}

std::optional<std::string> StringLiteral(Node node) {
  node = Unparenthesize(node);
  if (!node.is("string")) return std::nullopt;
  std::string out;
  for (std::uint32_t i = 0; i < node.named_count(); ++i) {
    Node part = node.named(i);
    if (part.is("interpolation")) return std::nullopt;  // an f-string with a value in it
    if (part.is("string_content")) out += part.text();
  }
  return out;
}

bool IsNone(Node node) { return Unparenthesize(node).is("none"); }

ScriptModel::ScriptModel(const ScriptText& text, const Syntax& syntax) : text_(&text) {
  Finish(syntax);
}

void ScriptModel::Parsed(Node root) {
  trees_.push_back(root.tree());
  AddTree(root);
}

void ScriptModel::Restart() { *this = ScriptModel(*text_); }

void ScriptModel::Finish(const Syntax& syntax) {
  const std::vector<Node> roots = syntax.roots();
  // Trees told of (Parsed) must be the syntax's first ones; otherwise it is built again.
  bool told_first = trees_.size() <= roots.size();
  for (std::size_t i = 0; told_first && i < trees_.size(); ++i) {
    told_first = roots[i].tree() == trees_[i];
  }
  if (!told_first) Restart();
  syntax_ = &syntax;
  for (std::size_t i = trees_.size(); i < roots.size(); ++i) Parsed(roots[i]);
  Index();
  KindCalls();
}

void ScriptModel::AddTree(Node root) {
  // One walk; `ancestors[d]` is the node at depth d on the path to the node visited.
  std::vector<Node> ancestors;
  std::vector<int> function_at;  // innermost function index at each depth
  std::vector<int> blocks;       // `block` nodes on the path, at each depth
  Walk(root, [&](Node n, int depth) {
    if (depth > kMaxTreeDepth) {
      nesting_error_ = NestingError();
      return false;
    }
    ancestors.resize(depth);
    function_at.resize(depth);
    blocks.resize(depth);
    const int function = depth == 0 ? -1 : function_at[depth - 1];
    ancestors.push_back(n);
    function_at.push_back(function);
    blocks.push_back((depth > 0 ? blocks[depth - 1] : 0) + (n.is(NodeType::kBlock) ? 1 : 0));
    if (blocks.back() > kMaxIndentLevels) {
      nesting_error_ = NestingError();
      return false;
    }
    if (n.is(NodeType::kForStatement)) for_loops_.push_back(n);
    if (n.is(NodeType::kImportStatement) || n.is(NodeType::kImportFromStatement)) {
      AddImport(n);
    } else if (IsFunction(n)) {
      Node class_node;
      for (int d = depth - 1; d >= 0; --d) {
        if (IsFunction(ancestors[d])) break;
        if (ancestors[d].is(NodeType::kClassDefinition)) {
          class_node = ancestors[d];
          break;
        }
      }
      AddFunction(n, depth > 0 ? ancestors[depth - 1] : Node(), function, class_node);
      function_at.back() = static_cast<int>(functions_.size()) - 1;
    } else if (n.is(NodeType::kCall)) {
      AddCall(n, ancestors, function);
    } else if (n.is(NodeType::kAssignment) || n.is(NodeType::kForStatement) ||
               n.is(NodeType::kNamedExpression)) {
      AddBindings(n, function);
    } else if (n.is(NodeType::kReturnStatement) && n.named_count() > 0) {
      if (returns_.size() < functions_.size() + 1) returns_.resize(functions_.size() + 1);
      returns_[function + 1].push_back(n.named(0));
    }
    return true;
  });
}

void ScriptModel::Index() {
  for (std::size_t i = 0; i < bindings_.size(); ++i) {
    bindings_by_scope_[{bindings_[i].name, bindings_[i].function}].push_back(i);
  }
  for (std::size_t i = 0; i < functions_.size(); ++i) {
    const Function& f = functions_[i];
    if (f.node.is(NodeType::kFunctionDefinition)) {
      if (!f.class_node) {
        function_by_scope_[{f.node.field("name").text(), f.parent}] = static_cast<int>(i);
      }
    }
  }
  ImportConventionalAliases();
  // Functions passed to jax.jit (`step = jax.jit(train_step)`) are traced like decorated ones.
  for (const Call& c : calls_) {
    if (c.args.empty() || !c.args[0].is("identifier")) continue;
    const Transform t = TransformOf(c.name);
    if (t == Transform::kNone) continue;
    const int f = FunctionIn(c.args[0].text(), c.function);
    if (f < 0) continue;
    Mark(t, functions_[f]);
    // `jax.jit(step, static_argnums=(1,))` leaves those parameters untraced, as the decorator does.
    if (t != Transform::kTfFunction) {
      for (const auto& [key, value] : c.kwargs) AddStaticParams(key, value, functions_[f]);
    }
  }
}

bool ScriptModel::Binds(std::string_view name) const {
  // A function's parameters are among its bindings (AddFunction); its own name is not.
  return imports_.contains(name) ||
         std::any_of(bindings_.begin(), bindings_.end(),
                     [&](const Binding& b) { return b.name == name; }) ||
         std::any_of(functions_.begin(), functions_.end(),
                     [&](const Function& f) { return f.name == name; });
}

void ScriptModel::ImportConventionalAliases() {
  if (star_import_) return;  // `from x import *` may bind any of them
  const auto& aliases = ConventionalAliases();
  std::vector<std::string> added, bound;
  // A name used as a module (`tf.data...(...)`, `@tf.function`) and bound nowhere. Each name is
  // looked for once (a file may use a bound `tf` thousands of times).
  auto consider = [&](std::string_view name) {
    auto alias = aliases.find(name);
    if (alias == aliases.end() || std::find(added.begin(), added.end(), name) != added.end() ||
        std::find(bound.begin(), bound.end(), name) != bound.end()) {
      return;
    }
    if (Binds(name)) {
      bound.emplace_back(name);
      return;
    }
    imports_.emplace(std::string(name), alias->second);
    added.emplace_back(name);
  };
  for (const Call& c : calls_) {
    const Node root = RootName(c.callee);
    if (c.name.empty() && root) consider(root.text());
  }
  // Decorators and class bases the model could not resolve are kept as written (`tf.function`).
  auto written_root = [](const std::string& dotted) {
    const std::size_t dot = dotted.find('.');
    return dot == std::string::npos ? std::string_view() : std::string_view(dotted).substr(0, dot);
  };
  for (const Function& f : functions_) {
    for (const std::string& d : f.decorators) consider(written_root(d));
  }
  if (added.empty()) return;
  for (Call& c : calls_) {
    if (c.name.empty()) c.name = Canonical(c.callee);
  }
  // Whether `dotted` was written through an added name; rewrites it to the canonical name.
  auto resolve = [&](std::string& dotted) {
    const std::string_view root = written_root(dotted);
    if (root.empty() || std::find(added.begin(), added.end(), root) == added.end()) return false;
    dotted = FoldAliases(imports_.find(root)->second + dotted.substr(root.size()));
    return true;
  };
  for (Function& f : functions_) {
    for (std::string& d : f.decorators) {
      if (resolve(d)) Mark(TransformOf(d), f);
    }
    for (std::string& base : f.class_bases) resolve(base);
  }
}

void ScriptModel::AddImport(Node statement) {
  std::string from;
  if (statement.is("import_from_statement")) {
    Node module = statement.field("module_name");
    if (!module.is("dotted_name")) return;  // a relative import names the user's own code
    from = std::string(module.text()) + ".";
  }
  // The imported names: every dotted_name / aliased_import after the `import` keyword (the
  // module of a from-import comes before it). tree-sitter 0.20's field-of-child lookup names only
  // the first of several, so the children are read by position.
  bool after_import = statement.is("import_statement");
  for (std::uint32_t i = 0; i < statement.count(); ++i) {
    Node name = statement.child(i);
    if (name.is("import")) {
      after_import = true;
      continue;
    }
    if (!after_import) continue;
    if (name.is("wildcard_import")) {
      star_import_ = true;
    } else if (name.is("aliased_import")) {
      imports_[std::string(name.field("alias").text())] =
          FoldAliases(from + std::string(name.field("name").text()));
    } else if (name.is("dotted_name")) {
      const std::string dotted(name.text());
      if (from.empty()) {
        // `import a.b.c` binds `a`.
        const std::string first = dotted.substr(0, dotted.find('.'));
        imports_[first] = first;
      } else {
        imports_[dotted.substr(dotted.rfind('.') + 1)] = FoldAliases(from + dotted);
      }
    }
  }
}

void ScriptModel::AddFunction(Node def, Node decorated, int parent, Node class_node) {
  Function f;
  f.node = def;
  f.begin = def.begin();
  f.end = def.end();
  f.parent = parent;
  f.class_node = class_node;
  f.name = std::string(def.field("name").text());
  if (class_node) {
    Node bases = class_node.field("superclasses");
    for (std::uint32_t i = 0; i < bases.named_count(); ++i) {
      std::string base = Canonical(bases.named(i));
      f.class_bases.push_back(base.empty() ? std::string(bases.named(i).text()) : base);
    }
  }
  Node params = def.field("parameters");
  const int index = static_cast<int>(functions_.size());
  for (std::uint32_t i = 0; i < params.named_count(); ++i) {
    Node name = ParamIdentifier(params.named(i));
    if (!name) continue;
    f.params.emplace_back(name.text());
    // A parameter shadows module-level names of the same spelling inside the function.
    bindings_.push_back({name.text(), {}, {}, def.begin(), index});
  }
  if (decorated.is("decorated_definition")) {
    for (std::uint32_t i = 0; i < decorated.named_count(); ++i) {
      Node d = decorated.named(i);
      if (!d.is("decorator") || d.named_count() == 0) continue;
      Node expr = d.named(0);
      Node call_args;
      if (expr.is("call")) {
        call_args = expr.field("arguments");
        std::string callee = Canonical(expr.field("function"));
        // @functools.partial(jax.jit, static_argnums=...) decorates with jax.jit.
        if ((callee == "functools.partial") && call_args.named_count() > 0) {
          expr = call_args.named(0);
        } else {
          expr = expr.field("function");
        }
      }
      std::string name = Canonical(expr);
      if (name.empty()) name = std::string(expr.text());
      for (std::uint32_t k = 0; k < call_args.named_count(); ++k) {
        Node kw = call_args.named(k);
        if (kw.is("keyword_argument"))
          AddStaticParams(kw.field("name").text(), kw.field("value"), f);
      }
      Mark(TransformOf(name), f);
      f.decorators.push_back(std::move(name));
    }
  }
  functions_.push_back(std::move(f));
}

void ScriptModel::AddCall(Node call, const std::vector<Node>& ancestors, int function) {
  Call c;
  c.node = call;
  c.begin = call.begin();
  c.end = call.end();
  c.callee = Unparenthesize(call.field("function"));
  c.function = function;
  c.name = Canonical(c.callee);
  if (c.callee.is("attribute")) {
    c.method = std::string(c.callee.field("attribute").text());
    c.receiver = c.callee.field("object");
  } else if (c.callee.is("identifier")) {
    c.method = std::string(c.callee.text());
  }
  Node args = call.field("arguments");
  for (std::uint32_t i = 0; i < args.named_count(); ++i) {
    Node a = args.named(i);
    if (a.is("keyword_argument")) {
      c.kwargs.emplace_back(a.field("name").text(), a.field("value"));
    } else if (a.is("list_splat") || a.is("dictionary_splat")) {
      c.splat = true;
    } else if (!a.is("comment")) {
      c.args.push_back(a);
    }
  }
  // Context inside the innermost function: loops, branches inside the loop, `with` blocks.
  for (auto it = ancestors.rbegin() + 1; it != ancestors.rend(); ++it) {
    if (IsFunction(*it) || it->is(NodeType::kClassDefinition)) break;
    if (IsLoop(*it) && !c.loop) c.loop = *it;
    if (it->is(NodeType::kWithStatement)) {
      Node clause = it->named(0);
      for (std::uint32_t i = 0; clause.is("with_clause") && i < clause.named_count(); ++i) {
        Node value = clause.named(i).field("value");
        if (value.is("as_pattern") && value.named_count() > 0) value = value.named(0);
        c.with_contexts.insert(c.with_contexts.begin(), value);
      }
    }
  }
  calls_.push_back(std::move(c));
}

void ScriptModel::AddBindings(Node statement, int function) {
  if (statement.is("for_statement")) {
    // Loop targets hold elements: no value the model follows.
    Node left = statement.field("left");
    if (left.is("identifier")) bindings_.push_back({left.text(), {}, {}, left.end(), function});
    for (std::uint32_t i = 0;
         (left.is("pattern_list") || left.is("tuple_pattern")) && i < left.named_count(); ++i) {
      if (left.named(i).is("identifier")) {
        bindings_.push_back({left.named(i).text(), {}, {}, left.end(), function});
      }
    }
    return;
  }
  Node left = statement.is("named_expression") ? statement.field("name") : statement.field("left");
  Node right =
      statement.is("named_expression") ? statement.field("value") : statement.field("right");
  // `a = b = value`: the innermost right side is the value.
  while (right.is("assignment")) right = right.field("right");
  if (left.is("identifier")) {
    bindings_.push_back({left.text(), right, {}, statement.end(), function});
  } else if (left.is("pattern_list") || left.is("tuple_pattern")) {
    AddUnpacked(left, right, statement.end(), function);
  }
}

void ScriptModel::AddUnpacked(Node pattern, Node value, std::uint32_t at, int function) {
  // `a, b = x, y` binds element by element when both sides have as many plain members.
  const bool pairwise = (value.is("expression_list") || value.is("tuple")) &&
                        value.named_count() == pattern.named_count();
  for (std::uint32_t i = 0; i < pattern.named_count(); ++i) {
    Node target = pattern.named(i);
    Node element = pairwise ? value.named(i) : Node();
    if (target.is("identifier")) {
      bindings_.push_back({target.text(), element, pairwise ? Node() : value, at, function});
    } else if (target.is("tuple_pattern") || target.is("pattern_list") ||
               target.is("list_pattern")) {
      AddUnpacked(target, pairwise ? element : value, at, function);
    }
  }
}

bool ScriptModel::Imports(std::string_view module) const {
  for (const auto& [name, path] : imports_) {
    if (path == module ||
        (path.size() > module.size() && path.starts_with(module) && path[module.size()] == '.')) {
      return true;
    }
  }
  return false;
}

std::string ScriptModel::Canonical(Node expr) const {
  // a.b.c: the names from the last to the first, then the first looked up in the imports.
  std::vector<std::string_view> attributes;
  expr = Unparenthesize(expr);
  while (expr.is("attribute")) {
    attributes.push_back(expr.field("attribute").text());
    expr = Unparenthesize(expr.field("object"));
  }
  if (!expr.is("identifier")) return {};
  auto it = imports_.find(expr.text());
  if (it == imports_.end()) return {};
  if (attributes.empty()) return it->second;
  std::string name = it->second;
  for (auto a = attributes.rbegin(); a != attributes.rend(); ++a) {
    name += '.';
    name += *a;
  }
  return FoldAliases(std::move(name));
}

std::string ScriptModel::AliasOf(std::string_view module) const {
  for (const auto& [name, path] : imports_) {
    if (path == module) return name;
  }
  return {};
}

const Call* ScriptModel::CallAt(Node call) const {
  // Calls are in source order; those starting at the same byte (`f(x)(y)`) are few.
  const std::uint32_t begin = call.begin();
  auto it = std::lower_bound(calls_.begin(), calls_.end(), begin,
                             [](const Call& c, std::uint32_t b) { return c.begin < b; });
  for (; it != calls_.end() && it->begin == begin; ++it) {
    if (it->node == call) return &*it;
  }
  return nullptr;
}

const Binding* ScriptModel::BindingOf(std::string_view name, std::uint32_t at, int function) const {
  for (int scope : {function, -1}) {
    auto it = bindings_by_scope_.find({name, scope});
    if (it != bindings_by_scope_.end()) {
      // In its own scope, the last binding before the first that takes effect after `at`; a
      // module-level name seen from a function, its last binding (the function runs later).
      const Binding* found = nullptr;
      for (std::size_t i : it->second) {
        const Binding& b = bindings_[i];
        if (scope == function && b.at > at) break;
        found = &b;
      }
      if (found != nullptr) return found;
    }
    if (function == -1) break;
  }
  return nullptr;
}

Node ScriptModel::ValueOf(std::string_view name, std::uint32_t at, int function) const {
  const Binding* b = BindingOf(name, at, function);
  return b == nullptr ? Node() : b->value;
}

Node ScriptModel::DefaultWhenOmitted(Node identifier) const {
  return ParameterDefault(identifier, /*needs_a_call=*/true);
}

Node ScriptModel::DefaultUnlessPassed(Node identifier) const {
  return ParameterDefault(identifier, /*needs_a_call=*/false);
}

Node ScriptModel::ParameterDefault(Node identifier, bool needs_a_call) const {
  const std::string_view name = identifier.text();
  const Binding* b = BindingOf(name, identifier.begin(), FunctionOf(identifier));
  if (b == nullptr || b->value || b->unpacked || b->function < 0) return {};
  const Function& f = functions_[static_cast<std::size_t>(b->function)];
  if (f.class_node || !f.node.is("function_definition") || b->at != f.node.begin()) return {};
  // The parameter, and its place among those a call may fill by position (-1 after `*`).
  const Node params = f.node.field("parameters");
  Node default_value;
  int position = 0;
  for (std::uint32_t i = 0; i < params.named_count(); ++i) {
    const Node p = params.named(i);
    if (p.is("list_splat_pattern") || p.is("keyword_separator") ||
        p.is("dictionary_splat_pattern")) {
      position = -1;
      continue;
    }
    if (ParamIdentifier(p).text() == name) {
      if (!p.is("default_parameter") && !p.is("typed_default_parameter")) return {};
      default_value = p.field("value");
      break;
    }
    if (position >= 0) ++position;
  }
  if (!default_value) return {};
  int calls = 0;
  for (const Call& call : calls_) {
    if (LocalCallee(call) != b->function) continue;
    if (call.splat || call.Keyword(name) ||
        (position >= 0 && call.args.size() > static_cast<std::size_t>(position)))
      return {};
    ++calls;
  }
  return calls > 0 || !needs_a_call ? default_value : Node();
}

Node ScriptModel::UnpackedAt(Node identifier) const {
  const Binding* b = BindingOf(identifier.text(), identifier.begin(), FunctionOf(identifier));
  return b == nullptr ? Node() : b->unpacked;
}

std::span<const Call> ScriptModel::CallsIn(Node node) const {
  const std::uint32_t begin = node.begin(), end = node.end();
  auto first = std::lower_bound(calls_.begin(), calls_.end(), begin,
                                [](const Call& c, std::uint32_t b) { return c.begin < b; });
  auto last = first;
  while (last != calls_.end() && last->begin < end) ++last;
  return {first, last};
}

int ScriptModel::FunctionNamed(Node identifier) const {
  return FunctionIn(identifier.text(), FunctionOf(identifier));
}

int ScriptModel::FunctionIn(std::string_view name, int scope) const {
  for (int s = scope;; s = functions_[static_cast<std::size_t>(s)].parent) {
    if (auto it = function_by_scope_.find({name, s}); it != function_by_scope_.end()) {
      return it->second;
    }
    // A parameter or local variable of that name hides the defs around the function.
    if (s < 0 || bindings_by_scope_.contains({name, s})) return -1;
  }
}

const std::vector<Node>& ScriptModel::Returns(int function) const {
  static const std::vector<Node> kNone;
  const std::size_t slot = static_cast<std::size_t>(function + 1);
  return slot < returns_.size() ? returns_[slot] : kNone;
}

int ScriptModel::LocalCallee(const Call& call) const {
  return call.name.empty() && call.callee.is("identifier") ? FunctionIn(call.method, call.function)
                                                           : -1;
}

Node ScriptModel::ValueAt(Node identifier) const {
  return ValueOf(identifier.text(), identifier.begin(), FunctionOf(identifier));
}

int ScriptModel::FunctionOf(Node node) const { return FunctionAt(node.begin(), node.end()); }

int ScriptModel::FunctionAt(std::uint32_t begin, std::uint32_t end) const {
  // Functions are listed in source order and nest: the last one starting before `begin` that
  // contains the span, or one of its parents.
  auto after = std::upper_bound(functions_.begin(), functions_.end(), begin,
                                [](std::uint32_t b, const Function& f) { return b < f.begin; });
  int f = static_cast<int>(after - functions_.begin()) - 1;
  while (f >= 0 && !(functions_[f].begin <= begin && end <= functions_[f].end &&
                     !(functions_[f].begin == begin && functions_[f].end == end))) {
    f = functions_[f].parent;
  }
  return f;
}

Kind ScriptModel::KindOf(Node expr) const {
  // Names lead to the call that made the value, whose kind KindCalls has set.
  for (int depth = 0; depth <= kMaxFollow; ++depth) {
    expr = Unparenthesize(expr);
    if (expr.is(NodeType::kIdentifier)) {
      expr = ValueAt(expr);
      continue;
    }
    const Call* call = expr.is(NodeType::kCall) ? CallAt(expr) : nullptr;
    if (call == nullptr) return Kind::kUnknown;
    const auto i = static_cast<std::size_t>(call - calls_.data());
    return i < call_kinds_.size() ? call_kinds_[i] : Kind::kUnknown;
  }
  return Kind::kUnknown;
}

void ScriptModel::KindCalls() {
  call_kinds_.assign(calls_.size(), Kind::kUnknown);
  call_kind_states_.assign(calls_.size(), KindState::kUnset);
  // In source order: a call's receiver was mostly made by an earlier call, whose kind is then
  // set, so following stays shallow. A kind cut short by the depth limit is kept too; the order
  // is fixed, so every run sets the same kinds.
  for (const Call& call : calls_) FollowKind(call.node, 0);
}

Kind ScriptModel::FollowKind(Node expr, int depth) {
  expr = Unparenthesize(expr);
  if (!expr || depth > kMaxFollow) return Kind::kUnknown;
  if (expr.is(NodeType::kIdentifier)) {
    Node value = ValueAt(expr);
    return value ? FollowKind(value, depth + 1) : Kind::kUnknown;
  }
  const Call* call = expr.is(NodeType::kCall) ? CallAt(expr) : nullptr;
  if (call == nullptr) return Kind::kUnknown;
  const auto i = static_cast<std::size_t>(call - calls_.data());
  switch (call_kind_states_[i]) {
    case KindState::kSet:
      return call_kinds_[i];
    case KindState::kFollowing:  // the call returns its own value
      return Kind::kUnknown;
    case KindState::kUnset:
      break;
  }
  call_kind_states_[i] = KindState::kFollowing;
  call_kinds_[i] = CallKind(*call, depth);
  call_kind_states_[i] = KindState::kSet;
  return call_kinds_[i];
}

Kind ScriptModel::CallKind(const Call& call, int depth) {
  const auto& table = ReturnKinds();
  if (!call.name.empty()) {
    auto it = table.find(call.name);
    if (it != table.end()) return it->second;
  }
  if (call.receiver) {
    const Kind receiver = FollowKind(call.receiver, depth + 1);
    if (receiver != Kind::kUnknown) {
      std::string key(KindName(receiver));
      key += '.';
      key += call.method;
      auto it = table.find(key);
      if (it != table.end()) return it->second;
    }
    return Kind::kUnknown;
  }
  if (const int f = LocalCallee(call); f >= 0) {
    for (Node r : Returns(f)) {
      if (Kind k = FollowKind(r, depth + 1); k != Kind::kUnknown) return k;
    }
  }
  return Kind::kUnknown;
}

std::vector<const Call*> ScriptModel::Chain(Node expr) const {
  std::vector<const Call*> out;
  ChainInto(expr, 0, out);
  return out;
}

void ScriptModel::ChainInto(Node expr, int depth, std::vector<const Call*>& out) const {
  expr = Unparenthesize(expr);
  if (!expr || depth > kMaxFollow) return;
  if (expr.is("identifier")) {
    if (Node value = ValueAt(expr)) {
      ChainInto(value, depth + 1, out);
    }
    return;
  }
  if (!expr.is("call")) return;
  const Call* call = CallAt(expr);
  if (call == nullptr) return;
  if (call->receiver && call->name.empty()) {
    ChainInto(call->receiver, depth + 1, out);
  } else if (const int f = LocalCallee(*call); f >= 0) {
    const std::vector<Node>& returns = Returns(f);
    if (!returns.empty()) ChainInto(returns.back(), depth + 1, out);
    return;  // the local function's own calls stand for this one
  }
  out.push_back(call);
}

}  // namespace tpudoctor::script
