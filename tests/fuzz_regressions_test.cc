// Replays the regression corpus of every fuzz target (testdata/fuzz/<target>/: the audit's
// reproducers and every input a fuzzer ever crashed on) through the target's own code
// (fuzz/fuzz_targets.h), in the normal test binary, so a fixed crash stays fixed on every CI run
// — and under ASan/UBSan when the suite is built with TPUD_SANITIZE.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "fuzz/fuzz_targets.h"
#include "tests/test_util.h"

namespace tpudoctor {
namespace {

namespace fs = std::filesystem;

TEST(FuzzRegressionsTest, EveryTargetReplaysItsCorpus) {
  std::size_t replayed = 0;
  for (const fuzz::Target& target : fuzz::Targets()) {
    const fs::path dir = testing::Testdata("fuzz/" + std::string(target.name));
    ASSERT_TRUE(fs::is_directory(dir)) << dir << ": every fuzz target keeps a regression corpus";
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    EXPECT_FALSE(files.empty()) << dir;
    for (const fs::path& f : files) {
      SCOPED_TRACE(f.string());
      target.run(testing::ReadFile(f));  // must return: no crash, no sanitizer report, no hang
      ++replayed;
    }
  }
  EXPECT_GE(replayed, 40u);
}

}  // namespace
}  // namespace tpudoctor
