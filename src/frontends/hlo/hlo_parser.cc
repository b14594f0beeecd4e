// A recursive-descent parser for XLA's HLO text format (the grammar of
// openxla/xla xla/hlo/parser/hlo_parser.cc, as far as analysis needs it): module header, optional
// source tables, computations, and instructions with shapes, operands and attributes. Attribute
// values are kept as balanced raw text and interpreted by the IR builder.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "src/frontends/hlo/hlo_ast.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor::hlo {

const HloAttr* HloInstr::Attr(std::string_view attr_name) const {
  for (const HloAttr& a : attrs) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

namespace {

constexpr int kMaxDepth = 64;  // nesting of shapes and attribute values

// ASCII only, without the locale lookup of std::isalnum.
constexpr bool IsSpace(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

constexpr bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Result<HloModule> Module() {
    HloModule m;
    module_ = &m;
    Skip();
    if (auto form = UnreadableForm(); !form.empty()) return MakeError(form);
    if (Word("HloModule")) {
      Skip();
      m.name = std::string(Name());
      const std::size_t header = pos_;
      // Module attributes: entry_computation_layout, is_scheduled, ...; a line that ends in `,`
      // continues on the next (`debug_attributes={` ... `}` over several lines).
      SkipLine();
      while (Trim(s_.substr(header, pos_ - header)).ends_with(',') && Peek() == '\n') {
        Advance();
        SkipLine();
      }
      const std::string_view attrs = s_.substr(header, pos_ - header);
      if (std::size_t at = attrs.find("num_partitions="); at != std::string_view::npos) {
        std::size_t e = attrs.find_first_not_of("0123456789", at + 15);
        m.partitions = ParseInt64(attrs.substr(at + 15, e - at - 15)).value_or(1);
      }
    }
    for (;;) {
      Skip();
      if (AtEnd()) break;
      if (Word("HloModule")) {  // the next `// -----`-separated module: counted, not read
        ++m.modules_in_file;
        break;
      }
      if (auto table = TableName(); !table.empty()) {
        Table(table);
        continue;
      }
      auto c = Computation();
      if (!c) return c.error();
      // Computations written inline in an attribute (`to_apply={ ... }`) come first: without an
      // ENTRY mark the last computation is the entry.
      for (HloComputation& inline_computation : inline_)
        m.computations.push_back(std::move(inline_computation));
      inline_.clear();
      m.computations.push_back(std::move(*c));
    }
    if (m.computations.empty()) {
      if (m.name.empty())
        return MakeError("the file holds no HLO: no `HloModule` and no computation, only comments");
      return Fail("expected an HLO computation (`ENTRY name {` ... `}`)");
    }
    ResolveFrames(m);
    if (shapeless_ > 0) {
      if (auto inferred = InferMissingShapes(m); !inferred) return inferred.error();
    }
    return m;
  }

 private:
  // A form of XLA program this parser does not read, said in one line; empty for HLO text.
  std::string UnreadableForm() const { return ProtoTextForm(s_.substr(pos_)); }

  // ---- characters ----
  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek(std::size_t ahead = 0) const {
    return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0';
  }
  void Advance() {
    if (Peek() == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }
  int Column() const { return static_cast<int>(pos_ - line_start_) + 1; }
  struct Mark {
    std::size_t pos;
    int line;
    std::size_t line_start;
  };
  Mark Here() const { return {pos_, line_, line_start_}; }
  void Reset(const Mark& m) {
    pos_ = m.pos;
    line_ = m.line;
    line_start_ = m.line_start;
  }
  Error Fail(const std::string& what) const {
    return MakeError(std::to_string(line_) + ":" + std::to_string(Column()) + ": " + what);
  }
  // Spaces, newlines and comments.
  void Skip() {
    for (;;) {
      while (IsSpace(Peek())) Advance();
      if (Peek() == '/' && Peek(1) == '/') {
        while (!AtEnd() && Peek() != '\n') Advance();
      } else if (Peek() == '/' && Peek(1) == '*') {
        while (!AtEnd() && !(Peek() == '*' && Peek(1) == '/')) Advance();
        if (!AtEnd()) {
          Advance();
          Advance();
        }
      } else {
        return;
      }
    }
  }
  // Spaces, tabs and /* comments */ only: instructions end at the end of their line.
  void SkipInline() {
    for (;;) {
      while (Peek() == ' ' || Peek() == '\t' || Peek() == '\r') Advance();
      if (!(Peek() == '/' && Peek(1) == '*')) return;
      while (!AtEnd() && Peek() != '\n' && !(Peek() == '*' && Peek(1) == '/')) Advance();
      if (Peek() == '*') {
        Advance();
        Advance();
      }
    }
  }
  void SkipLine() {
    int depth = 0;
    while (!AtEnd() && !(Peek() == '\n' && depth <= 0)) {
      if (Peek() == '"') {
        SkipString();
        continue;
      }
      if (Peek() == '{' || Peek() == '(' || Peek() == '[') ++depth;
      if (Peek() == '}' || Peek() == ')' || Peek() == ']') --depth;
      Advance();
    }
  }
  bool Word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    const char after = Peek(w.size());
    if (IsAlnum(after) || after == '_' || after == '.') return false;
    for (std::size_t i = 0; i < w.size(); ++i) Advance();
    return true;
  }
  bool Eat(char c) {
    if (Peek() != c) return false;
    Advance();
    return true;
  }
  static bool NameChar(char c) {
    return IsAlnum(c) || c == '_' || c == '.' || c == '-' || c == '$';
  }
  std::string_view Name() {
    if (Peek() == '%') Advance();
    const std::size_t start = pos_;
    while (!AtEnd() && NameChar(Peek())) Advance();
    return s_.substr(start, pos_ - start);
  }
  void SkipString() {
    Advance();  // opening quote
    while (!AtEnd() && Peek() != '"') {
      if (Peek() == '\\' && pos_ + 1 < s_.size()) Advance();
      Advance();
    }
    Eat('"');
  }
  std::string String() {
    std::string out;
    Advance();  // opening quote
    while (!AtEnd() && Peek() != '"') {
      if (Peek() == '\\' && pos_ + 1 < s_.size()) Advance();
      out += Peek();
      Advance();
    }
    Eat('"');
    return out;
  }
  // Balanced raw text up to (not including) a top-level `,` or the end of the line.
  Result<std::string_view> RawValue(bool stop_at_paren = false) {
    const std::size_t start = pos_;
    std::array<char, kMaxDepth> stack;  // the closing brackets awaited, innermost last
    std::size_t depth = 0;
    while (!AtEnd()) {
      const char c = Peek();
      if (depth == 0 && (c == ',' || c == '\n' || (stop_at_paren && c == ')'))) break;
      if (c == '"') {
        SkipString();
        continue;
      }
      if (c == '{' || c == '(' || c == '[') {
        if (depth >= stack.size()) return Fail("attribute value nested too deeply");
        stack[depth++] = c == '{' ? '}' : c == '(' ? ')' : ']';
      } else if (c == '}' || c == ')' || c == ']') {
        if (depth == 0) break;
        if (stack[depth - 1] != c)
          return Fail(std::string("unbalanced `") + c + "` in attribute value");
        --depth;
      }
      Advance();
    }
    if (depth > 0)
      return Fail(std::string("expected `") + stack[depth - 1] + "` before the end of the line");
    return Trim(s_.substr(start, pos_ - start));
  }

  // One balanced `{...}` group.
  Result<Ok> Group() {
    int depth = 0;
    do {
      if (AtEnd()) return Fail("expected `}` to close a layout");
      if (Peek() == '"') {
        SkipString();
        continue;
      }
      if (Peek() == '{' || Peek() == '(' || Peek() == '[') ++depth;
      if (Peek() == '}' || Peek() == ')' || Peek() == ']') --depth;
      if (depth > kMaxDepth) return Fail("layout nested too deeply");
      Advance();
    } while (depth > 0);
    return Ok{};
  }

  // ---- shapes ----
  Result<HloShape> Shape(int depth = 0) {
    if (depth > kMaxDepth) return Fail("shape nested too deeply");
    HloShape sh;
    SkipInline();
    if (Eat('(')) {  // a tuple; long ones span lines, with `/*index=5*/` and `// x` comments
      sh.is_tuple = true;
      Skip();
      if (Eat(')')) return sh;
      do {
        Skip();
        auto e = Shape(depth + 1);
        if (!e) return e.error();
        sh.elements.push_back(std::move(*e));
        Skip();
      } while (Eat(','));
      if (!Eat(')')) return Fail("expected `)` to close a tuple shape");
      return sh;
    }
    const std::size_t type_start = pos_;
    while (IsAlnum(Peek())) Advance();
    const std::string_view type = s_.substr(type_start, pos_ - type_start);
    if (type == "b" && Eat('(')) {  // a buffer: `b(f32[2,4])` has the shape of its contents
      auto contents = Shape(depth + 1);
      if (!contents) return contents.error();
      SkipInline();
      if (!Eat(')')) return Fail("expected `)` to close a buffer shape");
      return contents;
    }
    if (type == "token") {
      sh.is_token = true;
      if (Eat('[')) Eat(']');
      return sh;
    }
    auto dt = HloDType(type);
    if (!dt) return Fail("unknown element type `" + std::string(type) + "`");
    sh.dtype = *dt;
    if (!Eat('[')) return Fail("expected `[` after the element type");
    if (!Eat(']')) {
      sh.dims.reserve(4);
      do {
        SkipInline();
        if (Eat('?')) {
          sh.dynamic.resize(sh.dims.size());  // `dynamic` is only kept for shapes that have one
          sh.dims.push_back(Dim::Unknown());
          sh.dynamic.push_back(true);
          continue;
        }
        const bool bounded = Peek() == '<' && Peek(1) == '=';
        if (bounded) {
          Advance();
          Advance();
        }
        auto v = Integer();
        if (!v) return Fail("expected a dimension size");
        if (bounded || !sh.dynamic.empty()) {
          sh.dynamic.resize(sh.dims.size());
          sh.dynamic.push_back(bounded);
        }
        sh.dims.push_back(Dim::Static(*v));
      } while (Eat(','));
      if (!Eat(']')) return Fail("expected `]` to close the dimensions");
    }
    if (Peek() == '{') {  // layout: {1,0} or {0:T(8,128)...}
      if (auto layout = Group(); !layout) return layout.error();
    }
    return sh;
  }
  std::optional<std::int64_t> Integer() {
    const std::size_t start = pos_;
    if (Peek() == '-') Advance();
    while (std::isdigit(static_cast<unsigned char>(Peek()))) Advance();
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(s_.data() + start, s_.data() + pos_, v);
    if (ec != std::errc() || p == s_.data() + start) return std::nullopt;
    return v;
  }

  // ---- computations and instructions ----

  // `(p0: f32[8]{0}, ...) -> f32[<=16]{0:T(1024)S(1)}` after a computation's name, or nothing
  // (`add_comb {`). The result type may be a tuple and may carry a layout, whose `{` is not the
  // body's: the body's `{` is the first one after the whole type.
  Result<Ok> Signature() {
    if (Peek() != '(') return Ok{};
    if (auto params = Group(); !params) return params.error();
    Skip();
    if (!(Peek() == '-' && Peek(1) == '>')) return Ok{};
    Advance();
    Advance();
    SkipInline();
    if (Peek() == '(') return Group();  // a tuple result, layouts inside
    while (!AtEnd() && (std::isalnum(static_cast<unsigned char>(Peek())) || Peek() == '_'))
      Advance();  // element type
    if (Peek() == '[') {
      if (auto dims = Group(); !dims) return dims.error();
    }
    if (Peek() == '{') return Group();  // the result's layout
    return Ok{};
  }

  Result<HloComputation> Computation() {
    HloComputation c;
    c.line = line_;
    if (Word("ENTRY")) {
      c.entry = true;
      Skip();
    }
    c.name = Name();
    if (c.name.empty()) return Fail("expected a computation name");
    Skip();
    if (auto r = Signature(); !r) return r.error();
    Skip();
    if (!Eat('{')) return Fail("expected `{` to open computation `" + std::string(c.name) + "`");
    if (auto body = Body(c); !body) return body.error();
    SkipInline();
    if (Peek() == ',') SkipLine();  // , execution_thread="..."
    return c;
  }

  // The instructions of a computation up to its closing `}`, with the nested instructions and
  // tuple elements its operands made placed before their users.
  Result<Ok> Body(HloComputation& c) {
    // One instruction per line, mostly: reserve so a large computation is not moved as it grows.
    const std::size_t close = s_.find("\n}", pos_);
    const std::string_view body =
        s_.substr(pos_, close == std::string_view::npos ? 0 : close - pos_);
    c.instrs.reserve(static_cast<std::size_t>(std::count(body.begin(), body.end(), '\n')) + 1);
    std::vector<HloInstr> outer_pending;
    std::set<std::string, std::less<>> outer_names;
    std::swap(pending_, outer_pending);
    std::swap(local_names_, outer_names);
    Result<Ok> result = Ok{};
    for (;;) {
      Skip();
      if (AtEnd()) {
        result = Fail("expected `}` to close computation `" + std::string(c.name) + "`");
        break;
      }
      if (Eat('}')) break;
      auto ins = Instruction();
      if (!ins) {
        result = ins.error();
        break;
      }
      for (HloInstr& made : pending_) c.instrs.push_back(std::move(made));
      pending_.clear();
      c.instrs.push_back(std::move(*ins));
    }
    std::swap(pending_, outer_pending);
    std::swap(local_names_, outer_names);
    if (result) NameTupleElements(c);
    return result;
  }

  // The get-tuple-elements made for `t#i` operands are named as XLA names them: `#` sanitized to
  // `_`, then made unique in the computation (`t_1`, or `t_1.1` when `t_1` is taken).
  void NameTupleElements(HloComputation& c) {
    if (std::none_of(c.instrs.begin(), c.instrs.end(), [](const HloInstr& ins) {
          return ins.name.find('#') != std::string_view::npos;
        }))
      return;
    std::set<std::string_view> taken;
    for (const HloInstr& ins : c.instrs) taken.insert(ins.name);
    std::map<std::string_view, std::string_view> renamed;
    for (HloInstr& ins : c.instrs) {
      if (ins.name.find('#') == std::string_view::npos) continue;
      std::string base(ins.name);
      std::replace(base.begin(), base.end(), '#', '_');
      std::string name = base;
      for (int n = 1; taken.contains(name); ++n) name = base + "." + std::to_string(n);
      const std::string_view kept = module_->Keep(name);
      taken.insert(kept);
      renamed[ins.name] = kept;
      ins.name = kept;
    }
    if (renamed.empty()) return;
    for (HloInstr& ins : c.instrs) {
      for (std::string_view& op : ins.operands) {
        if (auto it = renamed.find(op); it != renamed.end()) op = it->second;
      }
    }
  }

  Result<HloInstr> Instruction() {
    HloInstr ins;
    ins.line = line_;
    ins.column = Column();
    if (Word("ROOT")) {
      ins.root = true;
      SkipInline();
    }
    ins.name = Name();
    if (ins.name.empty()) return Fail("expected an instruction name");
    SkipInline();
    if (!Eat('=')) return Fail("expected `=` after `" + std::string(ins.name) + "`");
    Skip();  // a long tuple shape may start on the next line
    if (auto rhs = InstructionRhs(ins, /*allow_attributes=*/true); !rhs) return rhs.error();
    SkipInline();
    if (!AtEnd() && Peek() != '\n' && !(Peek() == '/' && Peek(1) == '/')) {
      return Fail(std::string("unexpected `") + Peek() + "` after instruction `" +
                  std::string(ins.name) + "`");
    }
    return ins;
  }

  // What follows `name =`: `[shape] opcode(operands)[, attributes]`. XLA infers the shape of an
  // instruction written without one (hlo_parser.cc, CanInferShape); so does InferMissingShapes.
  Result<Ok> InstructionRhs(HloInstr& ins, bool allow_attributes) {
    ins.shape_given = ShapeFollows();
    if (!ins.shape_given) ++shapeless_;
    if (ins.shape_given) {
      auto shape = Shape();
      if (!shape) return shape.error();
      ins.shape = std::move(*shape);
      Skip();  // a long tuple shape may put the opcode on the next line
    }
    const std::size_t opcode_start = pos_;
    while (NameChar(Peek())) Advance();
    ins.opcode = s_.substr(opcode_start, pos_ - opcode_start);
    if (ins.opcode.empty()) return Fail("expected an opcode");
    SkipInline();
    if (!Eat('(')) return Fail("expected `(` after opcode `" + std::string(ins.opcode) + "`");
    auto operands = Operands();
    if (!operands) return operands.error();
    ins.operands = std::move(*operands);
    while (allow_attributes) {
      SkipInline();
      if (!Eat(',')) break;
      if (ins.attrs.empty()) ins.attrs.reserve(4);
      Skip();  // attributes may continue on the next lines
      auto a = Attribute(ins);
      if (!a) return a.error();
      ins.attrs.push_back(*a);
    }
    return Ok{};
  }

  // Whether a shape starts here (`f32[`, `(`, `token[`, `b(`) rather than an opcode.
  bool ShapeFollows() const {
    if (Peek() == '(') return true;
    std::size_t end = pos_;
    while (end < s_.size() && IsAlnum(s_[end])) ++end;
    const std::string_view word = s_.substr(pos_, end - pos_);
    const char after = end < s_.size() ? s_[end] : '\0';
    return (after == '[' && !word.empty()) || (word == "b" && after == '(');
  }

  // Past the text of a shape (`f32[2,3]{1,0}`, `(s32[], f32[4])`) without building it: brackets
  // balanced, up to a space, `,` or unmatched `)` outside them.
  void SkipShapeText() {
    int depth = 0;
    while (!AtEnd()) {
      const char c = Peek();
      if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) return;
        --depth;
      } else if (depth == 0 && (c == ' ' || c == ',' || c == '\n' || c == '\t')) {
        return;
      }
      Advance();
    }
  }

  // `name=value`; a computation written inline (`to_apply={ p = f32[] parameter(0) ... }`) is
  // parsed as one, named after its caller, and the value becomes its name.
  Result<HloAttr> Attribute(const HloInstr& ins) {
    HloAttr a;
    const std::size_t name_start = pos_;
    while (NameChar(Peek())) Advance();
    a.name = s_.substr(name_start, pos_ - name_start);
    if (a.name.empty() || !Eat('=')) return Fail("expected `name=value` attribute");
    SkipInline();
    if (Peek() == '\n') Skip();  // `backend_config=` with its value on the next line
    if (CallsComputations(a.name) && InlineComputationFollows()) {
      std::string name = std::string(ins.name) + "." + std::string(a.name);
      while (inline_names_.contains(name)) name += ".1";
      inline_names_.insert(name);
      auto body = InlineComputation(module_->Keep(name));
      if (!body) return body.error();
      a.value = body->name;
      inline_.push_back(std::move(*body));
      return a;
    }
    auto v = RawValue();
    if (!v) return v.error();
    a.value = *v;
    return a;
  }

  // `{` followed by an instruction (`name =` or `ROOT`) rather than a list of names.
  bool InlineComputationFollows() const {
    if (Peek() != '{') return false;
    std::size_t at = s_.find_first_not_of(" \t\r\n", pos_ + 1);
    if (at == std::string_view::npos) return false;
    if (s_.substr(at, 5) == "ROOT ") return true;
    if (s_[at] == '%') ++at;
    while (at < s_.size() && NameChar(s_[at])) ++at;
    at = s_.find_first_not_of(" \t", at);
    return at != std::string_view::npos && s_[at] == '=' && at + 1 < s_.size() && s_[at + 1] != '=';
  }

  Result<HloComputation> InlineComputation(std::string_view name) {
    if (++inline_depth_ > kMaxDepth) return Fail("inline computations nested too deeply");
    HloComputation c;
    c.name = name;
    c.line = line_;
    Advance();  // `{`
    auto body = Body(c);
    --inline_depth_;
    if (!body) return body.error();
    return c;
  }

  // Operands: `a, f32[2]{0} %b, s32[] c` — an optional shape, then a name; `%t#1#0` (element 0 of
  // element 1 of tuple `t`); or a nested instruction, `add(f32[4] parameter(0), x)`. Constants
  // keep their literal (`constant(1)`, `constant({1, 2})`).
  Result<std::vector<std::string_view>> Operands() {
    std::vector<std::string_view> out;
    SkipInline();
    if (Eat(')')) return out;
    out.reserve(4);  // most instructions have 1-3 operands: one allocation, no regrowth
    for (;;) {
      Skip();
      auto nested = NestedInstruction();
      if (!nested) return nested.error();
      if (!nested->empty()) {
        out.push_back(*nested);
      } else {
        auto raw = RawValue(/*stop_at_paren=*/true);
        if (!raw) return raw.error();
        auto name = OperandName(*raw);
        if (!name) return name.error();
        out.push_back(*name);
      }
      Skip();
      if (Eat(',')) continue;
      if (Eat(')')) return out;
      return Fail("expected `,` or `)` in the operand list");
    }
  }

  // A nested instruction operand (`[shape] opcode(...)`, no attributes) is added to the
  // computation before the instruction that uses it, under a made-up name, which is returned.
  // Empty when the operand is not one.
  Result<std::string_view> NestedInstruction() {
    if (Peek() == '%') return std::string_view();  // `%name`: the common case, decided at once
    const Mark mark = Here();
    if (ShapeFollows()) {
      SkipShapeText();
      SkipInline();
    }
    while (NameChar(Peek())) Advance();
    const bool nested = pos_ > mark.pos && NameChar(s_[pos_ - 1]) && Peek() == '(';
    Reset(mark);
    if (!nested) return std::string_view();
    if (++nested_depth_ > kMaxDepth) return Fail("nested instructions too deep");
    HloInstr ins;
    ins.line = line_;
    ins.column = Column();
    auto rhs = InstructionRhs(ins, /*allow_attributes=*/false);
    --nested_depth_;
    if (!rhs) return rhs.error();
    std::string name = std::string(ins.opcode) + ".anon";
    for (int n = 1; local_names_.contains(name); ++n)
      name = std::string(ins.opcode) + ".anon." + std::to_string(n);
    ins.name = module_->Keep(name);
    local_names_.insert(name);
    pending_.push_back(std::move(ins));
    return pending_.back().name;
  }

  // The name of an operand written `[shape] [%]name[#i[#j]]`. A `#i` suffix reads a tuple
  // element: a get-tuple-element per suffix is added (once per computation), named as written.
  Result<std::string_view> OperandName(std::string_view text) {
    std::string kept;
    if (text.find("/*") != std::string_view::npos) {
      // Drop /*index=N*/ comments that long operand lists carry.
      kept = std::string(text);
      for (std::size_t c = kept.find("/*"); c != std::string::npos; c = kept.find("/*")) {
        const std::size_t e = kept.find("*/", c);
        kept.erase(c, e == std::string::npos ? std::string::npos : e + 2 - c);
      }
      text = module_->Keep(std::move(kept));
    }
    // The name is the last token: after an optional shape and layout.
    std::size_t start = text.size();
    while (start > 0 &&
           (NameChar(text[start - 1]) || text[start - 1] == '%' || text[start - 1] == '#'))
      --start;
    std::string_view name = text.substr(start);
    if (!name.empty() && name[0] == '%') name.remove_prefix(1);
    std::string_view whole = Trim(text);
    if (!whole.empty() && whole[0] == '%') whole.remove_prefix(1);
    if (start == 0 || text.find_first_of("[(") == std::string_view::npos) name = whole;
    if (const std::size_t hash = name.find('#'); hash != std::string_view::npos)
      return TupleElements(name, hash);
    return name;
  }

  // For `t#1#0`: `t#1 = get-tuple-element(t), index=1` and `t#1#0 = ...(t#1), index=0`, named as
  // written (XLA's own name table keys them so; no instruction name can contain `#`). Returns the
  // last one's name.
  Result<std::string_view> TupleElements(std::string_view name, std::size_t hash) {
    std::string_view tuple = name.substr(0, hash);
    while (hash != std::string_view::npos) {
      const std::size_t next = name.find('#', hash + 1);
      const std::string_view element = name.substr(0, next);
      const std::string_view index = name.substr(hash + 1, element.size() - hash - 1);
      if (index.empty() || index.find_first_not_of("0123456789") != std::string_view::npos)
        return Fail("expected a tuple index after `#` in `" + std::string(name) + "`");
      if (local_names_.insert(std::string(element)).second) {
        HloInstr gte;
        gte.name = element;
        gte.opcode = "get-tuple-element";
        gte.shape_given = false;
        ++shapeless_;
        gte.operands.push_back(tuple);
        gte.attrs.push_back({"index", index});
        gte.line = line_;
        gte.column = Column();
        pending_.push_back(std::move(gte));
      }
      tuple = element;
      hash = next;
    }
    return tuple;
  }

  // ---- source tables of optimized dumps ----
  std::string TableName() {
    for (std::string_view t : {"FileNames", "FunctionNames", "FileLocations", "StackFrames"}) {
      if (Word(t)) return std::string(t);
    }
    return {};
  }
  void Table(const std::string& table) {
    for (;;) {
      SkipInline();
      if (Peek() == '\n') Advance();
      SkipInline();
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) return;
      auto id = Integer();
      SkipInline();
      const std::size_t start = pos_;
      while (!AtEnd() && Peek() != '\n') Advance();
      std::string rest(s_.substr(start, pos_ - start));
      if (!id) continue;
      if (table == "FileNames") files_[*id] = std::string(Trim(rest)).substr(rest.empty() ? 0 : 0);
      if (table == "FileLocations") locations_[*id] = rest;
      if (table == "StackFrames") frames_[*id] = rest;
    }
  }
  static std::optional<long> Field(const std::string& text, std::string_view key) {
    auto at = text.find(std::string(key) + "=");
    if (at == std::string::npos) return std::nullopt;
    auto v = ParseInt64(std::string_view(text).substr(
        at + key.size() + 1, text.find_first_of(" }", at) - (at + key.size() + 1)));
    if (!v) return std::nullopt;
    return static_cast<long>(*v);
  }
  void ResolveFrames(HloModule& m) {
    for (const auto& [id, frame] : frames_) {
      auto loc_id = Field(frame, "file_location_id");
      if (!loc_id || !locations_.count(*loc_id)) continue;
      const std::string& loc = locations_[*loc_id];
      SourceLoc sl;
      if (auto file = Field(loc, "file_name_id"); file && files_.count(*file)) {
        std::string f = files_[*file];
        if (f.size() >= 2 && f.front() == '"') f = f.substr(1, f.size() - 2);
        sl.file = f;
      }
      if (auto ln = Field(loc, "line")) sl.line = static_cast<int>(*ln);
      m.stack_frames[id] = sl;
    }
  }

  std::string_view s_;
  HloModule* module_ = nullptr;  // the module being parsed (for `Keep`)
  std::size_t pos_ = 0;
  int line_ = 1;
  std::size_t line_start_ = 0;
  std::map<long, std::string> files_, locations_, frames_;
  // Instructions made while parsing the current one (nested operands, `t#i` elements), and the
  // names made in the current computation.
  std::vector<HloInstr> pending_;
  std::set<std::string, std::less<>> local_names_;
  // Computations written inline in attributes, added to the module before the computation that
  // holds them; their names (unique in the module).
  std::vector<HloComputation> inline_;
  std::set<std::string, std::less<>> inline_names_;
  int inline_depth_ = 0;
  int nested_depth_ = 0;
  std::size_t shapeless_ = 0;  // instructions whose shape InferMissingShapes fills
};

}  // namespace

bool CallsComputations(std::string_view attr_name) {
  static constexpr std::string_view kCalling[] = {"body",
                                                  "branch_computations",
                                                  "called_computations",
                                                  "calls",
                                                  "condition",
                                                  "false_computation",
                                                  "scatter",
                                                  "select",
                                                  "to_apply",
                                                  "true_computation"};
  return std::find(std::begin(kCalling), std::end(kCalling), attr_name) != std::end(kCalling);
}

std::string ProtoTextForm(std::string_view text) {
  std::size_t at = text.find_first_not_of(" \t\r\n");
  while (at != std::string_view::npos && text[at] == '#') {  // `# RUN:` lines of a test file
    at = text.find('\n', at);
    if (at != std::string_view::npos) at = text.find_first_not_of(" \t\r\n", at);
  }
  if (at == std::string_view::npos) return {};
  const std::string_view rest = text.substr(at, 4096);
  const bool proto =
      rest.starts_with("hlo_module {") || rest.starts_with("hlo_module{") ||
      rest.starts_with("hlo {") ||
      (rest.starts_with("name:") &&
       rest.find("entry_computation_name:") != std::string_view::npos) ||
      (rest.starts_with("computations {") && rest.find("opcode:") != std::string_view::npos);
  if (!proto) return {};
  return "this is an HloModuleProto in protobuf text format, not HLO text; give the module's HLO "
         "text instead (`HloModule name` then its computations: XLA's --xla_dump_hlo_as_text "
         "dump, or `HloModule::ToString()`)";
}

std::optional<DType> HloDType(std::string_view t) {
  static const std::pair<std::string_view, DType> kTypes[] = {
      {"pred", DType::kBool},
      {"s4", DType::kInt4},
      {"s8", DType::kInt8},
      {"s16", DType::kInt16},
      {"s32", DType::kInt32},
      {"s64", DType::kInt64},
      {"u4", DType::kUInt4},
      {"u8", DType::kUInt8},
      {"u16", DType::kUInt16},
      {"u32", DType::kUInt32},
      {"u64", DType::kUInt64},
      {"f16", DType::kFloat16},
      {"bf16", DType::kBFloat16},
      {"f32", DType::kFloat32},
      {"f64", DType::kFloat64},
      {"c64", DType::kComplex64},
      {"c128", DType::kComplex128},
      {"f8e4m3fn", DType::kFloat8E4M3FN},
      {"f8e5m2", DType::kFloat8E5M2},
      {"f8e4m3fnuz", DType::kFloat8E4M3FNUZ},
      {"f8e5m2fnuz", DType::kFloat8E5M2FNUZ},
      {"f4e2m1fn", DType::kFloat4E2M1},
      // Other sub-byte and float8 variants have no IR dtype: unknown, never a crash.
      {"s1", DType::kUnknown},
      {"s2", DType::kUnknown},
      {"u1", DType::kUnknown},
      {"u2", DType::kUnknown},
      {"f8e4m3", DType::kUnknown},
      {"f8e3m4", DType::kUnknown},
      {"f8e4m3b11fnuz", DType::kUnknown},
      {"f8e8m0fnu", DType::kUnknown},
      {"opaque", DType::kUnknown},
  };
  for (const auto& [name, d] : kTypes) {
    if (name == t) return d;
  }
  return std::nullopt;
}

Result<HloModule> ParseHloText(std::string_view text) {
  if (text.find('\r') == std::string_view::npos) return Parser(text).Module();
  // CRLF line ends: read as LF, kept by the module.
  auto lf = std::make_unique<std::string>(CrlfToLf(text));
  auto m = Parser(*lf).Module();
  if (m) m->owned.push_back(std::move(lf));
  return m;
}

}  // namespace tpudoctor::hlo
