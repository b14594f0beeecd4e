// ScriptModel: what the script rules read about a parsed Python file, computed once. Names are
// resolved through the file's imports to canonical dotted paths (`tf.data.Dataset.map` is
// `tensorflow.data.Dataset.map` whatever alias the file used; data/python/modules.tsv folds
// re-exports), and values are followed through simple assignments to the call that made them,
// enough to know that `ds.batch(32)` batches a tf.data dataset or that `loader` is a DataLoader.
//
// It is a syntactic model: no type inference beyond data/python/api.tsv, no interprocedural
// analysis beyond a local function's return values. Rules built on it fire only on what the code
// shows.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/script/script_text.h"
#include "src/script/syntax.h"

namespace tpudoctor::script {

// The kinds of value the rules follow (data/python/api.tsv names them).
enum class Kind : std::uint8_t {
  kUnknown,
  kDataset,        // tf.data.Dataset
  kLoader,         // torch.utils.data.DataLoader
  kStrategy,       // a tf.distribute strategy for TPUs
  kKerasModel,     // a Keras model
  kArrayFromFile,  // a NumPy array read from a file
};

struct Function {
  Node node;  // function_definition or lambda
  std::uint32_t begin = 0,
                end = 0;  // the bytes it spans (node's, kept: asking tree-sitter is slow)
  std::string name;
  int parent = -1;                       // the enclosing function, or -1 at module level
  Node class_node;                       // the class it is a method of, if any
  std::vector<std::string> class_bases;  // canonical names of that class's bases
  std::vector<std::string>
      decorators;  // canonical names (`functools.partial(jax.jit, ...)` is jax.jit)
  std::vector<std::string> params;
  std::vector<std::string> static_params;  // jax.jit's static_argnums / static_argnames
  // Traced by JAX (jax.jit, pmap, ...): Python control flow on its array arguments fails.
  bool jax_traced = false;
  // jax.jit, pmap and nnx.jit trace every argument not marked static; equinox.filter_jit traces
  // only the arguments that are arrays when called (other values are static): false when only
  // filter_jit traces it.
  bool traces_every_argument = false;
  bool tf_function = false;  // decorated with tf.function
};

struct Call {
  Node node;  // the `call`
  std::uint32_t begin = 0,
                end = 0;  // the bytes it spans (node's, kept: asking tree-sitter is slow)
  Node callee;            // its `function` field
  std::string name;       // canonical dotted name when the callee resolves through imports, else ""
  std::string method;     // the last name of the callee (`map` of `ds.map`, `print`)
  Node receiver;          // `ds` of `ds.map(...)`; null for a plain name
  std::vector<Node> args;                                 // positional
  std::vector<std::pair<std::string_view, Node>> kwargs;  // keyword=value
  bool splat = false;               // *args or **kwargs: a keyword not seen may be in them
  int function = -1;                // innermost enclosing function
  Node loop;                        // innermost for/while of that function around the call, if any
  std::vector<Node> with_contexts;  // `with X:` expressions around it, innermost last

  Node Keyword(std::string_view name) const;
};

struct Binding {
  std::string_view name;
  Node value;            // the assigned expression; null for a loop target or other binding
  Node unpacked;         // `a, (b, c) = value`: the value the name was unpacked from
  std::uint32_t at = 0;  // where the binding takes effect: the end of its assignment
  int function = -1;
};

// Hashes strings by their view, so that maps keyed by std::string are searched with a
// string_view (and std::equal_to<>) without a copy.
struct ViewHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

class ScriptModel final : public TreeListener {
 public:
  ScriptModel(const ScriptText& text, const Syntax& syntax);
  // A model built tree by tree while the text is parsed: give it to Syntax::Parse as its
  // listener, then Finish it with the Syntax that Parse returned before anything else.
  explicit ScriptModel(const ScriptText& text) : text_(&text) {}
  void Finish(const Syntax& syntax);
  void Parsed(Node root) override;
  void Restart() override;

  const ScriptText& text() const { return *text_; }
  const Syntax& syntax() const { return *syntax_; }
  const std::vector<Call>& calls() const { return calls_; }
  // The calls inside a node (its own included), in source order.
  std::span<const Call> CallsIn(Node node) const;
  const std::vector<Function>& functions() const { return functions_; }
  // The `for` statements, in source order.
  const std::vector<Node>& for_loops() const { return for_loops_; }
  // Set when the code is nested deeper than Python accepts (one line); the model is then not
  // complete and the script is refused.
  const std::string& nesting_error() const { return nesting_error_; }

  // Whether the file imports this module or one below it ("torch_xla", "jax", "tensorflow").
  bool Imports(std::string_view module) const;
  // The canonical dotted name an expression spells through the imports (`tf.float64` →
  // `tensorflow.float64`), or "" when its first name is not imported.
  std::string Canonical(Node expr) const;
  // The name under which the file imported `module` (`tf` for tensorflow), or "".
  std::string AliasOf(std::string_view module) const;

  const Call* CallAt(Node call) const;
  // The value an identifier had at a place: its last assignment before `at` in the same function,
  // else at module level. Null when it has none the model follows.
  Node ValueOf(std::string_view name, std::uint32_t at, int function) const;
  // The value an identifier is bound to where it appears (ValueOf in its own scope); null when
  // the model follows none.
  Node ValueAt(Node identifier) const;
  // The value an identifier was unpacked from where it appears (`(x, y), _ = load_data()` gives
  // the call for x and y), or null.
  Node UnpackedAt(Node identifier) const;
  // The default of the parameter an identifier names, when every call of its function in the
  // file leaves the parameter out (`def batches(ds, batch_size=1)` called as `batches(ds)`):
  // null when a call passes it (or may, through *args / **kwargs), when nothing here calls the
  // function, for a method, and for a name that is not such a parameter.
  Node DefaultWhenOmitted(Node identifier) const;
  // The same, but also when nothing here calls the function (a library function: its callers
  // get the default unless they pass the parameter).
  Node DefaultUnlessPassed(Node identifier) const;
  // An identifier's bound value (ValueAt); any other expression as it is.
  Node Resolve(Node expr) const { return expr.is(NodeType::kIdentifier) ? ValueAt(expr) : expr; }
  // What an expression evaluates to, following names, calls and local functions' returns.
  Kind KindOf(Node expr) const;
  // The calls that built a value, from its source to the expression itself (`ds.map(f).batch(8)`
  // → [from_tensor_slices, map, batch]), following names and local functions' returns.
  std::vector<const Call*> Chain(Node expr) const;
  // The def of this file a bare name refers to where it appears, as Python scopes it: the
  // innermost function around it (then its parents, then the module) that defines or binds the
  // name decides; -1 when that is a parameter or assignment, or nothing here defines the name.
  // Methods are never reached by a bare name.
  int FunctionNamed(Node identifier) const;
  // The same, for a name used in `scope` (a function index; -1: module level).
  int FunctionIn(std::string_view name, int scope) const;
  // The def of this file a call calls by its plain name (`make_dataset(...)`), or -1.
  int LocalCallee(const Call& call) const;
  // Return-statement values of a function (-1: module level), in order.
  const std::vector<Node>& Returns(int function) const;
  // Whether `function` or a function it is nested in satisfies `pred` (false at module level).
  template <typename Pred>
  bool InFunctionWhere(int function, Pred&& pred) const {
    for (int f = function; f >= 0; f = functions_[f].parent) {
      if (pred(functions_[f])) return true;
    }
    return false;
  }
  // The innermost function whose body holds `node`, or -1.
  int FunctionOf(Node node) const;

  // Where a node is, as the user sees it.
  Position Locate(Node node) const { return text_->Locate(node.begin()); }

 private:
  // DefaultWhenOmitted and DefaultUnlessPassed: whether a call must be seen leaving it out.
  Node ParameterDefault(Node identifier, bool needs_a_call) const;
  void AddTree(Node root);
  // The indices over what the trees added (by scope, by name, the traced functions).
  void Index();
  void AddImport(Node statement);
  // A name the frameworks' guides always import a module or class as
  // (data/python/conventional_aliases.tsv: `tf`, `jnp`, `xm`, `DataLoader`), called through but
  // bound nowhere in the file (a snippet without its imports), is imported as it: added to the
  // imports, and the calls through it named again.
  void ImportConventionalAliases();
  // Whether the file binds a name anywhere: an import, an assignment or loop target, a
  // parameter, a def.
  bool Binds(std::string_view name) const;
  // `decorated`: the def's parent node (a decorated_definition when it has decorators).
  void AddFunction(Node def, Node decorated, int parent, Node class_node);
  void AddCall(Node call, const std::vector<Node>& ancestors, int function);
  void AddBindings(Node statement, int function);
  // The binding of `name` in effect at `at` (ValueOf's rule), or null.
  const Binding* BindingOf(std::string_view name, std::uint32_t at, int function) const;
  void AddUnpacked(Node pattern, Node value, std::uint32_t at, int function);
  // Sets the kind of every call once the model is complete, so that rules only read the model
  // (and may run side by side).
  void KindCalls();
  // KindCalls' steps: an expression's kind, setting the kinds of the calls it follows; a call's.
  Kind FollowKind(Node expr, int depth);
  Kind CallKind(const Call& call, int depth);
  void ChainInto(Node expr, int depth, std::vector<const Call*>& out) const;
  int FunctionAt(std::uint32_t begin, std::uint32_t end) const;

  const ScriptText* text_;
  const Syntax* syntax_ = nullptr;
  std::vector<const SyntaxTree*> trees_;  // the trees added, in order
  // Bound name → canonical module path.
  std::unordered_map<std::string, std::string, ViewHash, std::equal_to<>> imports_;
  bool star_import_ = false;  // `from x import *` somewhere
  std::vector<Function> functions_;
  std::vector<Call> calls_;
  std::vector<Binding> bindings_;  // in the order the walk met them
  struct Scoped {                  // a name in one function (-1: module level)
    std::string_view name;
    int function;
    bool operator==(const Scoped&) const = default;
  };
  struct ScopedHash {
    std::size_t operator()(const Scoped& s) const {
      return std::hash<std::string_view>()(s.name) ^
             (static_cast<std::size_t>(s.function) * 0x9e3779b97f4a7c15u);
    }
  };
  // The bindings of each name in each scope (indices into bindings_, in order).
  std::unordered_map<Scoped, std::vector<std::size_t>, ScopedHash> bindings_by_scope_;
  // By call (calls_' index): its kind, set by KindCalls. While it runs, a call being followed is
  // kFollowing, so that a call returning its own value (recursion) stops there.
  enum class KindState : std::uint8_t { kUnset, kFollowing, kSet };
  std::vector<Kind> call_kinds_;
  std::vector<KindState> call_kind_states_;
  std::vector<std::vector<Node>> returns_;  // per function (index + 1; 0 is module level)
  // The last def of each name in each scope (methods left out: a bare name never reaches them).
  std::unordered_map<Scoped, int, ScopedHash> function_by_scope_;
  std::vector<Node> for_loops_;
  std::string nesting_error_;
};

// The expression inside any parentheses around it (`((x))` gives `x`).
Node Unparenthesize(Node node);
// Literal values, or nullopt when the node is not that literal.
std::optional<bool> BoolLiteral(Node node);
std::optional<std::int64_t> IntLiteral(Node node);
std::optional<std::string> StringLiteral(Node node);
bool IsNone(Node node);

}  // namespace tpudoctor::script
