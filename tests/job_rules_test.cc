// JOB rules: every rule has a doc page and fires_/silent_ fixtures under testdata/rules/JOBnnn/
// (job files: .yaml .yml .json .py .sh; a `NAME.model` file beside one names the model, in the
// same folder, that `check --job` is given with it). Findings are compared with `.expected`.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/test_util.h"
#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/jobs/job.h"
#include "tpudoctor/support/embedded.h"

namespace tpudoctor {
namespace {

namespace fs = std::filesystem;
using testing::Testdata;

std::vector<fs::path> JobFixtures(const std::string& code) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(Testdata("rules/" + code))) {
    const std::string name = e.path().filename().string();
    const auto ext = e.path().extension();
    const bool job =
        ext == ".yaml" || ext == ".yml" || ext == ".py" || ext == ".sh" ||
        (ext == ".json" && (name.starts_with("fires_") || name.starts_with("silent_")));
    if (job) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Format(const std::vector<Diagnostic>& findings, const std::string& code) {
  std::string out;
  for (const Diagnostic& d : findings) {
    if (d.code != code) continue;
    out += std::string(NameOf(d.severity)) + "[" + d.code + "]: " + d.message + "\n";
    out += "  at " + d.location.node + "\n";
    if (d.fix) out += "  fix: " + d.fix->description + "\n";
  }
  return out;
}

TEST(JobRulesTest, EveryRuleHasDocsAndFixtures) {
  std::string previous;
  for (const auto& rule : AllJobRules()) {
    const std::string code(rule->code());
    EXPECT_LT(previous, code) << "the registry must be sorted by code";
    previous = code;
    auto doc = FindEmbedded("docs/rules/" + code + ".md");
    ASSERT_TRUE(doc.has_value()) << code << " has no docs/rules/" << code << ".md";
    for (const char* heading : {"## What it flags", "## Why it matters on TPU", "## Example",
                                "## How to fix", "## References"}) {
      EXPECT_NE(doc->find(heading), std::string_view::npos) << code << " lacks " << heading;
    }
    int fires = 0, silent = 0;
    for (const auto& f : JobFixtures(code)) {
      fires += f.filename().string().starts_with("fires_");
      silent += f.filename().string().starts_with("silent_");
    }
    EXPECT_GT(fires, 0) << code;
    EXPECT_GT(silent, 0) << code;
  }
}

TEST(JobRulesTest, FixturesMatchGoldens) {
  for (const auto& rule : AllJobRules()) {
    const std::string code(rule->code());
    for (const auto& path : JobFixtures(code)) {
      SCOPED_TRACE(path.string());
      auto source = ReadSource(path.string());
      ASSERT_TRUE(source);
      auto spec = ReadJobSpec(*source);
      ASSERT_TRUE(spec) << spec.error().message;
      std::optional<LoadedModel> model;
      fs::path model_file = path;
      model_file.replace_extension(".model");
      if (fs::exists(model_file)) {
        std::string name = testing::ReadFile(model_file);
        name.erase(name.find_last_not_of("\n") + 1);
        auto model_source = ReadSource((path.parent_path() / name).string());
        ShapeOptions shapes;
        shapes.batch = ModelBatchOf(*spec, std::nullopt).per_device;
        auto loaded = LoadModel(*model_source, shapes);
        ASSERT_TRUE(loaded) << loaded.error().message;
        model = std::move(*loaded);
      }
      const std::string found = Format(CheckJob({*spec, model ? &model->graph : nullptr}), code);
      testing::ExpectFixtureFindings(path, found);
    }
  }
}

// The seed: `accelerator_count: 8` with TPU_V3 is a valid Vertex AI TPU pool; the same
// with TPU_V5_LITEPOD is not how Vertex AI takes v5e (JOB002), and an unknown spelling is JOB001.
TEST(JobRulesTest, SeedAcceleratorSpellings) {
  auto codes = [](const std::string& yaml) {
    auto spec = ReadJobSpec(Source{"job.yaml", yaml});
    EXPECT_TRUE(spec) << (spec ? "" : spec.error().message);
    std::vector<std::string> out;
    for (const Diagnostic& d : CheckJob({*spec})) out.push_back(d.code);
    return out;
  };
  const std::string pool =
      "worker_pool_specs:\n  - machine_spec:\n      machine_type: cloud-tpu\n"
      "      accelerator_type: ";
  EXPECT_TRUE(codes(pool + "TPU_V3\n      accelerator_count: 8\n    replica_count: 1\n").empty());
  EXPECT_EQ(codes(pool + "TPU_V5_LITEPOD\n      accelerator_count: 8\n    replica_count: 1\n"),
            std::vector<std::string>{"JOB002"});
  EXPECT_EQ(codes(pool + "TPU_V5LITE\n      accelerator_count: 8\n    replica_count: 1\n"),
            std::vector<std::string>{"JOB001"});
  EXPECT_EQ(codes(pool + "TPU_V3\n      accelerator_count: 32\n    replica_count: 1\n"),
            std::vector<std::string>{"JOB002"});
}

TEST(JobRulesTest, BadJobFilesAreOneLineErrors) {
  const std::pair<std::string, std::string> kBad[] = {
      {"job.yaml", "workerPoolSpecs: [\n"},
      {"job.yaml", std::string(200, '[')},
      {"job.json", "{\"workerPoolSpecs\": 3"},
      {"job.yaml", "just a string\n"},
      {"job.yaml", ""},
      {"job.yaml", std::string(5 << 20, 'a')},
      {"train.py", "print('hello')\n"},
      {"job.yaml", std::string("a: \0b\n", 6)},
      {"job.yaml", "workerPoolSpecs:\n  - machineSpec: 7\n"},
      // Whitespace alone under a YAML or JSON name (found by scripts/fuzz.sh job: it read one
      // byte past the text looking for the first character).
      {"job.yaml", "\t\t\t\t    "},
      {"job.json", " \r\n"},
      {"launch.sh", "\n\n"},
  };
  for (const auto& [name, text] : kBad) {
    auto spec = ReadJobSpec(Source{name, text});
    ASSERT_FALSE(spec) << name << ": " << text.substr(0, 40);
    EXPECT_EQ(spec.error().message.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace tpudoctor
