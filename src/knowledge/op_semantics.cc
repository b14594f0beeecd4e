#include "tpudoctor/knowledge/op_semantics.h"

#include <map>
#include <string>
#include <utility>

#include "tpudoctor/knowledge/tf_ops.h"
#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

// Per vocabulary, by spelling (found without copying the spelling).
using SemanticsTable =
    std::map<std::string, std::map<std::string, OpSemantics, std::less<>>, std::less<>>;

const SemanticsTable& Table() {
  static const SemanticsTable* table = [] {
    auto* t = new SemanticsTable();
    for (const auto& cols : EmbeddedTsvRows("data/ops/semantics.tsv")) {
      if (cols.size() != 4) continue;
      OpSemantics s;
      s.op = cols[2] == "-" ? Op::kOther : ParseOp(cols[2]).value_or(Op::kOther);
      s.traits = ParseTraits(cols[3]).value_or(OpTraits{});
      (*t)[std::string(cols[0])].emplace(std::string(cols[1]), s);
    }
    return t;
  }();
  return *table;
}

// The vocabulary a node's domain names in the table; empty for one it has no rows for.
std::string_view VocabularyOf(std::string_view domain) {
  if (domain.empty() || domain == "ai.onnx") return "onnx";
  if (domain == "hlo" || domain == "tf") return domain;
  return {};
}

std::optional<std::size_t> SubgraphNamed(const Node& node, std::string_view name) {
  for (std::size_t i = 0; i < node.subgraphs.size(); ++i) {
    if (node.subgraphs[i].attr_name == name) return i;
  }
  return std::nullopt;
}

std::vector<std::size_t> AllSubgraphs(const Node& node) {
  std::vector<std::size_t> all(node.subgraphs.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

// Per op, the names of its shape inputs by index ("" for a data input).
using ShapeInputTable = std::map<std::string, std::vector<std::string>, std::less<>>;

ShapeInputTable* LoadShapeInputs(std::string_view path) {
  auto* t = new ShapeInputTable();
  for (const auto& cols : EmbeddedTsvRows(path)) {
    if (cols.size() != 3) continue;
    auto index = ParseInt64(cols[1]);
    if (!index || *index < 0) continue;
    std::vector<std::string>& names = (*t)[std::string(cols[0])];
    if (names.size() <= static_cast<std::size_t>(*index)) names.resize(*index + 1);
    names[static_cast<std::size_t>(*index)] = std::string(cols[2]);
  }
  return t;
}

std::string_view FindShapeInput(const ShapeInputTable& table, std::string_view op,
                                std::size_t index) {
  auto it = table.find(op);
  return it == table.end() || index >= it->second.size() ? std::string_view() : it->second[index];
}

}  // namespace

std::optional<OpTraits> ParseTraits(std::string_view column) {
  OpTraits t;
  if (column == "-") return t;
  for (std::string_view word : Split(column, ',')) {
    if (word == "view") {
      t.view = true;
    } else if (word == "transcendental") {
      t.transcendental = true;
    } else if (word == "expensive") {
      t.expensive = true;
    } else if (word == "saves_input") {
      t.saves = Saves::kInput;
    } else if (word == "saves_operands") {
      t.saves = Saves::kOperands;
    } else {
      return std::nullopt;
    }
  }
  return t;
}

OpSemantics LookupSemantics(std::string_view domain, std::string_view op_type) {
  const std::string_view vocabulary = VocabularyOf(domain);
  if (vocabulary.empty()) return {};
  OpSemantics s;
  if (auto spellings = Table().find(vocabulary); spellings != Table().end()) {
    if (auto it = spellings->second.find(op_type); it != spellings->second.end()) s = it->second;
  }
  if (vocabulary == "tf") {
    const TfOpInfo& tf = LookupTfOp(op_type);
    s.traits.dataset = tf.pipeline && op_type.find("Dataset") != std::string_view::npos;
  }
  return s;
}

std::optional<ControlFlow> ControlFlowOf(const Node& node) {
  ControlFlow cf;
  switch (node.op) {
    case Op::kIf:  // If(cond) with then/else branches; torch.cond passes operands after cond
      cf.form = ControlFlow::Form::kBranch;
      cf.selector = 0;
      cf.branches = AllSubgraphs(node);
      cf.operand_offset = 1;
      return cf;
    case Op::kConditional:  // conditional(index, operand per branch...)
      cf.form = ControlFlow::Form::kBranch;
      cf.selector = 0;
      cf.branches = AllSubgraphs(node);
      cf.operand_offset = 1;
      cf.operand_per_branch = true;
      return cf;
    case Op::kLoop:  // Loop(M, cond, carried...); body(iteration, cond, carried...)
      cf.form = ControlFlow::Form::kLoop;
      cf.trip_count = 0;
      cf.condition = 1;
      cf.body = SubgraphNamed(node, "body");
      cf.iteration_counter = true;
      return cf;
    case Op::kWhile:  // while(init) with condition and body computations of the carried value
      cf.form = ControlFlow::Form::kLoop;
      cf.body = SubgraphNamed(node, "body");
      cf.condition_region = SubgraphNamed(node, "condition");
      return cf;
    default:
      return std::nullopt;
  }
}

std::string_view ShapeInputName(const Node& node, std::size_t index) {
  static const ShapeInputTable* onnx = LoadShapeInputs("data/onnx/shape_inputs.tsv");
  static const ShapeInputTable* tf = LoadShapeInputs("data/tf/constant_inputs.tsv");
  if (VocabularyOf(node.domain) == "onnx") {
    if (auto name = FindShapeInput(*onnx, node.op_type, index); !name.empty()) return name;
  }
  // A TensorFlow op's own compile-time-constant inputs (by the op TensorFlow named).
  if (node.framework_op.empty()) return "";
  return FindShapeInput(*tf, node.framework_op, index);
}

}  // namespace tpudoctor
