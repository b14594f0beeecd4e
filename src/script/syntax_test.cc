// The flat trees of src/script/syntax.h against tree-sitter's own node API: every node of every
// script fixture has the same type, span, flags, parent, children and fields, so the rules read
// exactly what tree-sitter parsed (how large files are cut into parts: tests/script_model_test.cc).
// TPUD_SYNTAX_CORPUS (a folder) adds more files when set.
#include "src/script/syntax.h"

#include <gtest/gtest.h>
#include <tree_sitter/api.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "src/script/script_text.h"
#include "tpudoctor/frontend/source.h"

extern "C" const TSLanguage* tree_sitter_python(void);

namespace tpudoctor::script {
namespace {

struct TreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};
struct ParserDeleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};

std::vector<std::filesystem::path> Scripts() {
  std::vector<std::filesystem::path> out;
  std::vector<std::string> roots = {std::string(TPUD_SOURCE_DIR) + "/testdata"};
  if (const char* extra = std::getenv("TPUD_SYNTAX_CORPUS")) roots.emplace_back(extra);
  for (const std::string& root : roots) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".py" || ext == ".ipynb")) out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Compares `flat` with tree-sitter's node `ts` and, by an explicit stack, their subtrees; adds the
// number of nodes compared to `compared`.
void Compare(Node flat, TSNode ts, const std::string& where, std::size_t& compared) {
  const TSLanguage* language = tree_sitter_python();
  std::vector<std::pair<Node, TSNode>> stack = {{flat, ts}};
  while (!stack.empty()) {
    auto [f, t] = stack.back();
    stack.pop_back();
    ++compared;
    const std::string at = where + ":" + std::to_string(ts_node_start_byte(t));
    EXPECT_EQ(f.type(), ts_node_type(t)) << at;
    EXPECT_EQ(f.begin(), ts_node_start_byte(t)) << at;
    EXPECT_EQ(f.end(), ts_node_end_byte(t)) << at;
    EXPECT_EQ(f.is_named(), ts_node_is_named(t)) << at;
    EXPECT_EQ(f.has_error(), ts_node_has_error(t)) << at;
    EXPECT_EQ(f.broken(), ts_node_is_missing(t) || f.type() == "ERROR") << at;
    EXPECT_EQ(f.named_count(), ts_node_named_child_count(t)) << at;
    ASSERT_EQ(f.count(), ts_node_child_count(t)) << at;
    for (std::uint32_t field = 1; field <= ts_language_field_count(language); ++field) {
      const char* name = ts_language_field_name_for_id(language, static_cast<TSFieldId>(field));
      const Node a = f.field(name);
      TSNode b = ts_node_child_by_field_id(t, static_cast<TSFieldId>(field));
      // tree-sitter 0.20 also finds fields a hidden rule declares below a child it aliases to a
      // visible node (a match statement's `alternative` case clauses, inside its `block`): a
      // flat tree keeps fields on the children that fill them.
      if (!ts_node_is_null(b) && !ts_node_eq(ts_node_parent(b), t)) b = TSNode{};
      ASSERT_EQ(a.null(), ts_node_is_null(b)) << at << " field " << name;
      if (!a.null()) {
        EXPECT_EQ(a.begin(), ts_node_start_byte(b)) << at << " field " << name;
        EXPECT_EQ(a.type(), ts_node_type(b)) << at << " field " << name;
      }
    }
    for (std::uint32_t i = 0; i < f.count(); ++i) {
      EXPECT_TRUE(f.child(i).parent() == f) << at;
      stack.emplace_back(f.child(i), ts_node_child(t, i));
    }
  }
}

TEST(SyntaxTest, FlatTreesMatchTreeSitter) {
  std::size_t files = 0, nodes = 0;
  for (const auto& path : Scripts()) {
    auto source = ReadSource(path.string());
    ASSERT_TRUE(source.ok()) << path;
    auto text = ReadScript(*source);
    if (!text) continue;  // hostile fixtures: refused before parsing
    auto syntax = Syntax::Parse(text->code, 1);
    if (!syntax) continue;
    std::unique_ptr<TSParser, ParserDeleter> parser(ts_parser_new());
    ASSERT_TRUE(ts_parser_set_language(parser.get(), tree_sitter_python()));
    std::unique_ptr<TSTree, TreeDeleter> tree(ts_parser_parse_string(
        parser.get(), nullptr, text->code.data(), static_cast<std::uint32_t>(text->code.size())));
    ASSERT_TRUE(tree);
    ASSERT_EQ(syntax->roots().size(), 1u);
    Compare(syntax->roots()[0], ts_tree_root_node(tree.get()), path.string(), nodes);
    ++files;
    if (::testing::Test::HasFailure()) return;  // one file's differences are enough to read
  }
  EXPECT_GT(files, 50u);
  EXPECT_GT(nodes, 10000u);
}

}  // namespace
}  // namespace tpudoctor::script
