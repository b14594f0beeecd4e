#include "src/frontends/keras/keras_h5.h"

#include <fcntl.h>
#include <hdf5.h>
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

#include "src/support/child_limits.h"
#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor::keras {
namespace {

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
std::optional<std::string> StringAttribute(hid_t file, const char* name, std::string& problem) {
  if (H5Aexists(file, name) <= 0) return std::nullopt;
  Handle attr(H5Aopen(file, name, H5P_DEFAULT), H5Aclose);
  if (!attr.ok()) {
    problem = std::string("cannot open the `") + name + "` attribute";
    return std::nullopt;
  }
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  if (!type.ok() || !space.ok() || H5Tget_class(type.get()) != H5T_STRING ||
      H5Sget_simple_extent_npoints(space.get()) != 1) {
    problem = std::string("the `") + name + "` attribute is not a single string";
    return std::nullopt;
  }
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    if (!mem.ok() || H5Tset_size(mem.get(), H5T_VARIABLE) < 0 ||
        H5Tset_cset(mem.get(), H5Tget_cset(type.get())) < 0) {
      return std::nullopt;
    }
    char* value = nullptr;
    if (H5Aread(attr.get(), mem.get(), &value) < 0 || value == nullptr) {
      problem = std::string("cannot read the `") + name + "` attribute";
      return std::nullopt;
    }
    std::string out(value, strnlen(value, kMaxConfigBytes + 1));
    H5free_memory(value);
    if (out.size() > kMaxConfigBytes) {
      problem = std::string("the `") + name + "` attribute is larger than 16 MiB";
      return std::nullopt;
    }
    return out;
  }
  const std::size_t size = H5Tget_size(type.get());
  if (size == 0 || size > kMaxConfigBytes) {
    problem = std::string("the `") + name + "` attribute has an implausible size";
    return std::nullopt;
  }
  std::string out(size, '\0');
  if (H5Aread(attr.get(), type.get(), out.data()) < 0) {
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
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // no error stacks on stderr
  // An in-memory (core driver) file made from a copy of the bytes, opened read-only. (The HL
  // library's H5LTopen_file_image leaks its bookkeeping when the open fails.)
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok() || H5Pset_fapl_core(fapl.get(), 1 << 16, 0) < 0 ||
      H5Pset_file_image(fapl.get(), const_cast<char*>(bytes.data()), bytes.size()) < 0) {
    return MakeError(display_name + ": libhdf5 cannot take the file image");
  }
  Handle file(H5Fopen("tpu-doctor-image.h5", H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!file.ok()) {
    return MakeError(display_name + ": a damaged or truncated HDF5 file (libhdf5 cannot open it)");
  }
  std::string problem;
  auto config = StringAttribute(file.get(), "model_config", problem);
  if (!config) {
    return MakeError(display_name + ": " +
                     (problem.empty() ? "an HDF5 file without a `model_config` attribute: only "
                                        "weights (`save_weights`), or not a Keras model"
                                      : problem));
  }
  H5Config out;
  out.model_config = std::move(*config);
  std::string ignored;
  out.keras_version = StringAttribute(file.get(), "keras_version", ignored).value_or("");
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
