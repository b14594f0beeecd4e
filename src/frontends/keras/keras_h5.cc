#include "src/frontends/keras/keras_h5.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>

#include "src/frontends/keras/hdf5_api.h"
#include "src/support/child_limits.h"
#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor::keras {
namespace {

// H5F_ACC_RDONLY without the H5check()/H5open() calls its macro makes (the library is loaded at
// run time, hdf5_api.h).
constexpr unsigned kReadOnly = 0x0000u;

// A Keras model config is JSON of a few KiB to a few MiB, even for the largest models.
constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;

// Closes an HDF5 handle when it goes out of scope.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// A scalar string attribute of the root group (fixed or variable length), or nullopt.
std::optional<std::string> StringAttribute(const Hdf5Api& h5, hid_t file, const char* name,
                                           std::string& problem) {
  if (h5.aexists(file, name) <= 0) return std::nullopt;
  Handle attr(h5.aopen(file, name, H5P_DEFAULT), h5.aclose);
  if (!attr.ok()) {
    problem = std::string("cannot open the `") + name + "` attribute";
    return std::nullopt;
  }
  Handle type(h5.aget_type(attr.get()), h5.tclose);
  Handle space(h5.aget_space(attr.get()), h5.sclose);
  if (!type.ok() || !space.ok() || h5.tget_class(type.get()) != H5T_STRING ||
      h5.sget_simple_extent_npoints(space.get()) != 1) {
    problem = std::string("the `") + name + "` attribute is not a single string";
    return std::nullopt;
  }
  if (h5.tis_variable_str(type.get()) > 0) {
    Handle mem(h5.tcopy(h5.c_string_type), h5.tclose);
    if (!mem.ok() || h5.tset_size(mem.get(), H5T_VARIABLE) < 0 ||
        h5.tset_cset(mem.get(), h5.tget_cset(type.get())) < 0) {
      return std::nullopt;
    }
    char* value = nullptr;
    if (h5.aread(attr.get(), mem.get(), &value) < 0 || value == nullptr) {
      problem = std::string("cannot read the `") + name + "` attribute";
      return std::nullopt;
    }
    std::string out(value, strnlen(value, kMaxConfigBytes + 1));
    h5.free_memory(value);
    if (out.size() > kMaxConfigBytes) {
      problem = std::string("the `") + name + "` attribute is larger than 16 MiB";
      return std::nullopt;
    }
    return out;
  }
  const std::size_t size = h5.tget_size(type.get());
  if (size == 0 || size > kMaxConfigBytes) {
    problem = std::string("the `") + name + "` attribute has an implausible size";
    return std::nullopt;
  }
  std::string out(size, '\0');
  if (h5.aread(attr.get(), type.get(), out.data()) < 0) {
    problem = std::string("cannot read the `") + name + "` attribute";
    return std::nullopt;
  }
  out.resize(strnlen(out.data(), out.size()));
  return out;
}

}  // namespace

bool LooksLikeHdf5(std::string_view bytes) {
  return bytes.size() >= 8 && bytes.substr(0, 8) == std::string_view("\x89HDF\r\n\x1a\n", 8);
}

namespace {

// The work itself, in whichever process runs it.
Result<H5Config> ReadInProcess(std::string_view bytes, const std::string& display_name) {
  Hdf5Api h5;
  if (std::string problem; !LoadHdf5(h5, problem)) return MakeError(display_name + ": " + problem);
  h5.eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // no error stacks on stderr
  // An in-memory (core driver) file made from a copy of the bytes, opened read-only. (The HL
  // library's H5LTopen_file_image leaks its bookkeeping when the open fails.)
  Handle fapl(h5.pcreate(h5.file_access_class), h5.pclose);
  if (!fapl.ok() || h5.pset_fapl_core(fapl.get(), 1 << 16, 0) < 0 ||
      h5.pset_file_image(fapl.get(), const_cast<char*>(bytes.data()), bytes.size()) < 0) {
    return MakeError(display_name + ": libhdf5 cannot take the file image");
  }
  Handle file(h5.fopen("tpu-doctor-image.h5", kReadOnly, fapl.get()), h5.fclose);
  if (!file.ok()) {
    return MakeError(display_name + ": a damaged or truncated HDF5 file (libhdf5 cannot open it)");
  }
  std::string problem;
  auto config = StringAttribute(h5, file.get(), "model_config", problem);
  if (!config) {
    return MakeError(display_name + ": " +
                     (problem.empty() ? "an HDF5 file without a `model_config` attribute: only "
                                        "weights (`save_weights`), or not a Keras model"
                                      : problem));
  }
  H5Config out;
  out.model_config = std::move(*config);
  std::string ignored;
  out.keras_version = StringAttribute(h5, file.get(), "keras_version", ignored).value_or("");
  return out;
}

// libhdf5 is not hardened against hostile files: fuzzing finds inputs that make it loop forever.
// So it reads the file in a child process with CPU and memory limits (child_limits.h), and the
// answer comes back through a pipe: 'C' + config + '\0' + version, or 'E' + the error line. A child
// that dies, spins or answers nonsense is reported as a file libhdf5 cannot read.
constexpr int kChildCpuSeconds = 4;
// A model config is at most kMaxConfigBytes; libhdf5 needs a few copies of it and of the image.
constexpr std::uint64_t kChildMemoryBytes = std::uint64_t{256} << 20;
constexpr int kChildWallSeconds = 30;

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n <= 0) return;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

[[noreturn]] void RunChild(int fd, std::string_view bytes, const std::string& display_name) {
  LimitThisChild(kChildMemoryBytes + 2 * bytes.size(), kChildCpuSeconds);
  // Whatever a failing libhdf5 (or the C library's heap checks) prints stays out of our one line.
  if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::close(null);
  }
  auto r = ReadInProcess(bytes, display_name);
  if (r) {
    WriteAll(fd, "C");
    WriteAll(fd, r->model_config);
    WriteAll(fd, std::string_view("\0", 1));
    WriteAll(fd, r->keras_version);
  } else {
    WriteAll(fd, "E");
    WriteAll(fd, r.error().message);
  }
  ::close(fd);
  _exit(0);
}

// Reads the child's answer; false on timeout.
bool ReadAnswer(int fd, std::string& answer) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kChildWallSeconds);
  char buf[1 << 16];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    if (answer.size() > kMaxConfigBytes + 4096) return true;
    answer.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

Result<H5Config> ReadH5Config(std::string_view bytes, const std::string& display_name) {
  if (!LooksLikeHdf5(bytes)) return MakeError(display_name + ": not an HDF5 file");
  if (!ChildProcessesAllowed()) {
    return MakeError(display_name +
                     ": a legacy HDF5 Keras file, which tpu-doctor reads in a child process that "
                     "this host process does not allow; give the model's `to_json()` text or a "
                     "`.keras` file instead");
  }
  const std::string unreadable =
      display_name +
      ": libhdf5 could not read this HDF5 file (it crashed or ran out of time); "
      "the file is damaged or not a Keras model";
  int fds[2];
  if (::pipe(fds) != 0) return MakeError(display_name + ": cannot start the HDF5 reader");
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return MakeError(display_name + ": cannot start the HDF5 reader");
  }
  if (pid == 0) {
    ::close(fds[0]);
    RunChild(fds[1], bytes, display_name);
  }
  ::close(fds[1]);
  std::string answer;
  const bool finished = ReadAnswer(fds[0], answer);
  ::close(fds[0]);
  if (!finished) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const bool clean = finished && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!clean || answer.empty()) return MakeError(unreadable);
  if (answer[0] == 'E') return MakeError(answer.substr(1));
  const std::size_t nul = answer.find('\0', 1);
  if (answer[0] != 'C' || nul == std::string::npos) return MakeError(unreadable);
  H5Config out;
  out.model_config = answer.substr(1, nul - 1);
  out.keras_version = answer.substr(nul + 1);
  return out;
}

}  // namespace tpudoctor::keras
