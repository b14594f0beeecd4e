// Every op of the StableHLO, CHLO and MHLO dialects (data/hlo/mlir_ops.tsv, generated from their
// TableGen files by scripts/gen_mlir_op_table.py) maps to an HLO opcode tpu-doctor knows, or is
// documented in data/hlo/mlir_ops_unmapped.tsv with what happens to it: a frontend never meets a
// dialect op that no table accounts for.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tpudoctor/knowledge/hlo_ops.h"
#include "tpudoctor/knowledge/op_support.h"
#include "tpudoctor/support/embedded.h"

namespace tpudoctor {
namespace {

std::set<std::string, std::less<>> Column0(std::string_view path) {
  std::set<std::string, std::less<>> out;
  for (const auto& row : EmbeddedTsvRows(path)) {
    if (!row.empty()) out.emplace(row[0]);
  }
  return out;
}

bool Mapped(std::string_view op) {
  const std::string opcode = StableHloOpcode(op);
  return opcode == "return" || HloOpKind(opcode).has_value();
}

TEST(MlirOpTable, EveryDialectOpIsMappedOrDocumented) {
  const auto ops = Column0("data/hlo/mlir_ops.tsv");
  const auto unmapped = Column0("data/hlo/mlir_ops_unmapped.tsv");
  ASSERT_GT(ops.size(), 250u);
  for (const std::string& op : ops) {
    if (unmapped.contains(op)) {
      EXPECT_FALSE(Mapped(op)) << op << " maps to an opcode: drop it from mlir_ops_unmapped.tsv";
    } else {
      EXPECT_TRUE(Mapped(op)) << op << " (`" << StableHloOpcode(op)
                              << "`) is not an HLO opcode: map it in stablehlo_ops.tsv or "
                                 "document it in mlir_ops_unmapped.tsv";
    }
  }
  for (const std::string& op : unmapped)
    EXPECT_TRUE(ops.contains(op)) << op << " is in no dialect: drop it from mlir_ops_unmapped.tsv";
}

TEST(MlirOpTable, DocumentedOpsSayWhatHappens) {
  for (const auto& row : EmbeddedTsvRows("data/hlo/mlir_ops_unmapped.tsv")) {
    ASSERT_GE(row.size(), 2u);
    const OpInfo info = LookupOp("hlo", StableHloOpcode(row[0]));
    EXPECT_EQ(info.support, OpSupport::kUnknownOp) << row[0];
    EXPECT_EQ(info.reason, row[1]) << row[0] << ": the frontend's message is the table's";
  }
}

}  // namespace
}  // namespace tpudoctor
