// `plan --emit DIR` writes a user's folder as a transaction: it never replaces their files without
// --force, never writes through a planted link, and leaves the folder byte-identical when it fails
// (the cases of shared/repro/emit_cases.sh).
#include "write_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <sstream>

#include "cli.h"
#include "tests/test_util.h"

namespace tpudoctor {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;
using testing::SnapshotTree;

struct Outcome {
  int code;
  std::string out, err;
};

Outcome Emit(const fs::path& dir, bool force = false) {
  fs::current_path(testing::SourceDir());
  std::vector<std::string> args = {"plan", "examples/configs/gpt2.json", "--emit", dir.string()};
  if (force) args.push_back("--force");
  std::ostringstream out, err;
  const int code = cli::Run(args, out, err);
  return {code, out.str(), err.str()};
}

void ExpectOneLineRefusal(const Outcome& r) {
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(EmitTest, ExistingFileIsNotReplacedWithoutForce) {
  ScratchDir scratch;
  const fs::path dir = scratch / "job";
  fs::create_directory(dir);
  testing::WriteFile(dir / "train.py", "my script\n");
  const std::string before = SnapshotTree(scratch.path());
  const Outcome r = Emit(dir);
  ExpectOneLineRefusal(r);
  EXPECT_NE(r.err.find("`train.py` already exists"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_EQ(SnapshotTree(scratch.path()), before);
}

TEST(EmitTest, ForceReplacesAndLeavesNoTemporaries) {
  ScratchDir scratch;
  const fs::path dir = scratch / "job";
  fs::create_directory(dir);
  testing::WriteFile(dir / "train.py", "my script\n");
  const Outcome r = Emit(dir, /*force=*/true);
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  EXPECT_NE(testing::ReadFile(dir / "train.py"), "my script\n");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"create_tpu_vm.sh", "gke_jobset.yaml", "train.py",
                                             "vertex_custom_job.py", "vertex_custom_job.yaml"}));
  struct stat st;
  ASSERT_EQ(::stat((dir / "create_tpu_vm.sh").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IXUSR, 0u) << "the gcloud script is executable";
}

TEST(EmitTest, PlantedLinkAtATemporaryNameIsNotWrittenThrough) {
  ScratchDir scratch;
  const fs::path dir = scratch / "job";
  fs::create_directory(dir);
  testing::WriteFile(scratch / "victim.txt", "victim\n");
  // The temporary name the tool used to write to, and names like the ones it uses now.
  fs::create_symlink(scratch / "victim.txt", dir / ".train.py.tpu-doctor-tmp");
  const Outcome r = Emit(dir);
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  EXPECT_EQ(testing::ReadFile(scratch / "victim.txt"), "victim\n");
  EXPECT_TRUE(fs::is_symlink(dir / ".train.py.tpu-doctor-tmp"));
}

TEST(EmitTest, TargetThatIsAFolderFailsBeforeAnythingIsWritten) {
  for (const bool force : {false, true}) {
    ScratchDir scratch;
    const fs::path dir = scratch / "job";
    fs::create_directories(dir / "train.py");
    const std::string before = SnapshotTree(scratch.path());
    const Outcome r = Emit(dir, force);
    ExpectOneLineRefusal(r);
    EXPECT_NE(r.err.find("`train.py` exists and is not a regular file"), std::string::npos)
        << r.err;
    EXPECT_EQ(SnapshotTree(scratch.path()), before);
  }
}

TEST(EmitTest, NewNestedFolderAppearsWhole) {
  ScratchDir scratch;
  const Outcome r = Emit(scratch / "a/b/job");
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  EXPECT_TRUE(fs::exists(scratch / "a/b/job/train.py"));
  // Nothing but the folder itself was left beside it.
  std::vector<std::string> beside;
  for (const auto& e : fs::directory_iterator(scratch / "a/b"))
    beside.push_back(e.path().filename().string());
  EXPECT_EQ(beside, std::vector<std::string>{"job"});
}

TEST(EmitTest, PathThatIsAFileIsRefused) {
  ScratchDir scratch;
  testing::WriteFile(scratch / "job", "not a folder\n");
  const std::string before = SnapshotTree(scratch.path());
  ExpectOneLineRefusal(Emit(scratch / "job"));
  EXPECT_EQ(SnapshotTree(scratch.path()), before);
}

TEST(WriteFilesTest, AFailedRenameUndoesTheEarlierOnes) {
  // Two files of one name: the second rename finds the first in place (RENAME_NOREPLACE), so the
  // transaction must take the first one back out.
  ScratchDir scratch;
  testing::WriteFile(scratch / "keep.txt", "mine\n");
  const std::string before = SnapshotTree(scratch.path());
  auto r = cli::WriteFilesTransaction(scratch.path().string(), {{"a.txt", "1"}, {"a.txt", "2"}},
                                      /*overwrite=*/false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("left as it was"), std::string::npos) << r.error().message;
  EXPECT_EQ(SnapshotTree(scratch.path()), before);
}

TEST(WriteFilesTest, ANameWithASlashIsRefused) {
  ScratchDir scratch;
  auto r = cli::WriteFilesTransaction(scratch.path().string(), {{"../x", "1"}}, true);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(fs::exists(scratch.path().parent_path() / "x"));
}

}  // namespace
}  // namespace tpudoctor
