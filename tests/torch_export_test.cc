// torch.export programs (.pt2 archives and bare model.json): real archives made by torch 2.11 and
// hand-made programs (scripts/gen_pt2_fixtures.py); verdicts, names and locations as the user
// wrote them, symbolic sizes, FLOPs, and hostile archives.
#include "tpudoctor/frontend/torch_export.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "src/frontends/torch_export/sym_expr.h"
#include "src/support/zip_archive.h"
#include "tests/test_util.h"
#include "tpudoctor/check/check.h"
#include "tpudoctor/cost/op_cost.h"
#include "tpudoctor/ir/verify.h"
#include "tpudoctor/knowledge/torch_ops.h"
#include "tpudoctor/report/report.h"

namespace tpudoctor {
namespace {

using testing::Testdata;

Report CheckFile(const std::string& rel, const ShapeOptions& options = {}) {
  LoadedModel m = testing::LoadOrDie(Testdata(rel), options);
  EXPECT_TRUE(VerifyGraph(m.graph).empty()) << rel;
  const TargetSpec& t = **FindTarget(kDefaultTarget);
  return BuildReport(rel, m, t, RunChecks(m.graph, t));
}

std::set<std::string> Codes(const Report& r, Severity at_least) {
  std::set<std::string> out;
  for (const Diagnostic& d : r.findings) {
    if (d.severity >= at_least) out.insert(d.code);
  }
  return out;
}

const Diagnostic* Find(const Report& r, const std::string& code) {
  for (const Diagnostic& d : r.findings) {
    if (d.code == code) return &d;
  }
  return nullptr;
}

TEST(TorchExportTest, RealArchivesGetTheRightVerdicts) {
  EXPECT_EQ(CheckFile("pt2/mlp_dynamic_batch.pt2").verdict, Verdict::kReady);
  // float64 weights and input: PyTorch/XLA keeps F64, which XLA:TPU computes as float32 pairs.
  Report f64 = CheckFile("pt2/f64_mlp.pt2");
  EXPECT_EQ(f64.verdict, Verdict::kRunsWithWarnings);
  EXPECT_TRUE(Codes(f64, Severity::kWarning).count("TPU002"));
  // `.to(torch.float64)` inside the model.
  EXPECT_TRUE(
      Codes(CheckFile("pt2/torch_export_linear_dynbatch.pt2"), Severity::kWarning).count("TPU002"));
  // Boolean-mask indexing and nonzero: dynamic shapes at their roots.
  for (const char* f : {"pt2/nonzero_mask.pt2", "pt2/torch_export_nonzero.pt2"}) {
    Report r = CheckFile(f);
    EXPECT_EQ(r.verdict, Verdict::kBlocked) << f;
    std::set<std::string> roots;
    for (const Diagnostic& d : r.findings) {
      if (d.code == "SHP001") roots.insert(d.location.op);
    }
    EXPECT_EQ(roots, (std::set<std::string>{"aten.nonzero.default", "aten.index.Tensor"})) << f;
  }
  // Static batch 7, 100→300→10: an MXU warning, nothing blocking. The batch of 7 is the export's
  // example input, not the training batch, so PERF003 stays silent (it fires with --batch 7).
  Report odd = CheckFile("pt2/mlp_static.pt2");
  EXPECT_EQ(odd.verdict, Verdict::kRunsWithWarnings);
  EXPECT_EQ(Codes(odd, Severity::kWarning), (std::set<std::string>{"PERF002"}));
}

TEST(TorchExportTest, FindingsNameTheUsersCode) {
  Report r = CheckFile("pt2/nonzero_mask.pt2");
  const Diagnostic* d = Find(r, "SHP001");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->location.file, "gen_models.py");  // not torch/nn/modules/...
  EXPECT_EQ(d->location.line, 158);
  // Parameters keep their state-dict names; modules their path and class.
  LoadedModel m = testing::LoadOrDie(Testdata("pt2/mlp_static.pt2"));
  EXPECT_TRUE(m.graph.FindValue("a.weight").has_value());
  EXPECT_EQ(m.producer, "pytorch 2.11.0+cu130");
  bool scoped = false;
  for (const Node& n : m.graph.nodes()) scoped |= n.loc.scope == "b (Linear)";
  EXPECT_TRUE(scoped);
}

TEST(TorchExportTest, OpsTorchXlaCannotRunOnTheDeviceWarn) {
  Report r = CheckFile("pt2/fallback_and_item.pt2");
  EXPECT_EQ(r.verdict, Verdict::kRunsWithWarnings);  // slow, not blocked
  std::set<std::string> ops;
  for (const Diagnostic& d : r.findings) {
    if (d.code == "TPU003") ops.insert(d.location.op);
  }
  EXPECT_EQ(ops, (std::set<std::string>{"aten.histc.default", "aten.item.default"}));
}

// In-place variants (`relu_`, `add_`, `hardswish_`: a trailing underscore) are functionalized by
// PyTorch/XLA into the out-of-place op, so they lower as it does (seen in a MobileNetV3 export).
TEST(TorchExportTest, InPlaceOpsLowerLikeTheirFunctionalOp) {
  for (const char* op : {"relu_.default", "add_.Tensor", "hardswish_.default", "mul_.Tensor"}) {
    const AtenOpInfo info = LookupAtenOp(op);
    EXPECT_EQ(info.info.support, OpSupport::kOk) << op;
    EXPECT_FALSE(info.canonical.empty()) << op;
  }
  EXPECT_EQ(LookupAtenOp("relu_.default").canonical, LookupAtenOp("relu.default").canonical);
  // Not in-place variants: dunder names, and ops with no lowering stay what they are.
  EXPECT_NE(LookupAtenOp("__and__.Tensor").canonical, "__and_");
  EXPECT_EQ(LookupAtenOp("no_such_op_.default").info.support, OpSupport::kHostFallback);
}

TEST(TorchExportTest, BatchGivesTheSymbolAValue) {
  ShapeOptions options;
  options.batch = 32;
  LoadedModel m = testing::LoadOrDie(Testdata("pt2/convnet_dynamic_batch.pt2"), options);
  EXPECT_EQ(m.graph.value(m.graph.inputs()[0]).type.ToString(), "f32[32,3,224,224]");
  // conv 3→64 3x3 over 224x224, and linear 64→10: the canonical ops' FLOPs.
  double conv = 0, linear = 0;
  const auto costs = ComputeOpCosts(m.graph);
  for (const Node& n : m.graph.nodes()) {
    if (n.name == "conv2d") conv = costs[static_cast<std::size_t>(n.id)].flops;
    if (n.name == "fc") linear = costs[static_cast<std::size_t>(n.id)].flops;
  }
  EXPECT_DOUBLE_EQ(conv, 2.0 * 32 * 64 * 224 * 224 * 3 * 3 * 3);
  EXPECT_DOUBLE_EQ(linear, 2.0 * 32 * 64 * 10);
  // Without a value the symbol stays, and SHP002 asks for one.
  Report r = CheckFile("pt2/convnet_dynamic_batch.pt2");
  EXPECT_TRUE(Codes(r, Severity::kNote).count("SHP002"));
  // A static export keeps its batch and says why.
  LoadedModel fixed = testing::LoadOrDie(Testdata("pt2/mlp_static.pt2"), options);
  ASSERT_EQ(fixed.shape_notes.size(), 1u);
  EXPECT_NE(fixed.shape_notes[0].find("static batch of 7"), std::string::npos);
}

TEST(TorchExportTest, AttentionIsItsTwoMatmulsAndSoftmax) {
  ShapeOptions options;
  options.batch = 4;
  LoadedModel m = testing::LoadOrDie(Testdata("pt2/attention_block.pt2"), options);
  EXPECT_TRUE(VerifyGraph(m.graph).empty());
  std::map<std::string, double> flops;
  const auto costs = ComputeOpCosts(m.graph);
  for (const Node& n : m.graph.nodes()) flops[n.name] = costs[static_cast<std::size_t>(n.id)].flops;
  // batch 4, 8 heads, 128 x 128 positions, head dim 64.
  EXPECT_DOUBLE_EQ(flops["attn/scores"], 2.0 * 4 * 8 * 128 * 128 * 64);
  EXPECT_DOUBLE_EQ(flops["attn"], 2.0 * 4 * 8 * 128 * 128 * 64);
  EXPECT_DOUBLE_EQ(flops["q_lin"], 2.0 * 4 * 128 * 512 * 512);
  auto scores = m.graph.FindValue("attn/scores");
  ASSERT_TRUE(scores.has_value());
  EXPECT_EQ(m.graph.value(*scores).type.ToString(), "bf16[4,8,128,128]");
}

// torch.cond becomes an If whose branch graphs take the operands: on a runtime predicate with
// same-shaped branches XLA lowers it to a conditional (a note); branches of different shapes
// (which torch.export itself refuses, built by hand here) make the output shape data-dependent.
TEST(TorchExportTest, CondBranchesAreAnalysed) {
  Report fine = CheckFile("pt2/cond_static.pt2");
  EXPECT_EQ(fine.verdict, Verdict::kReady);
  const Diagnostic* note = Find(fine, "CF001");
  ASSERT_NE(note, nullptr);
  EXPECT_EQ(note->severity, Severity::kNote);
  EXPECT_EQ(note->location.op, "higher_order.cond");
  Report divergent = CheckFile("pt2/cond_divergent.pt2");
  EXPECT_EQ(divergent.verdict, Verdict::kBlocked);
  EXPECT_TRUE(Codes(divergent, Severity::kError).count("CF001"));
}

TEST(TorchExportTest, BareProgramJsonLoadsLikeItsArchive) {
  LoadedModel a = testing::LoadOrDie(Testdata("pt2/convnet_dynamic_batch.pt2"));
  LoadedModel b = testing::LoadOrDie(Testdata("pt2/convnet_program.json"));
  EXPECT_EQ(PrintGraphText(a.graph), PrintGraphText(b.graph));
}

TEST(TorchExportTest, HostileArchivesAreRefusedWithOneLine) {
  const std::map<std::string, std::string> expected = {
      {"bad_dotdot.pt2", "unsafe name"},
      {"bad_absolute.pt2", "unsafe name"},
      {"bad_bomb.pt2", "zip bomb"},
      {"bad_claims_gigabytes.pt2", "claims 4294967294 bytes"},
      {"bad_truncated.pt2", "truncated or damaged"},
      {"bad_no_program.pt2", "not a torch.export .pt2 archive"},
      {"bad_deep_json.pt2", "nested more than"},
      {"bad_json.pt2", "invalid JSON at byte"},
  };
  for (const auto& [file, words] : expected) {
    auto src = ReadSource(Testdata("pt2/" + file).string());
    ASSERT_TRUE(src.ok()) << file;
    auto m = LoadModel(*src, {});
    ASSERT_FALSE(m.ok()) << file;
    EXPECT_NE(m.error().message.find(words), std::string::npos) << m.error().message;
    EXPECT_EQ(m.error().message.find('\n'), std::string::npos) << file;
  }
}

TEST(TorchExportTest, ProgramErrorsSayWhatIsWrong) {
  auto load = [](const std::string& json) { return LoadTorchExport(Source{"m.json", json}, {}); };
  EXPECT_FALSE(load(R"({"graph_module": 3})").ok());
  auto dangling = load(R"({"graph_module": {"graph": {"inputs": [], "outputs": [], "nodes": [
      {"target": "torch.ops.aten.relu.default", "name": "r",
       "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "ghost"}}}],
       "outputs": [{"as_tensor": {"name": "r"}}]}]}}})");
  ASSERT_FALSE(dangling.ok());
  EXPECT_NE(dangling.error().message.find("`ghost`"), std::string::npos);
  auto twice = load(R"({"graph_module": {"graph": {"inputs": [], "outputs": [], "nodes": [
      {"target": "torch.ops.aten.zeros.default", "name": "z", "inputs": [],
       "outputs": [{"as_tensor": {"name": "z"}}, {"as_tensor": {"name": "z"}}]}]}}})");
  ASSERT_FALSE(twice.ok());
}

TEST(SymDimTest, SympyExpressions) {
  using torch_export::ParseSymDim;
  const std::map<std::string, std::int64_t> v = {{"s0", 8}};
  EXPECT_EQ(ParseSymDim("s77", {}).dim, Dim::Symbol("s77"));
  EXPECT_EQ(ParseSymDim("Symbol('s77', positive=True, integer=True)", {}).dim, Dim::Symbol("s77"));
  EXPECT_EQ(ParseSymDim("2*s0", v).dim, Dim::Static(16));
  EXPECT_EQ(ParseSymDim("FloorDiv(s0, 3) + 1", v).dim, Dim::Static(3));
  EXPECT_EQ(ParseSymDim("s0 - 1", v).dim, Dim::Static(7));
  EXPECT_EQ(ParseSymDim("2*s1", v).dim, Dim::Symbol("2*s1"));
  EXPECT_EQ(ParseSymDim("u0", {}).symbols, (std::set<std::string>{"u0"}));
  EXPECT_TRUE(ParseSymDim("s0 *", v).dim.is_unknown());
  EXPECT_TRUE(ParseSymDim("99999999999999999999", {}).dim.is_unknown());
  EXPECT_TRUE(ParseSymDim(std::string(100000, '('), {}).dim.is_unknown());
  EXPECT_TRUE(ParseSymDim("9223372036854775807*2", {}).dim.is_unknown());
  EXPECT_TRUE(ParseSymDim("s0 - 9", v).dim.is_unknown());  // negative
}

}  // namespace
}  // namespace tpudoctor
