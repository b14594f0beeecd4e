// Syntax: a Python source parsed by tree-sitter (its Python grammar) and kept as flat trees, and
// Node, a view of one node of a tree with the text it spans. Everything the script rules know of
// the code comes from this tree: never from matching the text.
//
// Broken code still parses: tree-sitter marks what it could not read with ERROR and MISSING nodes
// and keeps the sound parts, so a snippet or a notebook cell mid-edit still gets findings there.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tpudoctor/support/result.h"

namespace tpudoctor::script {

// The grammar's node types the model's hot paths compare, as a bit per symbol resolved once:
// testing a node's symbol is cheaper than comparing its type name.
enum class NodeType : std::uint8_t {
  kAssignment,
  kBlock,
  kCall,
  kClassDefinition,
  kForStatement,
  kFunctionDefinition,
  kIdentifier,
  kImportFromStatement,
  kImportStatement,
  kLambda,
  kNamedExpression,
  kParenthesizedExpression,
  kReturnStatement,
  kWhileStatement,
  kWithStatement,
  kCount,
};

// A parsed tree kept flat: tree-sitter's visible nodes in pre-order, each with its parent, its
// next sibling and the end of its subtree, so that walking, asking for a field, a child or a
// parent is an array step rather than a descent from the root (tree-sitter's own node API
// recomputes positions and field maps on every call, which dominated a large script's check).
// Built once from tree-sitter's tree, which is then freed.
struct SyntaxTree {
  static constexpr std::uint32_t kNone = UINT32_MAX;
  enum Flags : std::uint8_t { kNamed = 1, kMissing = 2, kHasError = 4 };
  struct Entry {
    std::uint32_t begin = 0, end = 0;  // offsets in the whole file
    std::uint32_t parent = kNone;
    std::uint32_t next_sibling = kNone;
    std::uint32_t subtree_end = 0;  // one past the last node of its subtree
    std::uint16_t symbol = 0;       // the grammar's public symbol (ERROR is 65535)
    std::uint8_t field = 0;         // the field it fills in its parent, 0 for none
    std::uint8_t flags = 0;
  };
  std::vector<Entry> nodes;  // nodes[0] is the `module`
  std::string_view text;     // the whole file
  // The grammar's symbol names, by symbol (the Python grammar's, shared by every tree).
  std::span<const std::string_view> symbol_names;
  // By symbol, a bit per NodeType the symbol is.
  std::span<const std::uint16_t> symbol_types;
};

class Node {
 public:
  Node() = default;
  Node(const SyntaxTree* tree, std::uint32_t index) : tree_(tree), index_(index) {}

  bool null() const { return tree_ == nullptr; }
  explicit operator bool() const { return !null(); }
  std::string_view type() const {
    if (null()) return {};
    const std::uint16_t symbol = entry().symbol;
    if (symbol < tree_->symbol_names.size()) return tree_->symbol_names[symbol];
    return symbol == UINT16_MAX ? "ERROR" : "_ERROR";  // tree-sitter's two built-in error symbols
  }
  // Inline, so that comparing with a literal compiles to a few instructions.
  [[gnu::always_inline]] bool is(std::string_view type) const {
    const std::string_view name = this->type();
    // The literal's length, known where this is inlined, lets the compiler compare in place.
    return name.size() == type.size() && std::memcmp(name.data(), type.data(), type.size()) == 0;
  }
  [[gnu::always_inline]] bool is(NodeType type) const {
    if (null()) return false;
    const std::uint16_t symbol = entry().symbol;
    return symbol < tree_->symbol_types.size() &&
           (tree_->symbol_types[symbol] >> static_cast<unsigned>(type) & 1u) != 0;
  }
  // The source text the node spans.
  std::string_view text() const;
  // Offsets in the whole file.
  std::uint32_t begin() const { return null() ? 0 : entry().begin; }
  std::uint32_t end() const { return null() ? 0 : entry().end; }

  // The first child filling the grammar's field `name` (tree-sitter's child_by_field_name).
  Node field(std::string_view name) const;
  Node parent() const { return null() ? Node() : At(entry().parent); }
  std::uint32_t named_count() const;
  Node named(std::uint32_t i) const;
  std::uint32_t count() const;
  Node child(std::uint32_t i) const;
  // A named node (not an anonymous token such as `(` or `import`).
  bool is_named() const { return !null() && (entry().flags & SyntaxTree::kNamed) != 0; }
  // Whether the node or one below it is an ERROR or MISSING node.
  bool has_error() const { return !null() && (entry().flags & SyntaxTree::kHasError) != 0; }
  bool broken() const {
    return is("ERROR") || (!null() && (entry().flags & SyntaxTree::kMissing) != 0);
  }

  // A key for maps: equal for the same node of the same tree.
  const void* id() const { return null() ? nullptr : &entry(); }
  bool operator==(const Node& other) const {
    return tree_ == other.tree_ && (null() || index_ == other.index_);
  }

  // For Walk.
  const SyntaxTree* tree() const { return tree_; }
  std::uint32_t index() const { return index_; }

 private:
  const SyntaxTree::Entry& entry() const { return tree_->nodes[index_]; }
  Node At(std::uint32_t i) const { return i == SyntaxTree::kNone ? Node() : Node(tree_, i); }
  // The children, in order: FirstChild, then each one's NextSibling, until null.
  Node FirstChild() const;
  Node NextSibling() const;
  const SyntaxTree* tree_ = nullptr;
  std::uint32_t index_ = 0;
};

// Told of a source's trees while it is parsed (Syntax::Parse), so that what is built from them
// overlaps the parsing of the rest: each tree once it and every tree before it are parsed, in
// source order, on the thread that called Parse.
class TreeListener {
 public:
  virtual ~TreeListener() = default;
  // `root`: the tree's `module`. It lives as long as the Syntax that Parse returns.
  virtual void Parsed(Node root) = 0;
  // The trees told so far are dropped (the file is read again in one piece; their nodes are
  // no longer valid): what was built from them must be too.
  virtual void Restart() = 0;
};

// A parsed source. The text must outlive the trees (nodes view it).
//
// A large file is parsed in parts on several threads: cut before top-level statements
// (TopLevelStatementStarts), each part parsed by its own parser as a text of its own (offsets are
// made offsets in the whole file). Each part is a `module` tree; `roots()` lists them in order. A
// file whose parts do not all parse cleanly is parsed again in one piece, so broken code is read
// exactly as tree-sitter reads the whole file.
class Syntax {
 public:
  // Parses `text` (UTF-8 Python), in at most `max_parts` parts (0: one per hardware thread).
  // Errors: the parser gave up (it is given a few seconds, so that no input can hold the tool),
  // or the code is nested deeper than Python itself accepts. A listener may have been told of
  // trees of a parse that then failed: it must not be used after an error.
  static Result<Syntax> Parse(std::string_view text, unsigned max_parts = 0,
                              TreeListener* listener = nullptr);

  // The module trees, in source order: one, or one per part of a large file.
  std::vector<Node> roots() const;
  // Whether any tree has ERROR or MISSING nodes.
  bool has_error() const;
  std::string_view text() const { return text_; }

 private:
  using Trees = std::vector<std::unique_ptr<SyntaxTree>>;
  static Result<Trees> ParseParts(std::string_view text, const std::vector<std::uint32_t>& cuts,
                                  TreeListener* listener);
  std::string_view text_;
  Trees trees_;
};

// Calls `visit(node, depth)` for every named node under `root`, in source order, without
// recursion (a file nested thousands deep cannot overflow the stack). `visit` returns false to
// skip the node's children.
template <typename Visit>
void Walk(Node root, Visit&& visit);
// Walk over every tree of a parsed source, in order (depth 0 is each tree's `module`).
template <typename Visit>
void Walk(const Syntax& syntax, Visit&& visit) {
  for (Node root : syntax.roots()) Walk(root, visit);
}

}  // namespace tpudoctor::script

#include "src/script/syntax_walk.inc"
