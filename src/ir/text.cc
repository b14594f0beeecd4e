#include "tpudoctor/ir/text.h"

#include <cctype>
#include <charconv>
#include <cstdio>

#include "src/ir/text_lexer.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

bool IsPlainIdent(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  }
  return s != "_";
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string Name(std::string_view s) { return IsPlainIdent(s) ? std::string(s) : Quote(s); }

std::string FormatDouble(double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string DimText(const Dim& d) {
  if (d.is_symbol() || d.is_bounded()) return Name(d.ToString());
  return d.ToString();
}

std::string TypeText(const TensorType& t) {
  std::string shape;
  if (!t.shape.rank_known()) {
    shape = "[*]";
  } else {
    shape = "[";
    for (std::size_t i = 0; i < t.shape.rank(); ++i) {
      if (i > 0) shape += ',';
      shape += DimText(t.shape.dim(i));
    }
    shape += ']';
  }
  std::string inner = std::string(NameOf(t.dtype)) + shape;
  if (t.kind == ValueKind::kTensor) return inner;
  return std::string(NameOf(t.kind)) + "<" + inner + ">";
}

std::string ValueDecl(const Value& v) {
  std::string out = "%" + Name(v.name) + ": " + TypeText(v.type);
  if (v.known_ints) {
    out += " known=[";
    for (std::size_t i = 0; i < v.known_ints->size(); ++i) {
      if (i > 0) out += ',';
      out += DimText((*v.known_ints)[i]);
    }
    out += ']';
  }
  if (v.known_strings) {
    out += " strings=[";
    for (std::size_t i = 0; i < v.known_strings->size(); ++i) {
      if (i > 0) out += ',';
      out += Quote((*v.known_strings)[i]);
    }
    out += ']';
  }
  return out;
}

struct AttrPrinter {
  std::string operator()(std::int64_t v) const { return std::to_string(v); }
  std::string operator()(double v) const { return FormatDouble(v); }
  std::string operator()(const std::string& v) const { return Quote(v); }
  template <typename T>
  std::string operator()(const std::vector<T>& v) const {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i > 0) out += ',';
      out += (*this)(v[i]);
    }
    return out + "]";
  }
};

void PrintInto(const Graph& g, int indent, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  const std::string in = pad + "  ";
  out += "graph " + Name(g.name()) + " {\n";
  for (const Value& v : g.values()) {
    if (v.origin == ValueOrigin::kGraphInput) out += in + "input " + ValueDecl(v) + "\n";
    if (v.origin == ValueOrigin::kInitializer) out += in + "init " + ValueDecl(v) + "\n";
    if (v.origin == ValueOrigin::kCaptured) out += in + "capture " + ValueDecl(v) + "\n";
  }
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    out += in;
    if (n.outputs.empty()) out += "_";
    for (std::size_t i = 0; i < n.outputs.size(); ++i) {
      if (i > 0) out += ", ";
      out += ValueDecl(g.value(n.outputs[i]));
    }
    out += " = " + Name(n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type);
    out += "[" + std::string(NameOf(n.kind)) + "](";
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      if (i > 0) out += ", ";
      out += n.inputs[i] == kNoValue ? "%_" : "%" + Name(g.value(n.inputs[i]).name);
    }
    out += ")";
    if (!n.attrs.empty()) {
      out += " {";
      for (std::size_t i = 0; i < n.attrs.size(); ++i) {
        if (i > 0) out += ", ";
        out += Name(n.attrs[i].name) + "=" + std::visit(AttrPrinter{}, n.attrs[i].value);
      }
      out += "}";
    }
    if (!n.name.empty()) out += " name=" + Quote(n.name);
    if (!n.framework_op.empty()) out += " op=" + Quote(n.framework_op);
    if (!n.loc.scope.empty()) out += " scope=" + Quote(n.loc.scope);
    if (!n.loc.file.empty()) out += " file=" + Quote(n.loc.file);
    if (n.loc.line > 0) out += " line=" + std::to_string(n.loc.line);
    if (n.loc.column > 0) out += " col=" + std::to_string(n.loc.column);
    out += "\n";
    for (const Subgraph& s : n.subgraphs) {
      out += in + "subgraph " + Name(s.attr_name) + " ";
      PrintInto(*s.graph, indent + 2, out);
    }
  }
  for (ValueId o : g.outputs()) out += in + "output %" + Name(g.value(o).name) + "\n";
  out += pad + "}\n";
}

// ---------------------------------------------------------------------------------------------
// Parser: recursive descent over the tokens of text_lexer.h.

class Parser {
 public:
  explicit Parser(std::string_view text) : lex_(text) {}

  Result<Graph> ParseTop() {
    auto g = ParseGraph();
    if (!g) return g.error();
    if (lex_.Peek().kind != TokKind::kEnd) return Fail("expected end of input");
    return std::move(*g);
  }

 private:
  Error Fail(const std::string& what) const {
    const Token& t = lex_.Peek();
    return MakeError(std::to_string(t.line) + ":" + std::to_string(t.col) + ": " + what +
                     (t.kind == TokKind::kEnd ? "" : ", found `" + t.text + "`"));
  }
  bool Accept(TokKind k, std::string_view text = {}) {
    const Token& t = lex_.Peek();
    if (t.kind != k || (!text.empty() && t.text != text)) return false;
    lex_.Next();
    return true;
  }
  bool AtWord(std::string_view w) const {
    const Token& t = lex_.Peek();
    return t.kind == TokKind::kIdent && t.text == w;
  }
  // An identifier or a quoted string.
  std::optional<std::string> NameTok() {
    const Token& t = lex_.Peek();
    if (t.kind != TokKind::kIdent && t.kind != TokKind::kString) return std::nullopt;
    return lex_.Next().text;
  }

  Result<Graph> ParseGraph() {
    if (!Accept(TokKind::kIdent, "graph")) return Fail("expected `graph`");
    auto name = NameTok();
    if (!name) return Fail("expected a graph name");
    Graph g(*name);
    if (!Accept(TokKind::kPunct, "{")) return Fail("expected `{`");
    NodeId last_node = kNoNode;
    while (!Accept(TokKind::kPunct, "}")) {
      if (lex_.Peek().kind == TokKind::kEnd) return Fail("expected `}`");
      auto ok = ParseStatement(g, last_node);
      if (!ok) return ok.error();
    }
    auto fin = g.Finalize();
    if (!fin) return fin.error();
    return g;
  }

  Result<Ok> ParseStatement(Graph& g, NodeId& last_node) {
    if (AtWord("input") || AtWord("init") || AtWord("capture")) {
      std::string word = lex_.Next().text;
      auto origin = word == "input"  ? ValueOrigin::kGraphInput
                    : word == "init" ? ValueOrigin::kInitializer
                                     : ValueOrigin::kCaptured;
      auto v = ParseValueDecl(g, origin);
      if (!v) return v.error();
      if (origin == ValueOrigin::kGraphInput) g.AddInput(*v);
      return Ok{};
    }
    if (AtWord("output")) {
      lex_.Next();
      auto ref = ParseRef(g);
      if (!ref) return ref.error();
      if (*ref == kNoValue) return Fail("a graph output cannot be `%_`");
      g.AddOutput(*ref);
      return Ok{};
    }
    if (AtWord("subgraph")) {
      lex_.Next();
      if (last_node == kNoNode) return Fail("`subgraph` must follow a node");
      auto attr = NameTok();
      if (!attr) return Fail("expected the subgraph's attribute name");
      auto sub = ParseGraph();
      if (!sub) return sub.error();
      g.mutable_node(last_node).subgraphs.push_back(
          Subgraph{*attr, std::make_unique<Graph>(std::move(*sub))});
      return Ok{};
    }
    auto id = ParseNode(g);
    if (!id) return id.error();
    last_node = *id;
    return Ok{};
  }

  Result<ValueId> ParseValueDecl(Graph& g, ValueOrigin origin) {
    if (!Accept(TokKind::kPunct, "%")) return Fail("expected `%`");
    auto name = NameTok();
    if (!name) return Fail("expected a value name");
    if (g.FindValue(*name)) return Fail("value `" + *name + "` is defined twice");
    if (!Accept(TokKind::kPunct, ":")) return Fail("expected `:`");
    auto type = ParseType();
    if (!type) return type.error();
    ValueId id = g.AddValue(*name, std::move(*type), origin);
    if (AtWord("known")) {
      lex_.Next();
      if (!Accept(TokKind::kPunct, "=")) return Fail("expected `=`");
      auto dims = ParseDimList();
      if (!dims) return dims.error();
      g.mutable_value(id).known_ints = std::move(*dims);
    }
    if (AtWord("strings")) {
      lex_.Next();
      if (!Accept(TokKind::kPunct, "=") || !Accept(TokKind::kPunct, "[")) {
        return Fail("expected `=[`");
      }
      std::vector<std::string> strings;
      while (!Accept(TokKind::kPunct, "]")) {
        if (!strings.empty() && !Accept(TokKind::kPunct, ",")) return Fail("expected `,` or `]`");
        if (lex_.Peek().kind != TokKind::kString) return Fail("expected a string");
        strings.push_back(lex_.Next().text);
      }
      g.mutable_value(id).known_strings = std::move(strings);
    }
    return id;
  }

  Result<TensorType> ParseType() {
    TensorType t;
    const Token& tok = lex_.Peek();
    if (tok.kind != TokKind::kIdent) return Fail("expected a type");
    std::string word = lex_.Next().text;
    bool wrapped = false;
    for (ValueKind k : {ValueKind::kSequence, ValueKind::kMap, ValueKind::kOptional}) {
      if (word == NameOf(k)) {
        t.kind = k;
        wrapped = true;
      }
    }
    if (wrapped) {
      if (!Accept(TokKind::kPunct, "<")) return Fail("expected `<`");
      if (lex_.Peek().kind != TokKind::kIdent) return Fail("expected an element type");
      word = lex_.Next().text;
    }
    auto dtype = ParseDType(word);
    if (!dtype) return Fail("unknown element type `" + word + "`");
    t.dtype = *dtype;
    if (!Accept(TokKind::kPunct, "[")) return Fail("expected `[`");
    if (Accept(TokKind::kPunct, "*")) {
      if (!Accept(TokKind::kPunct, "]")) return Fail("expected `]`");
    } else {
      std::vector<Dim> dims;
      if (!Accept(TokKind::kPunct, "]")) {
        do {
          auto d = ParseDim();
          if (!d) return d.error();
          dims.push_back(std::move(*d));
        } while (Accept(TokKind::kPunct, ","));
        if (!Accept(TokKind::kPunct, "]")) return Fail("expected `]`");
      }
      t.shape = Shape(std::move(dims));
    }
    if (wrapped && !Accept(TokKind::kPunct, ">")) return Fail("expected `>`");
    return t;
  }

  Result<Dim> ParseDim() {
    const Token& t = lex_.Peek();
    if (t.kind == TokKind::kInt) {
      std::int64_t v = 0;
      auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
      if (ec != std::errc() || p != t.text.data() + t.text.size()) return Fail("bad dimension");
      lex_.Next();
      return Dim::Static(v);
    }
    if (Accept(TokKind::kPunct, "?")) return Dim::Unknown();
    if (auto name = NameTok()) {
      std::string_view n = *name;
      if (n.starts_with("<=") && n.size() > 2 &&
          n.find_first_not_of("0123456789", 2) == std::string_view::npos) {
        std::int64_t bound = 0;
        auto [p, ec] = std::from_chars(n.data() + 2, n.data() + n.size(), bound);
        if (ec == std::errc() && p == n.data() + n.size()) return Dim::Bounded(bound);
      }
      return Dim::Symbol(*name);
    }
    return Fail("expected a dimension");
  }

  Result<std::vector<Dim>> ParseDimList() {
    if (!Accept(TokKind::kPunct, "[")) return Fail("expected `[`");
    std::vector<Dim> dims;
    if (Accept(TokKind::kPunct, "]")) return dims;
    do {
      auto d = ParseDim();
      if (!d) return d.error();
      dims.push_back(std::move(*d));
    } while (Accept(TokKind::kPunct, ","));
    if (!Accept(TokKind::kPunct, "]")) return Fail("expected `]`");
    return dims;
  }

  Result<ValueId> ParseRef(const Graph& g) {
    if (!Accept(TokKind::kPunct, "%")) return Fail("expected `%`");
    if (Accept(TokKind::kIdent, "_")) return kNoValue;
    auto name = NameTok();
    if (!name) return Fail("expected a value name");
    auto id = g.FindValue(*name);
    if (!id) return Fail("value `" + *name + "` is not defined before its use");
    return *id;
  }

  Result<NodeId> ParseNode(Graph& g) {
    Node n;
    if (!Accept(TokKind::kIdent, "_")) {
      do {
        auto v = ParseValueDecl(g, ValueOrigin::kNodeOutput);
        if (!v) return v.error();
        n.outputs.push_back(*v);
      } while (Accept(TokKind::kPunct, ","));
    }
    if (!Accept(TokKind::kPunct, "=")) return Fail("expected `=`");
    auto op = NameTok();
    if (!op) return Fail("expected an op name");
    auto sep = op->rfind("::");
    if (sep == std::string::npos) {
      n.op_type = *op;
    } else {
      n.domain = op->substr(0, sep);
      n.op_type = op->substr(sep + 2);
    }
    if (!Accept(TokKind::kPunct, "[")) return Fail("expected `[` and an op kind");
    auto kind_tok = NameTok();
    auto kind = kind_tok ? ParseOpKind(*kind_tok) : std::nullopt;
    if (!kind) return Fail("expected an op kind");
    n.kind = *kind;
    if (!Accept(TokKind::kPunct, "]")) return Fail("expected `]`");
    if (!Accept(TokKind::kPunct, "(")) return Fail("expected `(`");
    if (!Accept(TokKind::kPunct, ")")) {
      do {
        auto ref = ParseRef(g);
        if (!ref) return ref.error();
        n.inputs.push_back(*ref);
      } while (Accept(TokKind::kPunct, ","));
      if (!Accept(TokKind::kPunct, ")")) return Fail("expected `)`");
    }
    if (Accept(TokKind::kPunct, "{")) {
      do {
        auto a = ParseAttr();
        if (!a) return a.error();
        n.attrs.push_back(std::move(*a));
      } while (Accept(TokKind::kPunct, ","));
      if (!Accept(TokKind::kPunct, "}")) return Fail("expected `}`");
    }
    for (;;) {
      if (AtWord("name") || AtWord("op") || AtWord("scope") || AtWord("file")) {
        std::string key = lex_.Next().text;
        if (!Accept(TokKind::kPunct, "=")) return Fail("expected `=`");
        if (lex_.Peek().kind != TokKind::kString) return Fail("expected a string");
        std::string val = lex_.Next().text;
        (key == "name"    ? n.name
         : key == "op"    ? n.framework_op
         : key == "scope" ? n.loc.scope
                          : n.loc.file) = val;
      } else if (AtWord("line") || AtWord("col")) {
        std::string key = lex_.Next().text;
        if (!Accept(TokKind::kPunct, "=")) return Fail("expected `=`");
        if (lex_.Peek().kind != TokKind::kInt) return Fail("expected an integer");
        auto parsed = ParseInt64(lex_.Peek().text);
        if (!parsed || *parsed < 0 || *parsed > 1000000000) return Fail("bad line or column");
        lex_.Next();
        int v = static_cast<int>(*parsed);
        (key == "line" ? n.loc.line : n.loc.column) = v;
      } else {
        break;
      }
    }
    return g.AddNode(std::move(n));
  }

  Result<Attribute> ParseAttr() {
    auto name = NameTok();
    if (!name) return Fail("expected an attribute name");
    if (!Accept(TokKind::kPunct, "=")) return Fail("expected `=`");
    auto value = ParseAttrValue();
    if (!value) return value.error();
    return Attribute{*name, std::move(*value)};
  }

  Result<AttrValue> ParseAttrValue() {
    const Token& t = lex_.Peek();
    if (t.kind == TokKind::kInt) return IntTok();
    if (t.kind == TokKind::kFloat) return FloatTok();
    if (t.kind == TokKind::kString) return AttrValue(lex_.Next().text);
    if (!Accept(TokKind::kPunct, "[")) return Fail("expected an attribute value");
    std::vector<std::int64_t> ints;
    std::vector<double> floats;
    std::vector<std::string> strings;
    if (!Accept(TokKind::kPunct, "]")) {
      do {
        const Token& e = lex_.Peek();
        if (e.kind == TokKind::kInt) {
          auto v = IntTok();
          if (!v) return v.error();
          ints.push_back(std::get<std::int64_t>(*v));
        } else if (e.kind == TokKind::kFloat) {
          auto v = FloatTok();
          if (!v) return v.error();
          floats.push_back(std::get<double>(*v));
        } else if (e.kind == TokKind::kString) {
          strings.push_back(lex_.Next().text);
        } else {
          return Fail("expected a list element");
        }
      } while (Accept(TokKind::kPunct, ","));
      if (!Accept(TokKind::kPunct, "]")) return Fail("expected `]`");
    }
    const int kinds = !ints.empty() + !floats.empty() + !strings.empty();
    if (kinds > 1) return Fail("a list attribute mixes element types");
    if (!floats.empty()) return AttrValue(std::move(floats));
    if (!strings.empty()) return AttrValue(std::move(strings));
    return AttrValue(std::move(ints));
  }

  Result<AttrValue> IntTok() {
    auto v = ParseInt64(lex_.Peek().text);
    if (!v) return Fail("integer out of range");
    lex_.Next();
    return AttrValue(*v);
  }
  Result<AttrValue> FloatTok() {
    auto v = ParseDouble(lex_.Peek().text);
    if (!v) return Fail("bad number");
    lex_.Next();
    return AttrValue(*v);
  }

  Lexer lex_;
};

}  // namespace

std::string PrintGraphText(const Graph& graph) {
  std::string out;
  PrintInto(graph, 0, out);
  return out;
}

Result<Graph> ParseGraphText(std::string_view text) { return Parser(text).ParseTop(); }

}  // namespace tpudoctor
