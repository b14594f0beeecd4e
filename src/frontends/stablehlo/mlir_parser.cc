#include "src/frontends/stablehlo/mlir_parser.h"

#include <algorithm>
#include <cctype>

#include "tpudoctor/support/strings.h"

namespace tpudoctor::mlir {
namespace {

constexpr int kMaxDepth = 256;          // brackets inside one op
constexpr int kMaxRegionDepth = 64;     // regions inside regions
constexpr char kContinuation = '\x01';  // marks `cond {` / `reducer(...) {` lines in op text

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' ||
         c == '-';
}

bool IsOpen(char c) { return c == '(' || c == '[' || c == '{' || c == '<'; }
bool IsClose(char c) { return c == ')' || c == ']' || c == '}' || c == '>'; }
// The index of the `"` that closes the string opening at `text[open]` (text.size() if none).
std::size_t ClosingQuote(std::string_view text, std::size_t open) {
  std::size_t i = open + 1;
  while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
  return std::min(i, text.size());
}

// `text[i]` closes a bracket: the `>` of an arrow `->` does not.
bool ClosesAt(std::string_view text, std::size_t i) {
  return IsClose(text[i]) && !(text[i] == '>' && i > 0 && text[i - 1] == '-');
}

// The type at the start of `text`: up to the first space outside brackets.
std::string TypeToken(std::string_view text) {
  text = Trim(text);
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (IsOpen(c)) ++depth;
    if (depth <= 0 && c == ')') return std::string(text.substr(0, i));
    if (ClosesAt(text, i)) --depth;
    if (depth <= 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ')')) {
      return std::string(text.substr(0, i));
    }
  }
  return std::string(text);
}

// `%name: type` pairs in `text` (block arguments and `reducer(...)` arguments).
std::vector<std::pair<std::string, std::string>> ArgDefinitions(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') continue;
    std::size_t e = i + 1;
    while (e < text.size() && IsIdentChar(text[e])) ++e;
    if (e < text.size() && text[e] == ':' && e > i + 1) {
      std::size_t t = e + 1;
      out.emplace_back(std::string(text.substr(i + 1, e - i - 1)), TypeToken(text.substr(t)));
    }
    i = e - 1;
  }
  return out;
}

// `sdy.mesh @mesh = <["x"=4, "y"=2]>` → 8.
std::int64_t MeshSize(std::string_view item) {
  std::int64_t size = 1;
  const std::size_t end = item.find(']');
  for (std::size_t at = item.find("\"="); at < end; at = item.find("\"=", at + 2)) {
    std::size_t e = item.find_first_not_of("0123456789", at + 2);
    auto n = ParseInt64(item.substr(at + 2, e - at - 2));
    if (!n || *n < 1 || size > (std::int64_t{1} << 40) / *n) return size;
    size *= *n;
  }
  return size;
}

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Result<MlirModule> Module() {
    MlirModule m;
    if (auto r = Items(m, /*in_module=*/false); !r) return r.error();
    return m;
  }

 private:
  // Top-level items, or the items of a `module { ... }` body.
  Result<Ok> Items(MlirModule& m, bool in_module) {
    while (true) {
      SkipSpace();
      if (Eof()) {
        if (in_module) return Fail("the module's `{` is never closed");
        return Ok{};
      }
      if (Peek() == '}') {
        if (!in_module) return Fail("unexpected `}`");
        Advance();
        return Ok{};
      }
      if (Word("module")) {
        if (auto r = ModuleHeader(m); !r) return r;
        if (auto r = Items(m, true); !r) return r;
        continue;
      }
      if (Word("func.func") || Word("func")) {
        auto f = Func();
        if (!f) return f.error();
        m.funcs.push_back(std::move(*f));
        continue;
      }
      if (Peek() == '#') {
        const std::size_t start = p_;
        std::string rest = RestOfItem();
        std::string_view item(rest);
        std::size_t eq = item.find('=');
        if (eq != std::string_view::npos) {
          std::string name(Trim(item.substr(0, eq)));
          std::string_view value = Trim(item.substr(eq + 1));
          if (value.starts_with("loc(") && value.back() == ')') {
            m.loc_aliases[name] = std::string(value.substr(4, value.size() - 5));
          }
        }
        (void)start;
        continue;
      }
      std::string item = RestOfItem();  // `sdy.mesh`, `!alias = type`, ...
      if (item.starts_with("sdy.mesh")) m.partitions = std::max(m.partitions, MeshSize(item));
    }
  }

  Result<Ok> ModuleHeader(MlirModule& m) {
    SkipSpace();
    if (Peek() == '@') {
      std::string name(Symbol());
      if (m.name.empty()) m.name = std::move(name);
    }
    SkipSpace();
    if (Word("attributes")) {
      SkipSpace();
      auto r = Balanced();
      if (!r) return r.error();
      if (std::size_t at = r->find("num_partitions = "); at != std::string::npos) {
        auto n = ParseInt64(std::string_view(*r).substr(at + 17, r->find(' ', at + 17) - at - 17));
        if (n && *n > m.partitions) m.partitions = *n;
      }
      SkipSpace();
    }
    if (Peek() != '{') return Fail("expected `{` to open the module body");
    Advance();
    return Ok{};
  }

  Result<MlirFunc> Func() {
    MlirFunc f;
    f.line = line_;
    SkipSpace();
    while (!Eof() && Peek() != '@') {
      std::string w = Ident();
      if (w.empty()) return Fail("expected the function's `@name`");
      if (w == "public") f.is_public = true;
      SkipSpace();
    }
    f.name = Symbol();
    SkipSpace();
    if (Peek() != '(') return Fail("expected `(` after the function name");
    f.line = line_;
    f.column = Column();
    auto params = Balanced();
    if (!params) return params.error();
    std::string_view inner(*params);
    for (const std::string& a : SplitTopLevel(inner.substr(1, inner.size() - 2))) {
      std::size_t colon = a.find(':');
      if (a.empty() || a[0] != '%' || colon == std::string::npos) {
        return Fail("function `" + f.name + "`: parameter `" + a + "` is not `%name: type`");
      }
      f.body.args.emplace_back(std::string(Trim(std::string_view(a).substr(1, colon - 1))),
                               TypeToken(std::string_view(a).substr(colon + 1)));
    }
    SkipSpace();
    if (Peek() == '-' && Peek(1) == '>') {
      p_ += 2;
      SkipSpace();
      if (Peek() == '(') {
        auto results = Balanced();
        if (!results) return results.error();
        std::string_view r(*results);
        for (const std::string& t : SplitTopLevel(r.substr(1, r.size() - 2)))
          f.result_types.push_back(TypeToken(t));
      } else {
        std::size_t start = p_;
        while (!Eof() && !std::isspace(static_cast<unsigned char>(Peek()))) {
          if (IsOpen(Peek())) {
            if (auto b = Balanced(); !b) return b.error();
          } else {
            Advance();
          }
        }
        f.result_types.push_back(std::string(s_.substr(start, p_ - start)));
      }
      SkipSpace();
    }
    if (Word("attributes")) {
      SkipSpace();
      if (auto r = Balanced(); !r) return r.error();
      SkipSpace();
    }
    if (Peek() == '{') {
      Advance();
      f.has_body = true;
      if (auto r = Region(f.body, 1); !r) return r.error();
    }
    return f;
  }

  // The ops of a region up to its closing `}` (consumed).
  Result<Ok> Region(MlirRegion& region, int depth) {
    if (depth > kMaxRegionDepth) return Fail("regions nest more than 64 deep");
    while (true) {
      SkipSpace();
      if (Eof()) return Fail("a region's `{` is never closed");
      if (Peek() == '}') {
        Advance();
        return Ok{};
      }
      if (Peek() == '^') {
        if (auto r = BlockLabel(region); !r) return r;
        continue;
      }
      MlirOp op;
      if (auto r = Op(op, depth); !r) return r;
      region.ops.push_back(std::move(op));
    }
  }

  // `^bb0(%a: tensor<f32>, %b: tensor<f32>):` — the arguments of the first block are the region's.
  Result<Ok> BlockLabel(MlirRegion& region) {
    Advance();
    Ident();
    std::string args;
    if (Peek() == '(') {
      auto b = Balanced();
      if (!b) return b.error();
      args = *b;
    }
    SkipSpace();
    if (Peek() == ':') Advance();
    if (region.args.empty() && region.ops.empty()) region.args = ArgDefinitions(args);
    return Ok{};
  }

  Result<Ok> Op(MlirOp& op, int depth) {
    op.line = line_;
    op.column = Column();
    if (Peek() == '%') {
      if (auto r = Results(op); !r) return r;
    }
    if (Peek() == '"') {
      auto q = Quoted();
      if (!q) return q.error();
      op.name = q->substr(1, q->size() - 2);
    } else {
      op.name = Ident();
    }
    if (op.name.empty()) return Fail("expected an operation");
    return OpBody(op, depth);
  }

  Result<Ok> Results(MlirOp& op) {
    while (Peek() == '%') {
      Advance();
      std::string name = Ident();
      if (name.empty()) return Fail("expected a result name after `%`");
      if (Peek() == ':') {
        Advance();
        std::string n = Ident();
        auto count = ParseInt64(n);
        if (!count || *count < 1 || *count > 100000) return Fail("bad result count `" + n + "`");
        for (std::int64_t i = 0; i < *count; ++i)
          op.results.push_back(name + "#" + std::to_string(i));
      } else {
        op.results.push_back(std::move(name));
      }
      SkipSpace();
      if (Peek() != ',') break;
      Advance();
      SkipSpace();
    }
    if (Peek() != '=') return Fail("expected `=` after the op's results");
    Advance();
    SkipSpace();
    return Ok{};
  }

  // Everything after the op name: operands, attributes, regions, types, location.
  Result<Ok> OpBody(MlirOp& op, int region_depth) {
    std::string text;
    std::size_t segment = 0;  // where the text since the last region starts
    int depth = 0;
    while (!Eof()) {
      const char c = Peek();
      if (c == '"') {
        auto q = Quoted();
        if (!q) return q.error();
        text += *q;
        continue;
      }
      if ((c == '\n' || c == '\r') && depth == 0) {
        if (!Continues()) break;
        text += kContinuation;
        segment = text.size();
        continue;
      }
      if (c == '}' && depth == 0) break;  // the enclosing region closes on this line
      if (c == '{' && RegionFollows()) {
        Advance();
        MlirRegion& r = op.regions.emplace_back();
        if (auto res = Region(r, region_depth + 1); !res) return res;
        if (r.args.empty()) r.args = ArgDefinitions(std::string_view(text).substr(segment));
        text += "{}";
        segment = text.size();
        continue;
      }
      if (IsOpen(c)) {
        if (++depth > kMaxDepth) return Fail("brackets nest more than 256 deep");
      } else if (IsClose(c) && !(c == '>' && !text.empty() && text.back() == '-')) {
        --depth;
      }
      text += c;
      Advance();
    }
    // Region arguments belong to the region, not to the op's operands or types.
    std::string_view body(text);
    Finish(op, body);
    return Ok{};
  }

  // After a newline that ends an op line: does the op go on (`cond {`, `do {`, `reducer(`)?
  bool Continues() {
    std::size_t q = p_;
    while (q < s_.size() && std::isspace(static_cast<unsigned char>(s_[q]))) ++q;
    std::size_t e = q;
    while (e < s_.size() && IsIdentChar(s_[e])) ++e;
    const std::string_view w = s_.substr(q, e - q);
    if (w == "cond" || w == "do" || w == "reducer" || w == "else") {
      while (p_ < q) Advance();
      return true;
    }
    if (w.empty() && q < s_.size() && s_[q] == '}') {
      // `} else {` of a pretty `if`.
      std::size_t a = q + 1;
      while (a < s_.size() && (s_[a] == ' ' || s_[a] == '\t')) ++a;
      if (s_.substr(a, 4) == "else") return false;
    }
    return false;
  }

  // A `{` that ends its line opens a region, unless the next line reads `name = value`: then it
  // is an attribute dictionary written over several lines.
  bool RegionFollows() const {
    std::size_t q = p_ + 1;
    while (q < s_.size() && (s_[q] == ' ' || s_[q] == '\t')) ++q;
    if (q < s_.size() && s_[q] == '^') return true;
    if (q < s_.size() && s_[q] != '\n' && s_[q] != '\r') return false;
    while (q < s_.size() && std::isspace(static_cast<unsigned char>(s_[q]))) ++q;
    std::size_t e = q;
    while (e < s_.size() && IsIdentChar(s_[e])) ++e;
    if (e == q) return true;  // `%x = ...`, `"op"(...)`, `}`
    while (e < s_.size() && s_[e] == ' ') ++e;
    return !(e < s_.size() && s_[e] == '=');
  }

  static void Finish(MlirOp& op, std::string_view text) {
    std::string own(text);
    // Trailing `loc(...)`.
    if (std::size_t l = own.rfind(" loc("); l != std::string::npos && own.back() == ')') {
      op.loc = own.substr(l + 5, own.size() - l - 6);
      own.erase(l);
    }
    std::string_view v = Trim(own);
    if (v.starts_with("@")) {
      std::size_t e = 1;
      while (e < v.size() && (IsIdentChar(v[e]) || v[e] == ':')) ++e;
      op.callee = std::string(v.substr(1, e - 1));
    } else if (auto callee = SymbolAfter(v, "callee = @")) {
      op.callee = *callee;
    }
    Operands(op, v);
    op.result_types = ResultTypes(v, op.results.size());
    op.text = std::string(v);
  }

  static void Operands(MlirOp& op, std::string_view v) {
    std::vector<std::string> inputs, inits;
    bool after_init = false;
    std::size_t end = v.find(kContinuation);
    if (end != std::string_view::npos) v = v.substr(0, end);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '"') {
        i = ClosingQuote(v, i);
        continue;
      }
      if (v.substr(i, 5) == "init:") after_init = true;
      if (v[i] != '%') continue;
      std::size_t e = i + 1;
      while (e < v.size() && (IsIdentChar(v[e]) || v[e] == '#')) ++e;
      std::string name(v.substr(i + 1, e - i - 1));
      std::size_t after = e;
      while (after < v.size() && v[after] == ' ') ++after;
      i = e - 1;
      if (name.empty()) continue;
      if (e < v.size() && v[e] == ':') continue;  // `%a: type` defines a region argument
      if (after < v.size() && v[after] == '=' && v.substr(after, 2) != "==") {
        op.defined_args.push_back(std::move(name));
        continue;
      }
      (after_init ? inits : inputs).push_back(std::move(name));
      after_init = false;
    }
    op.operands = std::move(inputs);
    op.operands.insert(op.operands.end(), inits.begin(), inits.end());
  }

  // The types after the op's last top-level `:`; the part after `->` when it is a function type.
  static std::vector<std::string> ResultTypes(std::string_view v, std::size_t count) {
    if (count == 0) return {};
    std::size_t end = v.find(kContinuation);
    if (end != std::string_view::npos) v = v.substr(0, end);
    int depth = 0;
    std::size_t colon = std::string_view::npos, arrow = std::string_view::npos;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const char c = v[i];
      if (c == '"') {
        i = ClosingQuote(v, i);
        continue;
      }
      if (IsOpen(c)) ++depth;
      if (c == '>' && i > 0 && v[i - 1] == '-') {
        if (depth == 0) arrow = i + 1;
        continue;
      }
      if (IsClose(c)) --depth;
      if (c == ':' && depth == 0) {
        colon = i + 1;
        arrow = std::string_view::npos;
      }
    }
    if (colon == std::string_view::npos) return {};
    std::string_view sig = Trim(v.substr(arrow != std::string_view::npos ? arrow : colon));
    if (sig.size() >= 2 && sig.front() == '(' && sig.back() == ')') {
      sig = sig.substr(1, sig.size() - 2);
    }
    std::vector<std::string> types;
    for (const std::string& t : SplitTopLevel(sig)) types.push_back(TypeToken(t));
    if (types.size() > count) types.erase(types.begin(), types.end() - count);
    while (types.size() < count && !types.empty()) types.push_back(types.back());
    return types;
  }

  // --- lexing -----------------------------------------------------------------------------

  bool Eof() const { return p_ >= s_.size(); }
  char Peek(std::size_t k = 0) const { return p_ + k < s_.size() ? s_[p_ + k] : '\0'; }
  int Column() const { return static_cast<int>(p_ - line_start_) + 1; }

  void Advance() {
    if (s_[p_] == '\n') {
      ++line_;
      line_start_ = p_ + 1;
    }
    ++p_;
  }

  void SkipSpace() {
    while (!Eof()) {
      if (std::isspace(static_cast<unsigned char>(Peek()))) {
        Advance();
      } else if (Peek() == '/' && Peek(1) == '/') {
        while (!Eof() && Peek() != '\n') Advance();
      } else {
        return;
      }
    }
  }

  bool Word(std::string_view w) {
    if (s_.substr(p_, w.size()) != w) return false;
    if (p_ + w.size() < s_.size() && IsIdentChar(s_[p_ + w.size()])) return false;
    for (std::size_t i = 0; i < w.size(); ++i) Advance();
    return true;
  }

  std::string Ident() {
    std::size_t start = p_;
    while (!Eof() && IsIdentChar(Peek())) Advance();
    return std::string(s_.substr(start, p_ - start));
  }

  std::string Symbol() {
    Advance();  // '@'
    if (Peek() == '"') {
      auto q = Quoted();
      return q ? q->substr(1, q->size() - 2) : std::string();
    }
    return Ident();
  }

  Result<std::string> Quoted() {
    std::size_t start = p_;
    Advance();
    while (!Eof() && Peek() != '"') {
      if (Peek() == '\\') Advance();
      if (!Eof()) Advance();
    }
    if (Eof()) return Fail("a string is never closed");
    Advance();
    return std::string(s_.substr(start, p_ - start));
  }

  // A bracketed group starting at the current character, returned with its brackets.
  Result<std::string> Balanced() {
    const std::size_t start = p_;
    const int line = line_, column = Column();
    int depth = 0;
    while (!Eof()) {
      const char c = Peek();
      if (c == '"') {
        if (auto q = Quoted(); !q) return q.error();
        continue;
      }
      if (IsOpen(c)) {
        if (++depth > kMaxDepth) return Fail("brackets nest more than 256 deep");
      } else if (ClosesAt(s_, p_)) {
        --depth;
      }
      Advance();
      if (depth == 0) return std::string(s_.substr(start, p_ - start));
    }
    return MakeError(std::to_string(line) + ":" + std::to_string(column) +
                     ": a bracket opened here is never closed");
  }

  // The rest of a top-level item: to the end of the line, brackets balanced.
  std::string RestOfItem() {
    const std::size_t start = p_;
    int depth = 0;
    while (!Eof()) {
      const char c = Peek();
      if (c == '"') {
        if (!Quoted()) break;
        continue;
      }
      if (c == '\n' && depth <= 0) break;
      if (IsOpen(c)) ++depth;
      if (ClosesAt(s_, p_)) --depth;
      Advance();
    }
    return std::string(s_.substr(start, p_ - start));
  }

  Error Fail(const std::string& what) const {
    return MakeError(std::to_string(line_) + ":" + std::to_string(Column()) + ": " + what);
  }

  std::string_view s_;
  std::size_t p_ = 0;
  int line_ = 1;
  std::size_t line_start_ = 0;
};

}  // namespace

std::optional<std::string> SymbolAfter(std::string_view text, std::string_view key) {
  const std::size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t e = at + key.size();
  while (e < text.size() && IsIdentChar(text[e])) ++e;
  return std::string(text.substr(at + key.size(), e - at - key.size()));
}

std::vector<std::string> SplitTopLevel(std::string_view text, char sep) {
  std::vector<std::string> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      i = ClosingQuote(text, i);
      continue;
    }
    if (IsOpen(c)) ++depth;
    if (ClosesAt(text, i)) --depth;
    if (c == sep && depth == 0) {
      out.emplace_back(Trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  std::string_view last = Trim(text.substr(start));
  if (!last.empty() || !out.empty()) out.emplace_back(last);
  return out;
}

Result<MlirModule> ParseMlirText(std::string_view original) {
  std::string lf;  // CRLF line ends: read as LF
  std::string_view text = original;
  if (original.find('\r') != std::string_view::npos) {
    lf = CrlfToLf(original);
    text = lf;
  }
  int parts = 1;
  std::size_t cut = std::string_view::npos;
  for (std::size_t at = text.find("// -----"); at != std::string_view::npos;
       at = text.find("// -----", at + 8)) {
    if (at != 0 && text[at - 1] != '\n') continue;
    if (cut == std::string_view::npos) cut = at;
    ++parts;
  }
  Parser p(text.substr(0, cut));
  auto m = p.Module();
  if (!m) return m.error();
  m->modules_in_file = parts;
  return m;
}

}  // namespace tpudoctor::mlir
