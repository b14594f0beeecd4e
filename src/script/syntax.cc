#include "src/script/syntax.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <string>
#include <thread>

#include "src/script/script_text.h"

extern "C" const TSLanguage* tree_sitter_python(void);

namespace tpudoctor::script {
namespace {

// How long the parser may take: tree-sitter parses megabytes a second, so a file that takes
// longer is not a script anyone wrote.
constexpr std::uint64_t kParseTimeoutMicros = 10'000'000;

// A part of a large file is at least this long: below it a thread costs more than it saves.
constexpr std::uint32_t kMinPartBytes = 64 << 10;
constexpr unsigned kMaxParts = 8;

// Whether almost nothing in a file parsed as Python: the statements tree-sitter could read (at the
// top of each tree, even under an ERROR root) cover under a tenth of the code, comments aside.
// Broken code with sound statements around the break is read, not refused.
bool NothingParsed(const std::vector<Node>& roots, std::uint32_t size) {
  if (size < 64) return false;
  std::uint64_t sound = 0, comments = 0;
  bool broken = false;
  for (Node root : roots) {
    if (!ts_node_has_error(root.raw())) {
      sound += root.end() - root.begin();
      continue;
    }
    broken = true;
    for (std::uint32_t i = 0; i < root.named_count(); ++i) {
      Node child = root.named(i);
      if (child.is("comment")) {
        comments += child.end() - child.begin();
      } else if (!child.broken()) {
        sound += child.end() - child.begin();
      }
    }
  }
  return broken && sound * 10 < size - std::min<std::uint64_t>(comments, size);
}

// Where to cut a file into parts (offsets, ascending, none at 0): at most `max_parts` (0: one per
// hardware thread), each at least kMinPartBytes, cut at the first top-level statement after an
// even share.
std::vector<std::uint32_t> Cuts(std::string_view text, unsigned max_parts) {
  if (max_parts == 0) max_parts = std::thread::hardware_concurrency();
  const unsigned threads = std::clamp(max_parts, 1u, kMaxParts);
  const auto size = static_cast<std::uint32_t>(text.size());
  const unsigned parts = std::min<unsigned>(threads, size / kMinPartBytes);
  if (parts < 2) return {};
  const std::vector<std::uint32_t> starts = TopLevelStatementStarts(text);
  std::vector<std::uint32_t> cuts;
  for (unsigned i = 1; i < parts; ++i) {
    const std::uint32_t share = static_cast<std::uint32_t>(std::uint64_t{size} * i / parts);
    auto at = std::lower_bound(starts.begin(), starts.end(), share);
    if (at == starts.end()) break;
    if (*at > 0 && (cuts.empty() || *at > cuts.back())) cuts.push_back(*at);
  }
  return cuts;
}

struct ParserDeleter {
  void operator()(TSParser* parser) const { ts_parser_delete(parser); }
};

constexpr std::size_t kMaxSymbols = 1024;

// For each NodeType, the grammar's symbols (named ones, aliases included) that carry its name.
const std::array<std::bitset<kMaxSymbols>, static_cast<std::size_t>(NodeType::kCount)>&
SymbolsOf() {
  static const auto* table = [] {
    static constexpr std::string_view kNames[] = {"assignment",
                                                  "block",
                                                  "call",
                                                  "class_definition",
                                                  "for_statement",
                                                  "function_definition",
                                                  "import_from_statement",
                                                  "import_statement",
                                                  "lambda",
                                                  "named_expression",
                                                  "return_statement",
                                                  "while_statement",
                                                  "with_statement"};
    static_assert(std::size(kNames) == static_cast<std::size_t>(NodeType::kCount));
    auto* t =
        new std::array<std::bitset<kMaxSymbols>, static_cast<std::size_t>(NodeType::kCount)>();
    const TSLanguage* language = tree_sitter_python();
    const std::uint32_t count = ts_language_symbol_count(language);
    for (std::uint32_t symbol = 0; symbol < count && symbol < kMaxSymbols; ++symbol) {
      if (ts_language_symbol_type(language, static_cast<TSSymbol>(symbol)) != TSSymbolTypeRegular) {
        continue;
      }
      const std::string_view name =
          ts_language_symbol_name(language, static_cast<TSSymbol>(symbol));
      for (std::size_t i = 0; i < std::size(kNames); ++i) {
        if (name == kNames[i]) (*t)[i].set(symbol);
      }
    }
    return t;
  }();
  return *table;
}

}  // namespace

bool Node::is(NodeType type) const {
  if (null()) return false;
  const TSSymbol symbol = ts_node_symbol(node_);
  return symbol < kMaxSymbols && SymbolsOf()[static_cast<std::size_t>(type)].test(symbol);
}

std::string_view Node::text() const {
  if (null()) return {};
  const std::uint32_t b = begin(), e = end();
  if (b > text_.size() || e > text_.size() || b > e) return {};
  return text_.substr(b, e - b);
}

Node Node::field(const char* name) const {
  if (null()) return {};
  return Wrap(ts_node_child_by_field_name(
      node_, name, static_cast<std::uint32_t>(std::char_traits<char>::length(name))));
}

Result<std::vector<Syntax::Tree>> Syntax::ParseParts(std::string_view text,
                                                     const std::vector<std::uint32_t>& cuts) {
  const std::size_t parts = cuts.size() + 1;
  std::vector<Tree> trees(parts);
  std::vector<std::string> errors(parts);
  auto parse = [&](std::size_t i) {
    std::unique_ptr<TSParser, ParserDeleter> parser(ts_parser_new());
    if (!ts_parser_set_language(parser.get(), tree_sitter_python())) {
      errors[i] = "tree-sitter's Python grammar does not match the tree-sitter library";
      return;
    }
    ts_parser_set_timeout_micros(parser.get(), kParseTimeoutMicros);
    const std::uint32_t begin = i == 0 ? 0 : cuts[i - 1];
    const std::uint32_t end = i + 1 == parts ? static_cast<std::uint32_t>(text.size()) : cuts[i];
    trees[i].reset(ts_parser_parse_string(parser.get(), nullptr, text.data() + begin, end - begin));
    if (!trees[i]) errors[i] = "the Python parser gave up on it (too large or too complex)";
  };
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < parts; ++i) threads.emplace_back(parse, i);
  parse(0);
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) {
    if (!e.empty()) return MakeError(e);
  }
  return trees;
}

Result<Syntax> Syntax::Parse(std::string_view text, unsigned max_parts) {
  if (text.size() > UINT32_MAX) return MakeError("the source is larger than 4 GiB");
  Syntax syntax;
  syntax.text_ = text;
  const std::vector<std::uint32_t> cuts = Cuts(text, max_parts);
  auto trees = ParseParts(text, cuts);
  if (!trees) return trees.error();
  syntax.trees_ = std::move(*trees);
  syntax.bases_ = {0};
  syntax.bases_.insert(syntax.bases_.end(), cuts.begin(), cuts.end());
  // A cut in the wrong place (or broken code) shows as an error in some part: read the file as
  // one piece then, exactly as tree-sitter reads it.
  if (!cuts.empty() && syntax.has_error()) {
    trees = ParseParts(text, {});
    if (!trees) return trees.error();
    syntax.trees_ = std::move(*trees);
    syntax.bases_ = {0};
  }
  if (NothingParsed(syntax.roots(), static_cast<std::uint32_t>(text.size()))) {
    return MakeError(
        "nothing in it parses as Python (nested deeper than Python accepts, or not "
        "Python)");
  }
  return syntax;
}

std::vector<Node> Syntax::roots() const {
  std::vector<Node> out;
  out.reserve(trees_.size());
  for (std::size_t i = 0; i < trees_.size(); ++i) {
    out.emplace_back(ts_tree_root_node(trees_[i].get()), text_, bases_[i]);
  }
  return out;
}

bool Syntax::has_error() const {
  return std::any_of(trees_.begin(), trees_.end(),
                     [](const Tree& t) { return ts_node_has_error(ts_tree_root_node(t.get())); });
}

}  // namespace tpudoctor::script
