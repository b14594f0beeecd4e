#include "src/script/syntax.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "src/script/parse_arena.h"
#include "src/script/script_text.h"

extern "C" const TSLanguage* tree_sitter_python(void);

namespace tpudoctor::script {
namespace {

// How long the parser may take (each thread, over all its parts): tree-sitter parses megabytes a
// second, so a file that takes longer is not a script anyone wrote.
constexpr std::uint64_t kParseTimeoutMicros = 10'000'000;
using Clock = std::chrono::steady_clock;

// What a parse allocates in its arena: tree-sitter takes about 50 bytes per byte of source
// (blocks' headers included); parts up to about 1.3 MB fit the budget, and past it the rest goes
// to malloc.
constexpr std::size_t kArenaBytesPerByte = 56;
constexpr std::size_t kArenaBudget = std::size_t{64} << 20;

// A large file is cut into parts of about this size: parts are parsed by as many threads as the
// machine has, each thread parsing its parts one after another in the same arena memory (so a
// file touches the memory of a few parts, not of all of it: fresh pages cost the kernel's
// zeroing; a part's arena fits one 2 MiB page). Small parts also let the threads finish close
// together (the calling thread also builds the model, so the last part it takes decides when the
// parse ends), and the listener start early: 12 KiB parts check the 10,000-line script 2.3 ms
// sooner than 24 KiB ones on two cores, 8 KiB ones 1 ms later again (session 24, A/B). A file
// below two parts' worth is parsed in one piece.
constexpr std::uint32_t kPartBytes = 12 << 10;
constexpr unsigned kMaxParts = 64;
constexpr unsigned kMaxThreads = 8;

// Whether almost nothing in a file parsed as Python: the statements tree-sitter could read (at the
// top of each tree, even under an ERROR root) cover under a tenth of the code, comments aside.
// Broken code with sound statements around the break is read, not refused.
bool NothingParsed(const std::vector<Node>& roots, std::uint32_t size) {
  if (size < 64) return false;
  std::uint64_t sound = 0, comments = 0;
  bool broken = false;
  for (Node root : roots) {
    if (!root.has_error()) {
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

// Where to cut a file into parts (offsets, ascending, none at 0): about kPartBytes each, at most
// `max_parts` (0: kMaxParts), cut at the first top-level statement after an even share.
std::vector<std::uint32_t> Cuts(std::string_view text, unsigned max_parts) {
  if (max_parts == 0) max_parts = kMaxParts;
  const auto size = static_cast<std::uint32_t>(text.size());
  const unsigned parts = std::min<unsigned>(max_parts, size / kPartBytes);
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
struct TreeDeleter {
  void operator()(TSTree* tree) const { ts_tree_delete(tree); }
};

// The grammar's names, looked up once: tree-sitter's own lookups measure the name (strlen) or
// scan the field names (strncmp) on every call.
struct GrammarNames {
  std::vector<std::string_view> symbols;  // by public symbol
  std::vector<bool> named;                // by public symbol: a named node (not a token)
  // By public symbol, a bit per NodeType whose name it carries (named symbols, aliases included).
  std::vector<std::uint16_t> types;
  std::vector<std::pair<std::string_view, std::uint8_t>> fields;
};

// NodeType's names, in its order.
constexpr std::string_view kNodeTypeNames[] = {"assignment",
                                               "block",
                                               "call",
                                               "class_definition",
                                               "for_statement",
                                               "function_definition",
                                               "identifier",
                                               "import_from_statement",
                                               "import_statement",
                                               "lambda",
                                               "named_expression",
                                               "parenthesized_expression",
                                               "return_statement",
                                               "while_statement",
                                               "with_statement"};
static_assert(std::size(kNodeTypeNames) == static_cast<std::size_t>(NodeType::kCount));
static_assert(static_cast<std::size_t>(NodeType::kCount) <= 16);

const GrammarNames& Names() {
  static const auto* names = [] {
    auto* n = new GrammarNames();
    const TSLanguage* language = tree_sitter_python();
    const std::uint32_t symbols = ts_language_symbol_count(language);
    for (std::uint32_t s = 0; s < symbols; ++s) {
      const std::string_view name = ts_language_symbol_name(language, static_cast<TSSymbol>(s));
      n->symbols.push_back(name);
      std::uint16_t types = 0;
      for (std::size_t t = 0; t < std::size(kNodeTypeNames); ++t) {
        if (ts_language_symbol_type(language, static_cast<TSSymbol>(s)) == TSSymbolTypeRegular &&
            name == kNodeTypeNames[t]) {
          types |= static_cast<std::uint16_t>(1u << t);
        }
      }
      n->types.push_back(types);
      n->named.push_back(ts_language_symbol_type(language, static_cast<TSSymbol>(s)) ==
                         TSSymbolTypeRegular);
    }
    const std::uint32_t fields = ts_language_field_count(language);
    for (std::uint32_t f = 1; f <= fields && f <= UINT8_MAX; ++f) {
      if (const char* name = ts_language_field_name_for_id(language, static_cast<TSFieldId>(f))) {
        n->fields.emplace_back(name, static_cast<std::uint8_t>(f));
      }
    }
    return n;
  }();
  return *names;
}

std::uint8_t FieldId(std::string_view name) {
  for (const auto& [field, id] : Names().fields) {
    if (field == name) return id;
  }
  return 0;
}

// tree-sitter's tree as a SyntaxTree: one walk with its cursor, which visits the visible nodes
// in pre-order and knows the field each fills (through hidden parents, as child_by_field does).
std::unique_ptr<SyntaxTree> Flatten(TSTree* tree, std::string_view text, std::uint32_t base) {
  auto out = std::make_unique<SyntaxTree>();
  out->text = text;
  out->symbol_names = Names().symbols;
  out->symbol_types = Names().types;
  std::vector<SyntaxTree::Entry>& nodes = out->nodes;
  // Real scripts have 0.1 to 0.5 nodes per byte (pages not reached are never touched): growing the
  // array as it fills would copy it several times over.
  nodes.reserve(ts_node_end_byte(ts_tree_root_node(tree)) / 2 + 16);
  struct Open {
    std::uint32_t index;
    std::uint32_t last_child = SyntaxTree::kNone;
  };
  std::vector<Open> open;
  TSTreeCursor cursor = ts_tree_cursor_new(ts_tree_root_node(tree));
  // The cursor's node becomes the next node, the last child of the innermost open one.
  const std::vector<bool>& named = Names().named;
  auto push = [&] {
    const TSNode n = ts_tree_cursor_current_node(&cursor);
    const auto index = static_cast<std::uint32_t>(nodes.size());
    SyntaxTree::Entry e;
    e.begin = base + ts_node_start_byte(n);
    e.end = base + ts_node_end_byte(n);
    e.symbol = ts_node_symbol(n);
    // Named by its (public) symbol; ERROR, past the grammar's symbols, is named too.
    if (e.symbol < named.size() ? named[e.symbol] : e.symbol == UINT16_MAX) {
      e.flags = SyntaxTree::kNamed;
    }
    // A node with an error, or a missing one, is inside a parent with an error: in a sound
    // parent, asking is skipped.
    if (open.empty() || (nodes[open.back().index].flags & SyntaxTree::kHasError) != 0) {
      e.flags |= static_cast<std::uint8_t>((ts_node_is_missing(n) ? SyntaxTree::kMissing : 0) |
                                           (ts_node_has_error(n) ? SyntaxTree::kHasError : 0));
    }
    if (!open.empty()) {
      e.parent = open.back().index;
      e.field = static_cast<std::uint8_t>(ts_tree_cursor_current_field_id(&cursor));
      if (open.back().last_child != SyntaxTree::kNone) {
        nodes[open.back().last_child].next_sibling = index;
      }
      open.back().last_child = index;
    }
    nodes.push_back(e);
    open.push_back({index});
  };
  auto close = [&] {
    nodes[open.back().index].subtree_end = static_cast<std::uint32_t>(nodes.size());
    open.pop_back();
  };
  push();
  for (;;) {
    if (ts_tree_cursor_goto_first_child(&cursor)) {
      push();
      continue;
    }
    for (;;) {  // close the node, then its ancestors until one has a next sibling
      close();
      if (open.empty()) {
        ts_tree_cursor_delete(&cursor);
        return out;
      }
      if (ts_tree_cursor_goto_next_sibling(&cursor)) {
        push();
        break;
      }
      ts_tree_cursor_goto_parent(&cursor);
    }
  }
}

}  // namespace

std::string_view Node::text() const {
  if (null()) return {};
  const std::uint32_t b = begin(), e = end();
  const std::string_view text = tree_->text;
  if (b > text.size() || e > text.size() || b > e) return {};
  return text.substr(b, e - b);
}

Node Node::NextSibling() const { return At(entry().next_sibling); }

Node Node::FirstChild() const {
  if (null() || entry().subtree_end <= index_ + 1) return {};
  return Node(tree_, index_ + 1);
}

Node Node::field(std::string_view name) const {
  const std::uint8_t id = FieldId(name);
  if (id == 0) return {};
  for (Node c = FirstChild(); c; c = c.NextSibling()) {
    if (c.entry().field == id) return c;
  }
  return {};
}

std::uint32_t Node::count() const {
  std::uint32_t n = 0;
  for (Node c = FirstChild(); c; c = c.NextSibling()) ++n;
  return n;
}

Node Node::child(std::uint32_t i) const {
  for (Node c = FirstChild(); c; c = c.NextSibling()) {
    if (i-- == 0) return c;
  }
  return {};
}

std::uint32_t Node::named_count() const {
  std::uint32_t n = 0;
  for (Node c = FirstChild(); c; c = c.NextSibling()) n += c.is_named();
  return n;
}

Node Node::named(std::uint32_t i) const {
  for (Node c = FirstChild(); c; c = c.NextSibling()) {
    if (c.is_named() && i-- == 0) return c;
  }
  return {};
}

Result<Syntax::Trees> Syntax::ParseParts(std::string_view text,
                                         const std::vector<std::uint32_t>& cuts,
                                         TreeListener* listener) {
  const std::size_t parts = cuts.size() + 1;
  Trees trees(parts);
  std::vector<std::string> errors(parts);
  // Each thread's parts share the time limit: the parser stops where the thread's time runs out.
  auto parse = [&](std::size_t i, ParseArena& arena, Clock::time_point deadline) {
    const std::uint32_t begin = i == 0 ? 0 : cuts[i - 1];
    const std::uint32_t end = i + 1 == parts ? static_cast<std::uint32_t>(text.size()) : cuts[i];
    arena.Reset(kArenaBytesPerByte * (end - begin));
    std::unique_ptr<TSParser, ParserDeleter> parser(ts_parser_new());
    if (!ts_parser_set_language(parser.get(), tree_sitter_python())) {
      errors[i] = "tree-sitter's Python grammar does not match the tree-sitter library";
      return;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count();
    // 0 would mean no limit.
    ts_parser_set_timeout_micros(parser.get(), static_cast<std::uint64_t>(std::max<long>(1, left)));
    std::unique_ptr<TSTree, TreeDeleter> tree(
        ts_parser_parse_string(parser.get(), nullptr, text.data() + begin, end - begin));
    if (!tree) {
      errors[i] = "the Python parser gave up on it (too large or too complex)";
      return;
    }
    trees[i] = Flatten(tree.get(), text, begin);
    // The tree is emptied with the arena when all of it is there. The parser is deleted as usual:
    // the grammar's external scanner keeps its state in malloc's memory.
    if (!arena.overflowed()) (void)tree.release();
  };
  // Set once part i is parsed (or failed); the listener is told of a tree only after that.
  const std::unique_ptr<std::atomic<bool>[]> done(new std::atomic<bool>[parts]());
  std::size_t told = 0;  // the trees the listener was told of, from the first
  auto tell = [&](bool wait) {
    for (; told < parts; ++told) {
      if (wait) done[told].wait(false, std::memory_order_acquire);
      if (!done[told].load(std::memory_order_acquire) || !trees[told]) return;
      listener->Parsed(Node(trees[told].get(), 0));
    }
  };
  const std::size_t threads = std::min<std::size_t>(
      {parts, kMaxThreads, std::max(1u, std::thread::hardware_concurrency())});
  // Each thread takes the next part not yet taken (in one arena, emptied between parts), so a
  // thread the machine holds up is made up for by the others. A part that fails does not stop
  // the others: every part is marked done, which the listener's telling waits on.
  std::atomic<std::size_t> next_part{0};
  auto work = [&](bool calling_thread) {
    ParseArena arena(kArenaBudget);
    const auto deadline = Clock::now() + std::chrono::microseconds(kParseTimeoutMicros);
    for (std::size_t i = next_part++; i < parts; i = next_part++) {
      parse(i, arena, deadline);
      done[i].store(true, std::memory_order_release);
      done[i].notify_all();
      // The calling thread tells the listener of the trees ready so far between its parts, and
      // of the rest as they come once none is left to take: the listener's work overlaps the
      // other threads' parsing.
      if (calling_thread && listener != nullptr) tell(false);
    }
    if (calling_thread && listener != nullptr) tell(true);
  };
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(work, false);
  work(true);
  for (std::thread& t : workers) t.join();
  for (const std::string& e : errors) {
    if (!e.empty()) return MakeError(e);
  }
  return trees;
}

Result<Syntax> Syntax::Parse(std::string_view text, unsigned max_parts, TreeListener* listener) {
  if (text.size() > UINT32_MAX) return MakeError("the source is larger than 4 GiB");
  Syntax syntax;
  syntax.text_ = text;
  const std::vector<std::uint32_t> cuts = Cuts(text, max_parts);
  auto trees = ParseParts(text, cuts, listener);
  if (!trees) return trees.error();
  syntax.trees_ = std::move(*trees);
  // A cut in the wrong place (or broken code) shows as an error in some part: read the file as
  // one piece then, exactly as tree-sitter reads it.
  if (!cuts.empty() && syntax.has_error()) {
    if (listener != nullptr) listener->Restart();
    trees = ParseParts(text, {}, listener);
    if (!trees) return trees.error();
    syntax.trees_ = std::move(*trees);
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
  for (const auto& tree : trees_) out.emplace_back(tree.get(), 0);
  return out;
}

bool Syntax::has_error() const {
  return std::any_of(trees_.begin(), trees_.end(),
                     [](const auto& t) { return Node(t.get(), 0).has_error(); });
}

}  // namespace tpudoctor::script
