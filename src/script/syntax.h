// Syntax: a Python source parsed by tree-sitter (its Python grammar), and Node, a view of one node
// of the tree with the text it spans. Everything the script rules know of the code comes from this
// tree: never from matching the text.
//
// Broken code still parses: tree-sitter marks what it could not read with ERROR and MISSING nodes
// and keeps the sound parts, so a snippet or a notebook cell mid-edit still gets findings there.
#pragma once

#include <tree_sitter/api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tpudoctor/support/result.h"

namespace tpudoctor::script {

// The grammar's node types the model's hot paths compare, as symbol ids resolved once: comparing
// a node's symbol is much cheaper than comparing its type name.
enum class NodeType : std::uint8_t {
  kAssignment,
  kBlock,
  kCall,
  kClassDefinition,
  kForStatement,
  kFunctionDefinition,
  kImportFromStatement,
  kImportStatement,
  kLambda,
  kNamedExpression,
  kReturnStatement,
  kWhileStatement,
  kWithStatement,
  kCount,
};

class Node {
 public:
  Node() = default;
  // `text` is the whole file; `base` the offset in it where the node's tree begins (a part of a
  // file parsed on its own counts its bytes from its start).
  Node(TSNode node, std::string_view text, std::uint32_t base = 0)
      : node_(node), text_(text), base_(base) {}

  bool null() const { return ts_node_is_null(node_); }
  explicit operator bool() const { return !null(); }
  std::string_view type() const { return null() ? std::string_view() : ts_node_type(node_); }
  bool is(std::string_view type) const { return this->type() == type; }
  bool is(NodeType type) const;
  // The source text the node spans.
  std::string_view text() const;
  // Offsets in the whole file.
  std::uint32_t begin() const { return base_ + ts_node_start_byte(node_); }
  std::uint32_t end() const { return base_ + ts_node_end_byte(node_); }

  Node field(const char* name) const;
  // Slow on a wide tree (tree-sitter finds a parent by descending from the root): not for loops
  // over every node; walks keep their own ancestors.
  Node parent() const { return Wrap(ts_node_parent(node_)); }
  std::uint32_t named_count() const { return null() ? 0 : ts_node_named_child_count(node_); }
  Node named(std::uint32_t i) const { return Wrap(ts_node_named_child(node_, i)); }
  std::uint32_t count() const { return null() ? 0 : ts_node_child_count(node_); }
  Node child(std::uint32_t i) const { return Wrap(ts_node_child(node_, i)); }
  bool broken() const { return is("ERROR") || ts_node_is_missing(node_); }

  // A key for maps: equal for the same node of the same tree.
  const void* id() const { return node_.id; }
  // The tree-sitter node, and another node of the same text (for Walk's cursor).
  TSNode raw() const { return node_; }
  Node With(TSNode other) const { return Wrap(other); }
  bool operator==(const Node& other) const { return ts_node_eq(node_, other.node_); }

 private:
  Node Wrap(TSNode n) const { return Node(n, text_, base_); }
  TSNode node_{};
  std::string_view text_;
  std::uint32_t base_ = 0;
};

// A parsed source. The text must outlive the trees (nodes view it).
//
// A large file is parsed in parts on several threads: cut before top-level statements
// (TopLevelStatementStarts), each part parsed by its own parser as a text of its own (nodes add
// the part's offset, so `begin()` is always an offset in the whole file). Each part is a `module`
// tree; `roots()` lists them in order. A file whose parts do not all parse cleanly is parsed again
// in one piece, so broken code is read exactly as tree-sitter reads the whole file.
class Syntax {
 public:
  // Parses `text` (UTF-8 Python), in at most `max_parts` parts (0: one per hardware thread).
  // Errors: the parser gave up (it is given a few seconds, so that no input can hold the tool),
  // or the code is nested deeper than Python itself accepts.
  static Result<Syntax> Parse(std::string_view text, unsigned max_parts = 0);

  // The module trees, in source order: one, or one per part of a large file.
  std::vector<Node> roots() const;
  // Whether any tree has ERROR or MISSING nodes.
  bool has_error() const;
  std::string_view text() const { return text_; }

 private:
  struct TreeDeleter {
    void operator()(TSTree* tree) const { ts_tree_delete(tree); }
  };
  using Tree = std::unique_ptr<TSTree, TreeDeleter>;
  static Result<std::vector<Tree>> ParseParts(std::string_view text,
                                              const std::vector<std::uint32_t>& cuts);
  std::string_view text_;
  std::vector<Tree> trees_;
  std::vector<std::uint32_t> bases_;  // where each tree's part starts
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
