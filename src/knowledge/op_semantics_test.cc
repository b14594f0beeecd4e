#include "tpudoctor/knowledge/op_semantics.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tpudoctor/knowledge/op_support.h"
#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

// The domain a vocabulary of data/ops/semantics.tsv reads.
std::string DomainOf(std::string_view vocabulary) {
  return vocabulary == "onnx" ? "" : std::string(vocabulary);
}

TEST(OpSemantics, EveryRowNamesAnOpItsVocabularyDefines) {
  const auto rows = EmbeddedTsvRows("data/ops/semantics.tsv");
  ASSERT_GT(rows.size(), 100u);
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& cols : rows) {
    ASSERT_EQ(cols.size(), 4u) << cols[0];
    const std::string spelling(cols[1]);
    SCOPED_TRACE(std::string(cols[0]) + " " + spelling);
    EXPECT_TRUE(cols[0] == "onnx" || cols[0] == "hlo" || cols[0] == "tf");
    EXPECT_TRUE(seen.insert({std::string(cols[0]), spelling}).second) << "listed twice";
    EXPECT_TRUE(cols[2] == "-" || ParseOp(cols[2])) << "no Op named " << cols[2];
    EXPECT_TRUE(ParseTraits(cols[3])) << "unknown trait in " << cols[3];
    // The spelling is an op of the vocabulary (an op the tables do not know is a typo here).
    const OpInfo info = LookupOp(DomainOf(cols[0]), spelling);
    EXPECT_NE(info.support, OpSupport::kUnknownOp) << info.reason;
  }
}

TEST(OpSemantics, EveryOpHasASpelling) {
  std::set<std::string> named;
  for (const auto& cols : EmbeddedTsvRows("data/ops/semantics.tsv"))
    named.insert(std::string(cols[2]));
  for (int i = 1; i <= static_cast<int>(Op::kFileSource); ++i) {
    const Op op = static_cast<Op>(i);
    EXPECT_TRUE(named.count(std::string(NameOf(op)))) << NameOf(op) << " has no row";
    EXPECT_EQ(ParseOp(NameOf(op)), op);
  }
}

TEST(OpSemantics, OneMeaningWhateverTheSpelling) {
  EXPECT_EQ(LookupSemantics("", "Mul").op, Op::kMul);
  EXPECT_EQ(LookupSemantics("hlo", "multiply").op, Op::kMul);
  EXPECT_EQ(LookupSemantics("ai.onnx", "Sigmoid").op, LookupSemantics("hlo", "logistic").op);
  EXPECT_TRUE(LookupSemantics("", "Cos").traits.expensive);
  EXPECT_TRUE(LookupSemantics("hlo", "cosine").traits.expensive);  // XLA's kCos
  EXPECT_TRUE(LookupSemantics("hlo", "reshape").traits.view);
  EXPECT_EQ(LookupSemantics("", "Relu").traits.saves, Saves::kInput);
  EXPECT_EQ(LookupSemantics("tf", "ParallelMapDatasetV2").op, Op::kParallelMapDataset);
  EXPECT_TRUE(LookupSemantics("tf", "ParallelMapDatasetV2").traits.dataset);
  EXPECT_FALSE(LookupSemantics("tf", "PyFunc").traits.dataset);
  EXPECT_EQ(LookupSemantics("com.microsoft", "Attention").op, Op::kOther);  // not ONNX's
  EXPECT_EQ(LookupSemantics("", "Softmax").op, Op::kOther);
}

TEST(OpSemantics, ControlFlowSaysWhichOperandFeedsEachRegion) {
  Node loop;
  loop.op = Op::kLoop;
  loop.subgraphs.push_back({"body", nullptr});
  const auto cf = ControlFlowOf(loop);
  ASSERT_TRUE(cf);
  EXPECT_EQ(cf->form, ControlFlow::Form::kLoop);
  EXPECT_EQ(cf->trip_count, 0u);
  EXPECT_EQ(cf->condition, 1u);
  EXPECT_EQ(cf->body, 0u);
  EXPECT_EQ(cf->RegionOperand(0, 0), std::nullopt);  // the iteration counter
  EXPECT_EQ(cf->RegionOperand(0, 2), 2u);

  Node branch;
  branch.op = Op::kConditional;
  branch.subgraphs = {{"branch_computations", nullptr}, {"branch_computations", nullptr}};
  const auto xla = ControlFlowOf(branch);
  ASSERT_TRUE(xla);
  EXPECT_EQ(xla->selector, 0u);
  EXPECT_EQ(xla->branches.size(), 2u);
  EXPECT_EQ(xla->RegionOperand(1, 0), 2u);  // branch k takes operand k + 1
  EXPECT_EQ(xla->RegionOperand(1, 1), std::nullopt);

  Node if_node;
  if_node.op = Op::kIf;
  if_node.subgraphs = {{"then_branch", nullptr}, {"else_branch", nullptr}};
  EXPECT_EQ(ControlFlowOf(if_node)->RegionOperand(0, 0), 1u);  // after the condition

  Node add;
  add.op = Op::kAdd;
  EXPECT_FALSE(ControlFlowOf(add));
}

}  // namespace
}  // namespace tpudoctor
