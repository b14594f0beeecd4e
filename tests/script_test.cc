// Python scripts and notebooks (`tpu-doctor check train.py`): every script rule's firing and
// silent fixtures (testdata/rules/CODE/script/) against their goldens, --fix and --diff goldens
// (testdata/scripts/fix/), a notebook, broken code, hostile input, and the training scripts
// `plan --emit` writes.
#include "tpudoctor/script/script.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <algorithm>
#include <filesystem>

#include "tests/test_util.h"
#include "tpudoctor/report/render.h"
#include "tpudoctor/rules/rules.h"

namespace tpudoctor {
namespace {

namespace fs = std::filesystem;
using testing::Testdata;

Source SourceOf(const fs::path& path) {
  auto source = ReadSource(path.string());
  EXPECT_TRUE(source) << path;
  if (!source) return {};
  // Findings name the file relative to testdata/, whatever the build's working folder.
  source->display_name = fs::relative(path, Testdata("")).string();
  return *source;
}

std::string Format(const Report& report, const std::string& code) {
  std::string out;
  for (const Diagnostic& d : report.findings) {
    if (d.code != code) continue;
    const Location& l = d.location;
    out += (l.cell > 0 ? "cell " + std::to_string(l.cell) + ":" : "") + std::to_string(l.line) +
           ":" + std::to_string(l.column) + ": " + std::string(NameOf(d.severity)) + "[" + d.code +
           "]: " + d.message + "\n";
    for (const std::string& n : d.notes) out += "  note: " + n + "\n";
    if (d.fix) {
      out +=
          "  fix (" + std::string(NameOf(d.fix->applicability)) + "): " + d.fix->description + "\n";
    }
  }
  return out;
}

std::vector<fs::path> ScriptFixtures(const std::string& code) {
  std::vector<fs::path> out;
  const fs::path dir = Testdata("rules/" + code + "/script");
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (IsScriptPath(e.path().string())) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ScriptRulesTest, EveryScriptRuleHasFixtures) {
  int rules = 0;
  for (const RuleInfo& rule : AllRules()) {
    if (!rule.in_scripts || rule.kind == RuleKind::kLoad) continue;
    ++rules;
    int fires = 0, silent = 0;
    for (const fs::path& f : ScriptFixtures(rule.code)) {
      fires += f.filename().string().starts_with("fires_");
      silent += f.filename().string().starts_with("silent_");
    }
    EXPECT_GT(fires, 0) << rule.code << " needs testdata/rules/" << rule.code
                        << "/script/fires_*.py";
    EXPECT_GT(silent, 0) << rule.code << " needs testdata/rules/" << rule.code
                         << "/script/silent_*.py";
  }
  EXPECT_GE(rules, 15);
}

TEST(ScriptRulesTest, FixturesMatchGoldens) {
  for (const RuleInfo& rule : AllRules()) {
    for (const fs::path& path : ScriptFixtures(rule.code)) {
      SCOPED_TRACE(path.string());
      auto report = CheckScript(SourceOf(path), {});
      ASSERT_TRUE(report) << report.error().message;
      const std::string found = Format(*report, rule.code);
      testing::ExpectFixtureFindings(path, found);
    }
  }
}

// --fix applies the safe fixes, --unsafe-fixes the others too; the result is checked again, a
// second --fix changes nothing, and --diff shows the same change.
TEST(ScriptFixTest, FixesMatchGoldens) {
  for (const auto& e : fs::directory_iterator(Testdata("scripts/fix"))) {
    const fs::path path = e.path();
    if (path.extension() != ".py" || path.stem().string().find('.') != std::string::npos) continue;
    SCOPED_TRACE(path.string());
    const Source source = SourceOf(path);
    for (bool unsafe : {false, true}) {
      auto fixed = FixScript(source, {}, unsafe);
      ASSERT_TRUE(fixed) << fixed.error().message;
      EXPECT_GT(fixed->applied, 0);
      const std::string stem = path.stem().string() + (unsafe ? ".unsafe" : ".safe");
      testing::ExpectGolden(path.parent_path() / (stem + ".py"), fixed->bytes);
      testing::ExpectGolden(path.parent_path() / (stem + ".diff"),
                            UnifiedDiff(source.display_name, source.bytes, fixed->bytes));
      for (const Diagnostic& d : fixed->after.findings) {
        const bool applicable = d.fix && !d.fix->edits.empty() &&
                                (d.fix->applicability == FixApplicability::kSafe ||
                                 (unsafe && d.fix->applicability == FixApplicability::kUnsafe));
        EXPECT_FALSE(applicable) << "still fixable after --fix: " << d.code << " " << d.message;
      }
      Source again = source;
      again.bytes = fixed->bytes;
      auto twice = FixScript(again, {}, unsafe);
      ASSERT_TRUE(twice);
      EXPECT_EQ(twice->applied, 0);
      EXPECT_EQ(twice->bytes, fixed->bytes);
      if (!unsafe) {
        EXPECT_GT(fixed->unsafe_left, 0);
      }
    }
  }
}

TEST(ScriptTest, NotebookFindingsAreAtCellAndLine) {
  auto report = CheckScript(SourceOf(Testdata("scripts/notebook.ipynb")), {});
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->format, "notebook");
  testing::ExpectGolden(Testdata("scripts/notebook.expected"), RenderText(*report));
}

TEST(ScriptTest, NotebookFixKeepsOutputsAndMetadata) {
  const Source source = SourceOf(Testdata("scripts/notebook.ipynb"));
  auto fixed = FixScript(source, {}, false);
  ASSERT_TRUE(fixed) << fixed.error().message;
  EXPECT_EQ(fixed->applied, 2);  // drop_remainder, prefetch
  testing::ExpectGolden(Testdata("scripts/notebook.fixed.ipynb"), fixed->bytes);
  EXPECT_NE(fixed->bytes.find("Running on TPU"), std::string::npos);
  EXPECT_NE(fixed->bytes.find("!pip install"), std::string::npos);  // IPython lines kept
  EXPECT_NE(fixed->bytes.find("    tensorflow-datasets"), std::string::npos);
  EXPECT_NE(fixed->bytes.find("drop_remainder=True).prefetch(tf.data.AUTOTUNE)"),
            std::string::npos);
}

TEST(ScriptTest, BrokenCodeStillGetsFindings) {
  auto report = CheckScript(SourceOf(Testdata("scripts/broken_syntax.py")), {});
  ASSERT_TRUE(report) << report.error().message;
  std::vector<std::string> codes;
  for (const Diagnostic& d : report->findings) codes.push_back(d.code);
  EXPECT_NE(std::find(codes.begin(), codes.end(), "LOAD001"), codes.end());
  EXPECT_NE(std::find(codes.begin(), codes.end(), "PIPE004"), codes.end());
}

// Exercise placeholders (`batch_size =`) make tree-sitter's root an ERROR node; the sound
// statements around them are still read, not refused as "not Python".
TEST(ScriptTest, PlaceholdersInAnExerciseStillGetFindings) {
  auto report = CheckScript(SourceOf(Testdata("scripts/exercise_placeholders.py")), {});
  ASSERT_TRUE(report) << report.error().message;
  std::vector<std::string> codes;
  for (const Diagnostic& d : report->findings) codes.push_back(d.code);
  EXPECT_NE(std::find(codes.begin(), codes.end(), "LOAD001"), codes.end());
  EXPECT_NE(std::find(codes.begin(), codes.end(), "PIPE003"), codes.end());
  EXPECT_NE(std::find(codes.begin(), codes.end(), "PIPE005"), codes.end());
  for (const Diagnostic& d : report->findings) {
    if (d.code == "LOAD001") {
      EXPECT_GT(d.location.line, 1);  // at a break, not the file's start
    }
  }
}

TEST(ScriptTest, HostileInputIsAOneLineError) {
  auto one_line = [](const Source& s) {
    auto report = CheckScript(s, {});
    EXPECT_FALSE(report);
    if (report) return;
    EXPECT_EQ(report.error().message.find('\n'), std::string::npos) << report.error().message;
    EXPECT_TRUE(report.error().message.starts_with(s.display_name)) << report.error().message;
  };
  one_line({"binary.py", std::string("\x7f"
                                     "ELF\x02\x01\x01\0\0\0",
                                     10)});
  one_line({"latin1.py", "name = 'caf\xe9'\n"});
  one_line({"huge.py", std::string(100 << 20, '#')});
  one_line({"nested.py", "x = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "\n"});
  one_line({"deep_blocks.py", [] {
              std::string s;
              for (int i = 0; i < 3000; ++i) s += std::string(i, ' ') + "if x:\n";
              return s + std::string(3000, ' ') + "pass\n";
            }()});
  one_line({"notjson.ipynb", "{\"cells\": 3"});
  one_line({"nocells.ipynb", "{\"metadata\": {}}"});
}

// The training scripts `plan --emit` writes pass `check` with no warning.
TEST(ScriptTest, EmittedTrainingScriptsPassCheck) {
  int scripts = 0;
  for (const auto& e : fs::recursive_directory_iterator(Testdata("plan"))) {
    if (!IsScriptPath(e.path().string())) continue;
    ++scripts;
    SCOPED_TRACE(e.path().string());
    auto report = CheckScript(SourceOf(e.path()), {});
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_EQ(report->errors + report->warnings, 0) << RenderText(*report);
  }
  EXPECT_GE(scripts, 8);
  // One of them is a PyTorch/XLA FSDP script: the case PY003 guards.
  std::ifstream fsdp(Testdata("plan/llama70b_v6e_pytorch_fsdp/train.py"));
  std::stringstream text;
  text << fsdp.rdbuf();
  EXPECT_NE(text.str().find("XlaFullyShardedDataParallel"), std::string::npos);
  EXPECT_NE(text.str().find("optimizer.step()"), std::string::npos);
}

}  // namespace
}  // namespace tpudoctor
