// The hostile inputs of an audit (shared/repro, copied to testdata/repro), run the way a user runs
// them: the real binary in a child process, its peak memory and wall time measured. Each one gets
// exit 2 and one line on stderr, or a correct answer, within 512 MiB and 10 s. The goldens of the
// same cases (testdata/cli/{bad_,}repro_*) pin what they print.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "tests/test_util.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

namespace fs = std::filesystem;

constexpr long kMaxRssKiB = 512 * 1024;
constexpr double kMaxSeconds = 10;

struct Outcome {
  bool signaled = false;
  int code = -1;
  std::string out, err;
  long max_rss_kib = 0;  // the process and every child it waited for
  double seconds = 0;
};

// Runs the tpu-doctor binary with `args` from the repository root; `while_running` runs on another
// thread with the child's pid while the child runs.
Outcome RunBinary(const std::vector<std::string>& args,
                  const std::function<void(pid_t)>& while_running = nullptr) {
  int out_pipe[2], err_pipe[2];
  EXPECT_EQ(::pipe(out_pipe), 0);
  EXPECT_EQ(::pipe(err_pipe), 0);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    if (::chdir(TPUD_SOURCE_DIR) != 0) _exit(127);
    std::vector<char*> argv = {const_cast<char*>(TPUD_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(TPUD_BINARY, argv.data());
    _exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  std::thread beside;
  if (while_running) beside = std::thread(while_running, pid);
  Outcome o;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&o.out, &o.err};
  int open = 2;
  char buf[1 << 16];
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        if (sinks[i]->size() < (std::size_t{64} << 20)) sinks[i]->append(buf, n);
        continue;
      }
      ::close(fds[i].fd);
      fds[i].fd = -1;
      --open;
    }
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  if (beside.joinable()) beside.join();
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  o.signaled = WIFSIGNALED(status);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.max_rss_kib = usage.ru_maxrss;
  return o;
}

void ExpectWithinBudget(const Outcome& o) {
  EXPECT_FALSE(o.signaled) << "killed by a signal; stderr: " << o.err;
  EXPECT_LE(o.max_rss_kib, kMaxRssKiB) << "peak RSS";
  EXPECT_LE(o.seconds, kMaxSeconds) << "wall time";
}

void ExpectOneLineError(const Outcome& o) {
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

TEST(HostileTest, EveryReproducerWithinMemoryAndTime) {
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(testing::Testdata("cli"))) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".args" &&
        (name.starts_with("bad_repro_") || name.starts_with("repro_"))) {
      cases.push_back(e.path());
    }
  }
  std::sort(cases.begin(), cases.end());
  ASSERT_GE(cases.size(), 14u);
  for (const fs::path& c : cases) {
    SCOPED_TRACE(c.filename().string());
    const std::string text = testing::ReadFile(c);
    std::vector<std::string> args;
    for (std::string_view line : SplitLines(text)) args.emplace_back(line);
    const Outcome o = RunBinary(args);
    ExpectWithinBudget(o);
    if (c.filename().string().starts_with("bad_")) {
      ExpectOneLineError(o);
    } else {
      EXPECT_LE(o.code, 1) << o.err;
      EXPECT_NE(o.out.find("verdict:"), std::string::npos) << o.err;
    }
  }
}

TEST(HostileTest, LogTruncatedWhileReadGivesWhatWasRead) {
  // What logrotate's copytruncate does to a live training log: the file shrinks under the reader.
  // Mapped, this was SIGBUS; read() just sees the end early.
  testing::ScratchDir scratch;
  const fs::path log = scratch / "train.log";
  const std::string lines = testing::ReadFile(testing::Testdata("logs/healthy_jax.log"));
  {
    std::ofstream out(log, std::ios::binary);
    for (std::size_t written = 0; written < (std::size_t{160} << 20); written += lines.size())
      out << lines;
  }
  // Truncate once the reader is 16 MiB into the file (its offset, from /proc/PID/fdinfo).
  bool truncated = false;
  auto truncate_mid_read = [&](pid_t pid) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(8);
    while (!truncated && std::chrono::steady_clock::now() < give_up) {
      std::error_code ec;
      for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        if (fs::read_symlink(fd.path(), ec) != log) continue;
        std::ifstream info("/proc/" + std::to_string(pid) + "/fdinfo/" +
                           fd.path().filename().string());
        std::string key;
        long long pos = 0;
        if (info >> key >> pos && key == "pos:" && pos > (16 << 20)) {
          truncated = ::truncate(log.c_str(), 0) == 0;
        }
      }
    }
  };
  const Outcome o = RunBinary({"logs", log.string()}, truncate_mid_read);
  ASSERT_TRUE(truncated) << "the reader finished before the file could be truncated";
  EXPECT_NE(o.out.find("shrank"), std::string::npos) << o.out.substr(0, 500);
  ExpectWithinBudget(o);
  EXPECT_LE(o.code, 1) << o.err;
  EXPECT_NE(o.out.find("tpu-doctor"), std::string::npos);
}

TEST(HostileTest, FifoWithoutWriterIsAnErrorNotAHang) {
  testing::ScratchDir scratch;
  const fs::path fifo = scratch / "live.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Outcome o = RunBinary({"logs", fifo.string()});
  ExpectWithinBudget(o);
  ExpectOneLineError(o);
  EXPECT_NE(o.err.find("FIFO"), std::string::npos) << o.err;
}

TEST(HostileTest, SymlinkLoopsAreWalkedOnce) {
  testing::ScratchDir scratch;
  const fs::path dir = scratch / "models";
  fs::create_directory(dir);
  fs::copy_file(testing::SourceDir() / "examples/resnet50.onnx", dir / "resnet50.onnx");
  for (int i = 1; i <= 6; ++i) fs::create_directory_symlink(".", dir / ("l" + std::to_string(i)));
  fs::create_symlink("resnet50.onnx", dir / "again.onnx");
  // A link out of the folder is not followed.
  fs::create_directory(scratch / "elsewhere");
  fs::copy_file(testing::Testdata("models/f64_mlp.onnx"), scratch / "elsewhere/f64_mlp.onnx");
  fs::create_directory_symlink(scratch / "elsewhere", dir / "outside");
  const Outcome o = RunBinary({"check", dir.string(), "--fail-on", "never"});
  ExpectWithinBudget(o);
  EXPECT_EQ(o.code, 0) << o.err;
  std::size_t reports = 0;
  for (std::size_t at = o.out.find("tpu-doctor 0.1.0:"); at != std::string::npos;
       at = o.out.find("tpu-doctor 0.1.0:", at + 1)) {
    ++reports;
  }
  EXPECT_EQ(reports, 1u) << o.out.substr(0, 2000);
  EXPECT_NE(o.out.find(dir.string() + "/resnet50.onnx"), std::string::npos);
  EXPECT_EQ(o.out.find("f64_mlp"), std::string::npos);
}

TEST(HostileTest, OneBadFileInAFolderDoesNotHideTheOthers) {
  testing::ScratchDir scratch;
  fs::copy_file(testing::Testdata("models/f64_mlp.onnx"), scratch / "a_good.onnx");
  testing::WriteFile(scratch / "b_bad.onnx", "not a model");
  fs::copy_file(testing::SourceDir() / "examples/resnet50.onnx", scratch / "c_good.onnx");
  const Outcome o = RunBinary({"check", scratch.path().string(), "--fail-on", "never"});
  ExpectWithinBudget(o);
  EXPECT_EQ(o.code, 2) << "the worst outcome: a file that could not be checked";
  EXPECT_NE(o.out.find("a_good.onnx"), std::string::npos);
  EXPECT_NE(o.out.find("c_good.onnx"), std::string::npos);
  EXPECT_NE(o.err.find("b_bad.onnx: not a valid ONNX protobuf"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("the report covers 2 models; 1 file or folder could not be checked"),
            std::string::npos)
      << o.err;
}

}  // namespace
}  // namespace tpudoctor
