#include "tpudoctor/knowledge/hlo_ops.h"

#include <map>
#include <vector>

#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

CallPlatform ParsePlatform(std::string_view p) {
  if (p == "portable") return CallPlatform::kPortable;
  if (p == "cpu_only") return CallPlatform::kCpuOnly;
  if (p == "gpu_only") return CallPlatform::kGpuOnly;
  if (p == "gpu_internal") return CallPlatform::kGpuInternal;
  if (p == "tpu_only") return CallPlatform::kTpuOnly;
  if (p == "host_callback") return CallPlatform::kHostCallback;
  return CallPlatform::kUnknown;
}

struct HloOpcodeRow {
  OpKind kind = OpKind::kUnknown;
  HloShapeRule shape_rule = HloShapeRule::kNone;
};

HloShapeRule ParseShapeRule(std::string_view r) {
  static constexpr std::pair<std::string_view, HloShapeRule> kRules[] = {
      {"same", HloShapeRule::kSame},
      {"elementwise", HloShapeRule::kElementwise},
      {"pred", HloShapeRule::kPred},
      {"operand1", HloShapeRule::kOperand1},
      {"real_part", HloShapeRule::kRealPart},
      {"complex", HloShapeRule::kComplex},
      {"first_operand", HloShapeRule::kFirstOperand},
      {"tuple", HloShapeRule::kTuple},
      {"tuple_element", HloShapeRule::kTupleElement},
      {"dot", HloShapeRule::kDot},
      {"concatenate", HloShapeRule::kConcatenate},
      {"reduce", HloShapeRule::kReduce},
      {"transpose", HloShapeRule::kTranspose},
      {"call", HloShapeRule::kCall},
      {"branch", HloShapeRule::kBranch},
      {"token", HloShapeRule::kToken},
      {"device_index", HloShapeRule::kDeviceIndex},
      {"map", HloShapeRule::kMap},
      {"slice", HloShapeRule::kSlice},
  };
  for (const auto& [name, rule] : kRules) {
    if (name == r) return rule;
  }
  return HloShapeRule::kNone;
}

const std::map<std::string, HloOpcodeRow, std::less<>>& OpcodeTable() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, HloOpcodeRow, std::less<>>();
    for (const auto& r : EmbeddedTsvRows("data/hlo/opcodes.tsv")) {
      if (r.size() < 2) continue;
      t->emplace(std::string(r[0]),
                 HloOpcodeRow{ParseOpKind(r[1]).value_or(OpKind::kUnknown),
                              r.size() > 2 ? ParseShapeRule(r[2]) : HloShapeRule::kNone});
    }
    return t;
  }();
  return *table;
}

}  // namespace

std::optional<OpKind> HloOpKind(std::string_view opcode) {
  const auto& table = OpcodeTable();
  if (auto it = table.find(opcode); it != table.end()) return it->second.kind;
  // The async form XLA's parser accepts for any opcode (`custom-call-start`, `dot-start`):
  // `OP-start` does OP's work, `-update` and `-done` only hand its buffers on.
  for (std::string_view suffix : {"-start", "-update", "-done"}) {
    if (!opcode.ends_with(suffix)) continue;
    auto base = table.find(opcode.substr(0, opcode.size() - suffix.size()));
    if (base == table.end()) return std::nullopt;
    if (suffix == "-start") return base->second.kind;
    return table.at("async-done").kind;  // costed as the generic async-done is
  }
  return std::nullopt;
}

HloShapeRule HloShapeRuleOf(std::string_view opcode) {
  const auto& table = OpcodeTable();
  auto it = table.find(opcode);
  return it == table.end() ? HloShapeRule::kNone : it->second.shape_rule;
}

std::string StableHloOpcode(std::string_view mlir_name) {
  static const auto* table = [] {
    auto* t = new std::map<std::string, std::string, std::less<>>();
    for (const auto& r : EmbeddedTsvRows("data/hlo/stablehlo_ops.tsv")) {
      if (r.size() >= 2) t->emplace(std::string(r[0]), std::string(r[1]));
    }
    return t;
  }();
  if (auto it = table->find(mlir_name); it != table->end()) return it->second;
  std::string_view n = mlir_name;
  bool chlo = false;
  for (std::string_view dialect : {"stablehlo.", "mhlo.", "chlo.", "func.", "vhlo."}) {
    if (n.starts_with(dialect)) {
      chlo = dialect == "chlo.";
      n.remove_prefix(dialect.size());
      break;
    }
  }
  if (n.size() == mlir_name.size()) return std::string(mlir_name);  // another dialect
  if (chlo && n.starts_with("broadcast_")) n.remove_prefix(10);
  if (auto it = table->find(n); it != table->end()) return it->second;
  std::string out(n);
  for (char& c : out) c = c == '_' ? '-' : c;
  return out;
}

std::optional<std::string> UnmappedMlirOp(std::string_view opcode) {
  static const auto* table = [] {
    auto* t = new std::map<std::string, std::string, std::less<>>();
    for (const auto& r : EmbeddedTsvRows("data/hlo/mlir_ops_unmapped.tsv")) {
      if (r.size() >= 2) t->emplace(StableHloOpcode(r[0]), std::string(r[1]));
    }
    return t;
  }();
  if (auto it = table->find(opcode); it != table->end()) return it->second;
  return std::nullopt;
}

CustomCallInfo LookupCustomCall(std::string_view target) {
  static const auto* exact = [] {
    auto* t = new std::map<std::string, CustomCallInfo, std::less<>>();
    for (const auto& r : EmbeddedTsvRows("data/hlo/custom_calls.tsv")) {
      if (r.size() >= 2)
        t->emplace(std::string(r[0]),
                   CustomCallInfo{ParsePlatform(r[1]), r.size() > 2 ? std::string(r[2]) : ""});
    }
    return t;
  }();
  static const auto* prefixes = [] {
    auto* v = new std::vector<std::pair<std::string, CustomCallInfo>>();
    for (const auto& r : EmbeddedTsvRows("data/hlo/custom_call_prefixes.tsv")) {
      if (r.size() >= 2)
        v->emplace_back(std::string(r[0]),
                        CustomCallInfo{ParsePlatform(r[1]), r.size() > 2 ? std::string(r[2]) : ""});
    }
    return v;
  }();
  if (auto it = exact->find(target); it != exact->end()) return it->second;
  for (const auto& [prefix, info] : *prefixes) {
    if (target.rfind(prefix, 0) == 0) return info;
  }
  return {};
}

}  // namespace tpudoctor
