// Nothing after the frontends decides anything from an op's spelling. Frontends (src/frontends/)
// and the op tables (src/knowledge/) map each vocabulary's op names onto OpKind, Op, OpTraits and
// ControlFlow (include/tpudoctor/ir/op.h); checks, analyses, the cost model and renderers read
// those. This test reads the sources and fails on any use of Node::op_type, Node::domain or
// Node::framework_op there other than printing it into a message (`"`" + n.op_type + "`"`).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace tpudoctor {
namespace {

namespace fs = std::filesystem;

// The code of a C++ source with comments and the contents of string and character literals
// blanked out (newlines kept, so line numbers stay right).
std::string CodeOnly(const std::string& src) {
  std::string out = src;
  enum { kCode, kLine, kBlock, kString, kChar, kRaw } state = kCode;
  std::string raw_end;
  for (std::size_t i = 0; i < src.size(); ++i) {
    const char c = src[i];
    const char next = i + 1 < src.size() ? src[i + 1] : '\0';
    auto blank = [&] {
      if (out[i] != '\n') out[i] = ' ';
    };
    switch (state) {
      case kCode:
        if (c == '/' && next == '/') {
          state = kLine;
          blank();
        } else if (c == '/' && next == '*') {
          state = kBlock;
          blank();
        } else if (c == 'R' && next == '"') {
          const std::size_t paren = src.find('(', i + 2);
          if (paren == std::string::npos) break;
          raw_end = ")" + src.substr(i + 2, paren - i - 2) + "\"";
          state = kRaw;
          i = paren;
        } else if (c == '"') {
          state = kString;
        } else if (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(src[i - 1])))) {
          state = kChar;  // not a digit separator (1'000)
        }
        break;
      case kLine:
        if (c == '\n') state = kCode;
        blank();
        break;
      case kBlock:
        blank();
        if (c == '*' && next == '/') {
          out[i + 1] = ' ';
          ++i;
          state = kCode;
        }
        break;
      case kString:
      case kChar:
        if (c == '\\') {
          blank();
          if (i + 1 < src.size()) out[i + 1] = ' ';
          ++i;
        } else if ((state == kString && c == '"') || (state == kChar && c == '\'')) {
          state = kCode;
        } else {
          blank();
        }
        break;
      case kRaw:
        if (src.compare(i, raw_end.size(), raw_end) == 0) {
          i += raw_end.size() - 1;
          state = kCode;
        } else {
          blank();
        }
        break;
    }
  }
  return out;
}

// Uses of an op's spelling in `code` (already CodeOnly) that are not string concatenation: each
// as "line: text".
std::vector<std::string> SpellingUses(const std::string& code) {
  static const std::regex kMember(R"((\.|->)\s*(op_type|framework_op|domain)\b)");
  std::vector<std::string> found;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), kMember);
       it != std::sregex_iterator(); ++it) {
    const std::size_t begin = static_cast<std::size_t>(it->position());
    const std::size_t end = begin + static_cast<std::size_t>(it->length());
    std::size_t after = end;
    while (after < code.size() && (code[after] == ' ' || code[after] == '\n')) ++after;
    // Walk back over the object expression (`n`, `g.node(id)`, `origin.node`).
    std::size_t before = begin;
    while (before > 0 &&
           (std::isalnum(static_cast<unsigned char>(code[before - 1])) || code[before - 1] == '_' ||
            code[before - 1] == '.' || code[before - 1] == ')' || code[before - 1] == '(' ||
            code[before - 1] == '>' || code[before - 1] == '-')) {
      --before;
    }
    while (before > 0 && (code[before - 1] == ' ' || code[before - 1] == '\n')) --before;
    const bool concatenated = (after < code.size() && code[after] == '+' &&
                               (after + 1 >= code.size() || code[after + 1] != '+')) ||
                              (before > 0 && code[before - 1] == '+');
    if (concatenated) continue;
    const std::size_t line_start = code.rfind('\n', begin) + 1;
    const std::size_t line_end = code.find('\n', begin);
    const auto line = std::count(code.begin(), code.begin() + static_cast<long>(begin), '\n') + 1;
    found.push_back(std::to_string(line) + ": " + code.substr(line_start, line_end - line_start));
  }
  return found;
}

TEST(OpVocabulary, TheScannerSeesComparisonsAndLookups) {
  EXPECT_EQ(SpellingUses(CodeOnly("if (n.op_type == \"If\") return;\n")).size(), 1u);
  EXPECT_EQ(SpellingUses(CodeOnly("if (\"hlo\" != g.node(id).domain) x();\n")).size(), 1u);
  EXPECT_EQ(SpellingUses(CodeOnly("bool b = kOps.count(n->framework_op) > 0;\n")).size(), 1u);
  EXPECT_EQ(SpellingUses(CodeOnly("auto i = n.op_type.find('.');\n")).size(), 1u);
  EXPECT_EQ(SpellingUses(CodeOnly("return IsView(node.op_type);\n")).size(), 1u);
}

TEST(OpVocabulary, TheScannerAllowsMessagesCommentsAndStrings) {
  EXPECT_TRUE(SpellingUses(CodeOnly("msg = \"`\" + n.op_type + \"` is slow\";\n")).empty());
  EXPECT_TRUE(SpellingUses(CodeOnly("msg = prefix +\n    n.framework_op;\n")).empty());
  EXPECT_TRUE(SpellingUses(CodeOnly("// compare n.op_type == \"If\" here\nint x;\n")).empty());
  EXPECT_TRUE(SpellingUses(CodeOnly("s = \"n.domain == hlo\";\n")).empty());
  EXPECT_TRUE(SpellingUses(CodeOnly("s = R\"(n.op_type == x)\";\n")).empty());
}

// The layers allowed to read spellings: the frontends, the op tables, and the IR (its text form
// and Node::QualifiedOp print them).
bool MayReadSpellings(const std::string& rel) {
  for (const char* prefix : {"src/frontends/", "src/knowledge/", "src/ir/", "include/tpudoctor/ir/",
                             "include/tpudoctor/frontend/", "include/tpudoctor/knowledge/"}) {
    if (rel.starts_with(prefix)) return true;
  }
  return rel.ends_with("_test.cc");  // tests build graphs and find nodes by name
}

TEST(OpVocabulary, NothingAfterTheFrontendsReadsAnOpsSpelling) {
  const fs::path root = TPUD_SOURCE_DIR;
  std::vector<std::string> violations;
  int scanned = 0;
  for (const char* dir : {"src", "include", "tools", "python"}) {
    if (!fs::exists(root / dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const fs::path& p = entry.path();
      if (!entry.is_regular_file() || (p.extension() != ".cc" && p.extension() != ".h")) continue;
      const std::string rel = fs::relative(p, root).generic_string();
      if (MayReadSpellings(rel)) continue;
      std::ifstream in(p);
      std::stringstream buffer;
      buffer << in.rdbuf();
      ++scanned;
      for (const std::string& use : SpellingUses(CodeOnly(buffer.str())))
        violations.push_back(rel + ":" + use);
    }
  }
  EXPECT_GT(scanned, 50) << "the source tree was not found under " << root;
  std::string list;
  for (const std::string& v : violations) list += "\n  " + v;
  EXPECT_TRUE(violations.empty())
      << "decide from Node::kind/op/traits/control (include/tpudoctor/ir/op.h), not the op's "
         "spelling; map the spelling in data/ops/semantics.tsv instead:"
      << list;
}

}  // namespace
}  // namespace tpudoctor
