// One fixed report through every renderer, compared whole with goldens (UPDATE_GOLDENS=1
// rewrites them): a blocked model with findings, notes and fixes, and a ready one with estimates
// on several targets, so every section of every format is exercised.
#include "tpudoctor/report/render.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"
#include "tpudoctor/analyze.h"

namespace tpudoctor {
namespace {

Report Fixed(const std::string& rel, std::optional<std::int64_t> batch) {
  auto source = ReadSource("testdata/" + rel);
  EXPECT_TRUE(source.ok());
  AnalyzeOptions options;
  options.shapes.batch = batch;
  options.estimate_targets = {"tpu-v5e", "tpu-v6e-8", "nvidia-h100"};
  auto report = Analyze(*source, options);
  EXPECT_TRUE(report.ok()) << (report.ok() ? "" : report.error().message);
  return std::move(*report);
}

void ExpectEveryRenderer(const Report& r, const std::string& stem) {
  const std::string base = testing::Testdata("render/" + stem).string();
  testing::ExpectGolden(base + ".txt", RenderText(r));
  testing::ExpectGolden(base + ".json", RenderJson(r));
  testing::ExpectGolden(base + ".sarif", RenderSarif(r));
  testing::ExpectGolden(base + ".html", RenderHtml(r));
  if (!r.estimates.empty()) {
    testing::ExpectGolden(base + ".estimate.txt", RenderEstimateText(r));
    testing::ExpectGolden(base + ".estimate.json", RenderEstimateJson(r));
  }
}

TEST(RenderTest, BlockedModelInEveryFormat) {
  std::filesystem::current_path(testing::SourceDir());
  ExpectEveryRenderer(Fixed("pt2/nonzero_mask.pt2", std::nullopt), "blocked_pt2");
}

TEST(RenderTest, ReadyModelInEveryFormat) {
  std::filesystem::current_path(testing::SourceDir());
  ExpectEveryRenderer(Fixed("models/mlp_4096x3.onnx", 8), "ready_onnx");
}

TEST(RenderTest, HtmlIsSelfContainedAndEscaped) {
  std::filesystem::current_path(testing::SourceDir());
  Report r = Fixed("models/mlp_4096x3.onnx", 8);
  r.model = "<b>&\"model\"</b>";
  const std::string page = RenderHtml(r);
  EXPECT_EQ(page.find("<b>&"), std::string::npos);
  EXPECT_NE(page.find("&lt;b&gt;&amp;&quot;model&quot;&lt;/b&gt;"), std::string::npos);
  for (const char* banned : {"<script", "<link", "<img", "url(", "src="})
    EXPECT_EQ(page.find(banned), std::string::npos) << banned;
  const std::string fragment = RenderHtml(r, /*standalone=*/false);
  EXPECT_EQ(fragment.find("<html"), std::string::npos);
}

}  // namespace
}  // namespace tpudoctor
