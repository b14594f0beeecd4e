// StableHLO/MHLO MLIR text → the HLO module form of src/frontends/hlo → IR. Each op becomes the
// HLO instruction XLA would translate it to; each region becomes a computation the op calls. MLIR
// regions may use values of the enclosing region, HLO computations may not: such values become
// extra parameters of the region's computation and extra operands of the op.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "src/frontends/hlo/hlo_ast.h"
#include "src/frontends/stablehlo/mlir_parser.h"
#include "src/frontends/with_op_support.h"
#include "tpudoctor/frontend/stablehlo.h"
#include "tpudoctor/knowledge/hlo_ops.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

using hlo::HloComputation;
using hlo::HloInstr;
using hlo::HloShape;
using mlir::MlirOp;
using mlir::MlirRegion;

constexpr int kMaxLocDepth = 32;

// `i32` → `s32`, `complex<f32>` → `c64`, `f8E4M3FN` → `f8e4m3fn`: MLIR element types in HLO's
// spelling.
std::optional<DType> ElementType(std::string_view t) {
  if (t.starts_with("!quant.uniform<")) {
    t.remove_prefix(15);
    t = t.substr(0, t.find_first_of(":<>"));  // the storage type
  }
  if (t == "complex<f32>") return DType::kComplex64;
  if (t == "complex<f64>") return DType::kComplex128;
  if (t == "index") return DType::kInt64;
  if (t == "i1") return DType::kBool;
  std::string h(t);
  if (t.starts_with("si"))
    h = "s" + h.substr(2);
  else if (t.starts_with("ui"))
    h = "u" + h.substr(2);
  else if (t.starts_with("i"))
    h = "s" + h.substr(1);
  for (char& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return hlo::HloDType(h);
}

// `#stablehlo.bounds<?, 8>` or `#mhlo.type_extensions<bounds = [?, 8]>` → per-dim bounds.
std::vector<std::optional<std::int64_t>> Bounds(std::string_view enc) {
  std::vector<std::optional<std::int64_t>> out;
  std::size_t open = enc.find_first_of("<[", enc.find("bounds"));
  if (enc.find("bounds") == std::string_view::npos || open == std::string_view::npos) return out;
  std::size_t close = enc.find_first_of(">]", open);
  for (const std::string& b : mlir::SplitTopLevel(enc.substr(open + 1, close - open - 1)))
    out.push_back(ParseInt64(b));
  return out;
}

std::optional<HloShape> ParseType(std::string_view t) {
  t = Trim(t);
  HloShape s;
  if (t == "!stablehlo.token" || t == "!mhlo.token") {
    s.is_token = true;
    return s;
  }
  const std::size_t open = t.starts_with("tuple<")                     ? 6
                           : t.starts_with("!mhlo.async_bundle<")      ? 19
                           : t.starts_with("!stablehlo.async_bundle<") ? 24
                                                                       : 0;
  if (open != 0 && t.ends_with(">")) {
    s.is_tuple = true;
    for (const std::string& e : mlir::SplitTopLevel(t.substr(open, t.size() - open - 1))) {
      auto es = ParseType(e);
      if (!es) return std::nullopt;
      s.elements.push_back(std::move(*es));
    }
    return s;
  }
  if (!t.starts_with("tensor<") || !t.ends_with(">")) {
    auto d = ElementType(t);  // a bare scalar (`i32` in shape computations)
    if (!d) return std::nullopt;
    s.dtype = *d;
    return s;
  }
  auto parts = mlir::SplitTopLevel(t.substr(7, t.size() - 8));
  if (parts.empty()) return std::nullopt;
  std::string_view body = parts[0];
  if (body.starts_with("*x")) {  // unranked
    s.dims.push_back(Dim::Unknown());
    s.dynamic.push_back(true);
    body.remove_prefix(2);
  }
  while (true) {
    std::size_t x = body.find('x');
    if (x == std::string_view::npos || x == 0) break;
    std::string_view d = body.substr(0, x);
    if (d == "?") {
      s.dims.push_back(Dim::Unknown());
      s.dynamic.push_back(true);
    } else if (auto v = ParseInt64(d); v && *v >= 0) {
      s.dims.push_back(Dim::Static(*v));
      s.dynamic.push_back(false);
    } else {
      break;
    }
    body.remove_prefix(x + 1);
  }
  auto d = ElementType(body);
  if (!d) return std::nullopt;
  s.dtype = *d;
  if (parts.size() > 1) {
    auto bounds = Bounds(parts[1]);
    for (std::size_t i = 0; i < bounds.size() && i < s.dims.size(); ++i) {
      if (s.dynamic[i] && bounds[i]) s.dims[i] = Dim::Static(*bounds[i]);
    }
  }
  return s;
}

// `[0, 2]` → `{0,2}` (HLO's int-list spelling, which the HLO builder reads).
std::string IntList(std::string_view list) {
  std::string out = "{";
  for (char c : list) {
    if (std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == '-') out += c;
  }
  return out + "}";
}

// The bracketed list after `key` (`key = [1, 2]` or `key = array<i64: 1, 2>`).
std::optional<std::string_view> ListAfter(std::string_view text, std::string_view key,
                                          std::size_t from = 0) {
  std::size_t at = text.find(key, from);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t open = text.find_first_of("[<", at + key.size());
  if (open == std::string_view::npos) return std::nullopt;
  std::size_t close = text.find_first_of("]>", open);
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view inner = text.substr(open + 1, close - open - 1);
  if (std::size_t colon = inner.find(':'); colon != std::string_view::npos)
    inner = inner.substr(colon + 1);  // `array<i64: ...>`
  return inner;
}

std::optional<std::string> IntAfter(std::string_view text, std::string_view key) {
  std::size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t s = text.find_first_of("-0123456789", at + key.size());
  if (s == std::string_view::npos) return std::nullopt;
  std::size_t e = text.find_first_not_of("-0123456789", s);
  return std::string(text.substr(s, e - s));
}

std::optional<std::string> QuotedAfter(std::string_view text, std::string_view key) {
  std::size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t s = text.find('"', at + key.size());
  if (s == std::string_view::npos) return std::nullopt;
  std::size_t e = text.find('"', s + 1);
  if (e == std::string_view::npos) return std::nullopt;
  return std::string(text.substr(s + 1, e - s - 1));
}

struct Loc {
  std::string name, file;
  int line = 0;
};

// `#loc3`, `"file.py":12:3`, `"op/name"(#loc4)`, `callsite(#loc1 at #loc2)`, `fused[...]`.
void ResolveLoc(std::string_view body, const std::map<std::string, std::string>& aliases, Loc& out,
                int depth = 0) {
  body = Trim(body);
  if (depth > kMaxLocDepth || body.empty()) return;
  if (body.front() == '#') {
    std::size_t e = 1;
    while (e < body.size() && (std::isalnum(static_cast<unsigned char>(body[e])) || body[e] == '_'))
      ++e;
    if (auto it = aliases.find(std::string(body.substr(0, e))); it != aliases.end())
      ResolveLoc(it->second, aliases, out, depth + 1);
    return;
  }
  if (body.starts_with("callsite(") || body.starts_with("fused")) {
    std::size_t open = body.find_first_of("([", 5);
    if (open != std::string_view::npos) ResolveLoc(body.substr(open + 1), aliases, out, depth + 1);
    return;
  }
  if (body.front() != '"') return;
  std::size_t close = body.find('"', 1);
  if (close == std::string_view::npos) return;
  std::string_view str = body.substr(1, close - 1);
  std::string_view rest = body.substr(close + 1);
  if (rest.starts_with(":")) {
    if (out.file.empty()) {
      out.file = std::string(str);
      out.line = static_cast<int>(ParseInt64(rest.substr(1, rest.find(':', 1) - 1)).value_or(0));
    }
  } else if (rest.starts_with("(")) {
    if (out.name.empty()) out.name = std::string(str);
    ResolveLoc(rest.substr(1), aliases, out, depth + 1);
  }
}

std::string Clean(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c != '"' && c != '}' && c != '{') out += c;
  }
  return out;
}

struct Scope {
  std::unordered_map<std::string, HloShape> types;
  const Scope* parent = nullptr;

  const HloShape* Find(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      if (auto it = s->types.find(name); it != s->types.end()) return &it->second;
    }
    return nullptr;
  }
};

// One computation being written: its instructions, the values it defines, and the values of
// enclosing regions it uses (which become its trailing parameters).
struct Frame {
  std::size_t comp;  // index into the module's computations
  Scope scope;
  std::vector<std::string> free;
  std::int64_t params = 0;
};

class Converter {
 public:
  explicit Converter(const mlir::MlirModule& m) : m_(m) {}

  Result<hlo::HloModule> Run() {
    if (m_.funcs.empty()) return MakeError("the module has no functions");
    const mlir::MlirFunc* entry = nullptr;
    for (const mlir::MlirFunc& f : m_.funcs) {
      if (f.name == "main") entry = &f;
    }
    for (const mlir::MlirFunc& f : m_.funcs) {
      if (entry == nullptr && f.is_public && f.has_body) entry = &f;
    }
    if (entry == nullptr) entry = &m_.funcs.front();
    for (const mlir::MlirFunc& f : m_.funcs) {
      if (!f.has_body) continue;
      auto c = Computation(f.body, f.name, nullptr, f.line, f.column);
      if (!c) return c.error();
      out_.computations[c->comp].entry = &f == entry;
    }
    out_.modules_in_file = m_.modules_in_file;
    return std::move(out_);
  }

 private:
  // A region as a computation; `parent` is the scope of the op that owns it (null for a function).
  Result<Frame> Computation(const MlirRegion& r, const std::string& name, const Scope* parent,
                            int line, int column) {
    Frame f;
    f.comp = out_.computations.size();
    out_.computations.push_back(HloComputation{K(name), false, {}, line});
    f.scope.parent = parent;
    for (const auto& [arg, type] : r.args) {
      if (auto res = AddParam(f, arg, type, line, column); !res) return res.error();
    }
    for (const MlirOp& op : r.ops) {
      if (auto res = Op(f, op); !res) return res.error();
    }
    return f;  // the values it captured (`f.free`) become parameters in Regions()
  }

  Result<Ok> AddParam(Frame& f, const std::string& name, std::string_view type, int line,
                      int column) {
    auto shape = ParseType(type);
    if (!shape) {
      return MakeError(std::to_string(line) + ":" + std::to_string(column) + ": `%" + name +
                       "` has type `" + std::string(type) + "`, which tpu-doctor cannot read");
    }
    PushParam(f, name, *shape, line);
    return Ok{};
  }

  // The next parameter of `f`'s computation.
  void PushParam(Frame& f, const std::string& name, const HloShape& shape, int line) {
    HloInstr p;
    p.name = K(name);
    p.opcode = "parameter";
    p.operands = {K(std::to_string(f.params++))};
    p.shape = shape;
    p.line = line;
    f.scope.types[name] = shape;
    out_.computations[f.comp].instrs.push_back(std::move(p));
  }

  // Makes `name` usable in `f`: defined here, or captured from an enclosing region.
  Result<Ok> Use(Frame& f, const std::string& name, const MlirOp& op) {
    if (f.scope.types.count(name) != 0) return Ok{};
    const HloShape* outer = f.scope.parent ? f.scope.parent->Find(name) : nullptr;
    if (outer == nullptr) {
      return MakeError(std::to_string(op.line) + ":" + std::to_string(op.column) + ": `" + op.name +
                       "` uses `%" + name + "`, which is not defined before it");
    }
    f.scope.types[name] = *outer;
    f.free.push_back(name);
    return Ok{};
  }

  Result<Ok> Op(Frame& f, const MlirOp& op) {
    HloInstr ins;
    ins.opcode = K(StableHloOpcode(op.name));
    ins.line = op.line;
    ins.column = op.column;
    for (const std::string& v : op.operands) ins.operands.push_back(K(v));
    if (ins.opcode == "return") return Return(f, op);

    // Result shapes.
    std::vector<HloShape> shapes;
    for (std::size_t i = 0; i < op.results.size(); ++i) {
      std::optional<HloShape> s =
          i < op.result_types.size() ? ParseType(op.result_types[i]) : std::nullopt;
      if (!s) {
        return MakeError(std::to_string(op.line) + ":" + std::to_string(op.column) + ": `" +
                         op.name + "`: cannot read the type of result %" + op.results[i]);
      }
      shapes.push_back(std::move(*s));
    }
    if (shapes.size() == 1) {
      ins.name = K(op.results[0]);
      ins.shape = shapes[0];
    } else {
      ins.shape.is_tuple = true;
      ins.shape.elements = shapes;
      ins.name = K(op.results.empty()
                       ? op.name + "." + std::to_string(op.line) + "." + std::to_string(++unnamed_)
                       : op.results[0].substr(0, op.results[0].find('#')) + ":" +
                             std::to_string(op.results.size()));
    }

    if (auto res = Regions(f, op, ins); !res) return res;
    for (std::string_view v : ins.operands) {
      if (auto res = Use(f, std::string(v), op); !res) return res;
    }
    Attributes(f, op, ins);
    const std::string_view tuple_name = ins.name;
    out_.computations[f.comp].instrs.push_back(std::move(ins));
    if (shapes.size() == 1) {
      f.scope.types[op.results[0]] = shapes[0];
      return Ok{};
    }
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      HloInstr gte;
      gte.name = K(op.results[i]);
      gte.opcode = "get-tuple-element";
      gte.operands = {tuple_name};
      gte.attrs.push_back({"index", K(std::to_string(i))});
      gte.shape = shapes[i];
      gte.line = op.line;
      gte.column = op.column;
      f.scope.types[op.results[i]] = shapes[i];
      out_.computations[f.comp].instrs.push_back(std::move(gte));
    }
    return Ok{};
  }

  // The values a function or region returns: its root.
  Result<Ok> Return(Frame& f, const MlirOp& op) {
    auto& instrs = out_.computations[f.comp].instrs;
    if (op.operands.size() == 1 && f.scope.types.count(op.operands[0]) != 0) {
      for (HloInstr& i : instrs) i.root = i.name == op.operands[0];
      return Ok{};
    }
    HloInstr root;
    root.name = K("return." + std::to_string(op.line));
    root.opcode = op.operands.size() == 1 ? "copy" : "tuple";
    for (const std::string& v : op.operands) root.operands.push_back(K(v));
    root.root = true;
    root.line = op.line;
    root.column = op.column;
    root.shape.is_tuple = op.operands.size() != 1;
    for (const std::string& v : op.operands) {
      if (auto res = Use(f, v, op); !res) return res;
      if (root.shape.is_tuple)
        root.shape.elements.push_back(f.scope.types[v]);
      else
        root.shape = f.scope.types[v];
    }
    for (HloInstr& i : instrs) i.root = false;
    instrs.push_back(std::move(root));
    return Ok{};
  }

  // Regions become computations the instruction calls; values they capture become operands.
  Result<Ok> Regions(Frame& f, const MlirOp& op, HloInstr& ins) {
    if (op.regions.empty()) return Ok{};
    std::vector<Frame> frames;
    for (std::size_t i = 0; i < op.regions.size(); ++i) {
      MlirRegion region = op.regions[i];
      if (region.args.empty() && !op.defined_args.empty()) {
        // Pretty `while(%iterArg = %x, ...)`: the loop-carried values, typed like the results.
        for (std::size_t a = 0; a < op.defined_args.size(); ++a) {
          region.args.emplace_back(op.defined_args[a],
                                   a < op.result_types.size() ? op.result_types[a] : std::string());
        }
      }
      auto sub =
          Computation(region, std::string(ins.name) + "." + std::to_string(i) + "." + op.name,
                      &f.scope, op.line, op.column);
      if (!sub) return sub.error();
      frames.push_back(std::move(*sub));
    }
    // Every region gets every captured value as a trailing parameter, in one order, so the
    // operands the instruction gains line up with the parameters of each region.
    std::vector<std::string> captured;
    std::set<std::string> seen;
    for (const Frame& sub : frames) {
      for (const std::string& v : sub.free) {
        if (seen.insert(v).second) captured.push_back(v);
      }
    }
    for (const std::string& v : captured) {
      const HloShape shape = *f.scope.Find(v);
      for (Frame& sub : frames) PushParam(sub, v, shape, op.line);
      ins.operands.push_back(K(v));
    }
    std::vector<std::string> names;
    for (const Frame& sub : frames) names.push_back(std::string(out_.computations[sub.comp].name));
    if (ins.opcode == "while" && names.size() == 2) {
      ins.attrs.push_back({"condition", K(names[0])});
      ins.attrs.push_back({"body", K(names[1])});
    } else if (ins.opcode == "conditional" && op.name.ends_with(".if") && names.size() == 2) {
      ins.attrs.push_back({"true_computation", K(names[0])});
      ins.attrs.push_back({"false_computation", K(names[1])});
    } else if (ins.opcode == "conditional") {
      ins.attrs.push_back({"branch_computations", K("{" + Join(names, ", ") + "}")});
    } else if (names.size() == 1) {
      ins.attrs.push_back({"to_apply", K(names[0])});
    } else {
      ins.attrs.push_back({"called_computations", K("{" + Join(names, ", ") + "}")});
    }
    return Ok{};
  }

  void Attributes(const Frame& f, const MlirOp& op, HloInstr& ins) {
    std::string_view t = op.text;
    if (ins.opcode == "custom-call") {
      std::string target = op.callee;
      if (target.empty()) target = QuotedAfter(t, "call_target_name").value_or("");
      ins.attrs.push_back({"custom_call_target", K("\"" + target + "\"")});
      if (t.find("has_side_effect = true") != std::string_view::npos)
        ins.attrs.push_back({"custom_call_has_side_effect", "true"});
    } else if (ins.opcode == "call") {
      std::string callee = op.callee;
      if (callee.empty()) callee = mlir::SymbolAfter(t, "decomposition = @").value_or("");
      if (!callee.empty()) ins.attrs.push_back({"to_apply", K(callee)});
    } else if (ins.opcode == "dot") {
      DotDims(f, op, ins);
    } else if (ins.opcode == "convolution") {
      ConvDims(t, ins);
    } else if (ins.opcode == "get-tuple-element") {
      auto idx = IntAfter(t, "index");
      if (!idx && t.rfind('[') != std::string_view::npos) idx = IntAfter(t, "[");
      if (idx) ins.attrs.push_back({"index", K(*idx)});
    } else if (auto called = mlir::SymbolAfter(t, "called_computation = @")) {
      ins.attrs.push_back({"calls", K(*called)});
    } else if (ins.opcode == "send" || ins.opcode == "recv") {
      if (t.find("is_host_transfer = true") != std::string_view::npos)
        ins.attrs.push_back({"is_host_transfer", "true"});
    }
    for (std::string_view key : {"feature_group_count", "batch_group_count"}) {
      if (auto v = IntAfter(t, key)) ins.attrs.push_back({key, K(*v)});
    }
    if (!op.loc.empty()) {
      Loc loc;
      ResolveLoc(op.loc, m_.loc_aliases, loc);
      std::string meta = "{";
      if (!loc.name.empty()) meta += "op_name=\"" + Clean(loc.name) + "\" ";
      if (!loc.file.empty()) {
        meta += "source_file=\"" + Clean(loc.file) + "\" source_line=" + std::to_string(loc.line);
      }
      ins.attrs.push_back({"metadata", K(meta + "}")});
    }
  }

  // `precision = [HIGHEST, HIGHEST]` (or the generic `precision_config`) as HLO's
  // `operand_precision={highest,highest}`; the default is left unsaid, as HLO text does.
  void DotPrecision(std::string_view t, HloInstr& ins) {
    std::size_t at = t.find("precision = [");
    if (at == std::string_view::npos) at = t.find("precision_config");
    if (at == std::string_view::npos) return;
    const std::string_view list = t.substr(at, t.find(']', at) - at);
    const char* level = list.find("HIGHEST") != std::string_view::npos ? "highest"
                        : list.find("HIGH") != std::string_view::npos  ? "high"
                                                                       : nullptr;
    if (level) ins.attrs.push_back({"operand_precision", K("{" + std::string(level) + "}")});
  }

  void DotDims(const Frame& f, const MlirOp& op, HloInstr& ins) {
    std::string_view t = op.text;
    DotPrecision(t, ins);
    auto pair = [&](std::string_view key, const char* lhs, const char* rhs) {
      std::size_t at = t.find(key);
      if (at == std::string_view::npos) return;
      auto l = ListAfter(t, key);
      auto r = ListAfter(t, " x ", at);
      if (l && r) {
        ins.attrs.push_back({lhs, K(IntList(*l))});
        ins.attrs.push_back({rhs, K(IntList(*r))});
      }
    };
    if (t.find("lhs_contracting_dimensions") != std::string_view::npos) {  // generic form
      for (auto [key, attr] : {std::pair{"lhs_batching_dimensions", "lhs_batch_dims"},
                               {"rhs_batching_dimensions", "rhs_batch_dims"},
                               {"lhs_contracting_dimensions", "lhs_contracting_dims"},
                               {"rhs_contracting_dimensions", "rhs_contracting_dims"}}) {
        if (auto l = ListAfter(t, key)) ins.attrs.push_back({attr, K(IntList(*l))});
      }
      return;
    }
    if (t.find("contracting_dims") != std::string_view::npos) {  // pretty form
      pair("batching_dims", "lhs_batch_dims", "rhs_batch_dims");
      pair("contracting_dims", "lhs_contracting_dims", "rhs_contracting_dims");
      return;
    }
    // `stablehlo.dot`: the lhs's last dimension against the rhs's first.
    const HloShape* lhs = op.operands.empty() ? nullptr : f.scope.Find(op.operands[0]);
    const std::size_t rank = lhs ? lhs->dims.size() : 2;
    ins.attrs.push_back(
        {"lhs_contracting_dims", K("{" + std::to_string(rank ? rank - 1 : 0) + "}")});
    ins.attrs.push_back({"rhs_contracting_dims", "{0}"});
  }

  // `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` → `dim_labels=b01f_01io->b01f`.
  void ConvDims(std::string_view t, HloInstr& ins) {
    std::size_t arrow = t.find("]->[");
    if (arrow == std::string_view::npos) return;
    std::size_t lhs = t.rfind('[', t.rfind("]x[", arrow));
    std::size_t end = t.find(']', arrow + 3);
    if (lhs == std::string_view::npos || end == std::string_view::npos) return;
    std::string labels;
    for (char c : t.substr(lhs, end - lhs + 1)) {
      if (c == 'x' || c == '>')
        labels += c == 'x' ? '_' : '>';
      else if (c == '-')
        labels += '-';
      else if (std::isalnum(static_cast<unsigned char>(c)))
        labels += c;
    }
    ins.attrs.push_back({"dim_labels", K(labels)});
  }

  // A view of `text` that lives as long as the module being written.
  std::string_view K(std::string_view text) { return out_.Keep(std::string(text)); }

  const mlir::MlirModule& m_;
  hlo::HloModule out_;
  int unnamed_ = 0;
};

}  // namespace

// MLIR bytecode (`.mlirbc`, `jax.export` serialized artifacts) starts with these bytes.
constexpr std::string_view kBytecodeMagic = "ML\xEFR";

int SniffStableHlo(const Source& source) {
  const std::string_view raw = std::string_view(source.bytes).substr(0, 8192);
  if (raw.starts_with(kBytecodeMagic)) return 95;
  // What the text says, not what its comments quote (`// CHECK: stablehlo.add` in a test file).
  std::string head;
  for (std::string_view line : SplitLines(raw)) {
    if (!Trim(line).starts_with("//")) head.append(line).push_back('\n');
  }
  const bool dialect =
      head.find("stablehlo.") != std::string::npos || head.find("mhlo.") != std::string::npos;
  const bool container =
      head.find("func.func") != std::string::npos || head.find("module") != std::string::npos;
  if (dialect && container) return 90;
  if (head.find("func.func") != std::string::npos) return 60;
  const std::string& n = source.display_name;
  if (n.ends_with(".mlir")) return 40;
  return 0;
}

namespace {

// The line of the first unstructured control-flow op (`cf.br`, `cf.cond_br`, `cf.switch`): MLIR
// after a compiler such as IREE lowered `stablehlo.if`/`while` into branches between blocks.
std::optional<std::size_t> UnstructuredControlFlowLine(std::string_view text) {
  if (text.find("cf.") == std::string_view::npos) return std::nullopt;
  std::size_t line = 1;
  for (std::string_view l : SplitLines(text)) {
    const std::string_view t = Trim(l);
    if (t.starts_with("cf.br ") || t.starts_with("cf.cond_br ") || t.starts_with("cf.switch "))
      return line;
    ++line;
  }
  return std::nullopt;
}

Result<LoadedModel> LoadStableHloUnannotated(const Source& source, const ShapeOptions& options) {
  const std::string& name = source.display_name;
  if (std::string_view(source.bytes).starts_with(kBytecodeMagic)) {
    return MakeError(name +
                     ": MLIR bytecode, which tpu-doctor does not read; print the module as text "
                     "(`stablehlo-translate --deserialize FILE`, or `exported.mlir_module()` in "
                     "JAX) and check that");
  }
  if (source.bytes.find('\0') != std::string::npos)
    return MakeError(name +
                     ": binary data, expected StableHLO/MHLO text (MLIR bytecode is not read)");
  if (auto line = UnstructuredControlFlowLine(source.bytes)) {
    return MakeError(name + ":" + std::to_string(*line) +
                     ": MLIR with `cf.br`/`cf.cond_br` branches between blocks (control flow a "
                     "compiler such as IREE already lowered), not StableHLO as JAX, TensorFlow "
                     "or PyTorch/XLA export it; check the program before that lowering "
                     "(`jax.jit(f).lower(x).as_text()`), where control flow is `stablehlo.if`/"
                     "`stablehlo.while`");
  }
  auto parsed = mlir::ParseMlirText(source.bytes);
  if (!parsed) return MakeError(name + ":" + parsed.error().message);
  auto module = Converter(*parsed).Run();
  if (!module) return MakeError(hlo::AtFile(name, module.error().message));
  auto graph = hlo::BuildHloGraph(*module);
  if (!graph) return MakeError(hlo::AtFile(name, graph.error().message));
  graph->set_partitions(parsed->partitions);
  LoadedModel loaded{std::move(*graph), "stablehlo", "", {}, {}};
  loaded.graph.mutable_facts().framework = hlo::FrameworkOfModuleName(parsed->name);
  loaded.graph.mutable_facts().xla_program = true;
  if (!options.dims.empty() || options.batch) {
    loaded.shape_notes.push_back(
        "StableHLO programs have their shapes fixed at export; --batch/--dim do not apply");
  }
  if (module->modules_in_file > 1) {
    loaded.shape_notes.push_back(
        "the file holds more modules after `// -----`; only the first was read");
  }
  return loaded;
}

}  // namespace

Result<LoadedModel> LoadStableHlo(const Source& source, const ShapeOptions& options) {
  return WithOpSupport(LoadStableHloUnannotated(source, options));
}

}  // namespace tpudoctor
