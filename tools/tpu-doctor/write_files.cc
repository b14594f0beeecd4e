#include "write_files.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "tpudoctor/support/fd.h"

namespace tpudoctor::cli {
namespace {

namespace fs = std::filesystem;

// SIGINT, SIGTERM and SIGHUP are held back while it lives, so an interrupt cannot land between two
// renames; a held signal is delivered when it ends.
class HoldSignals {
 public:
  HoldSignals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~HoldSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  HoldSignals(const HoldSignals&) = delete;
  HoldSignals& operator=(const HoldSignals&) = delete;

 private:
  sigset_t old_;
};

std::string RandomSuffix() {
  static std::random_device device;
  static std::mt19937_64 engine(device());
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::uint64_t bits = engine();
  for (int i = 0; i < 12; ++i, bits >>= 4) out += kHex[bits & 15];
  return out;
}

std::string Errno() { return std::strerror(errno); }

bool PlainName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

Result<Ok> WriteAndSync(int fd, const std::string& text) {
  std::string_view rest = text;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return MakeError(Errno());
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::fsync(fd) != 0) return MakeError(Errno());
  return Ok{};
}

// Creates a new file under a fresh random name next to `stem` and writes `f` into it; returns
// the name. O_EXCL|O_NOFOLLOW: an existing file or a planted symlink is never opened.
Result<std::string> WriteTemporary(int dirfd, const FileToWrite& f) {
  const mode_t mode = f.executable ? 0777 : 0666;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string name = "." + f.name + ".tpu-doctor-" + RandomSuffix();
    Fd fd(
        ::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!fd.ok() && errno == EEXIST) continue;
    if (!fd.ok())
      return MakeError("cannot create a temporary for `" + f.name + "` (" + Errno() + ")");
    if (auto w = WriteAndSync(fd.get(), f.text); !w) {
      ::unlinkat(dirfd, name.c_str(), 0);
      return MakeError("cannot write `" + f.name + "` (" + w.error().message + ")");
    }
    return name;
  }
  return MakeError("cannot create a temporary for `" + f.name + "` (every name taken)");
}

// A hard link to `name` under a fresh name, so a replaced file can be put back.
Result<std::string> LinkBackup(int dirfd, const std::string& name) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string backup = "." + name + ".tpu-doctor-old-" + RandomSuffix();
    if (::linkat(dirfd, name.c_str(), dirfd, backup.c_str(), 0) == 0) return backup;
    if (errno != EEXIST)
      return MakeError("cannot keep a backup of `" + name + "` (" + Errno() + ")");
  }
  return MakeError("cannot keep a backup of `" + name + "` (every name taken)");
}

// Renames `from` to `to` inside one folder; without `overwrite` an existing `to` is an error.
int RenameInto(int from_dir, const std::string& from, int to_dir, const std::string& to,
               bool overwrite) {
  if (overwrite) return ::renameat(from_dir, from.c_str(), to_dir, to.c_str());
  if (::renameat2(from_dir, from.c_str(), to_dir, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  // A file system without RENAME_NOREPLACE: link (which never replaces), then drop the old name.
  if (::linkat(from_dir, from.c_str(), to_dir, to.c_str(), 0) != 0) return -1;
  ::unlinkat(from_dir, from.c_str(), 0);
  return 0;
}

// What is at a target name now.
enum class Existing { kNone, kReplaceable, kNotAFile };

Existing Inspect(int dirfd, const std::string& name) {
  struct stat st;
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? Existing::kNone : Existing::kNotAFile;
  }
  return S_ISREG(st.st_mode) || S_ISLNK(st.st_mode) ? Existing::kReplaceable : Existing::kNotAFile;
}

// Every target checked before anything is written.
Result<std::vector<Existing>> CheckTargets(int dirfd, const std::string& dir,
                                           const std::vector<FileToWrite>& files, bool overwrite) {
  std::vector<Existing> out;
  for (const FileToWrite& f : files) {
    const Existing e = Inspect(dirfd, f.name);
    if (e == Existing::kNotAFile) {
      return MakeError(dir + ": `" + f.name +
                       "` exists and is not a regular file; nothing was written");
    }
    if (e == Existing::kReplaceable && !overwrite) {
      return MakeError(dir + ": `" + f.name +
                       "` already exists; nothing was written (pass --force to replace it)");
    }
    out.push_back(e);
  }
  return out;
}

// Into a folder that exists: temporaries, then the renames, undone on the first failure.
Result<Ok> WriteIntoExisting(const std::string& dir, const std::vector<FileToWrite>& files,
                             bool overwrite) {
  Fd dirfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dirfd.ok()) return MakeError(dir + ": cannot open the folder (" + Errno() + ")");
  auto existing = CheckTargets(dirfd.get(), dir, files, overwrite);
  if (!existing) return existing.error();

  std::vector<std::string> temps;
  std::vector<std::string> backups(files.size());
  auto remove_all = [&](const std::vector<std::string>& names) {
    for (const std::string& n : names) {
      if (!n.empty()) ::unlinkat(dirfd.get(), n.c_str(), 0);
    }
  };
  for (const FileToWrite& f : files) {
    auto tmp = WriteTemporary(dirfd.get(), f);
    if (!tmp) {
      remove_all(temps);
      return MakeError(dir + ": " + tmp.error().message + "; nothing was written");
    }
    temps.push_back(*tmp);
  }

  HoldSignals hold;
  std::size_t done = 0;
  std::string failure;
  for (; done < files.size(); ++done) {
    const std::string& name = files[done].name;
    if ((*existing)[done] == Existing::kReplaceable) {
      auto backup = LinkBackup(dirfd.get(), name);
      if (!backup) {
        failure = backup.error().message;
        break;
      }
      backups[done] = *backup;
    }
    if (RenameInto(dirfd.get(), temps[done], dirfd.get(), name, overwrite) != 0) {
      failure = "cannot put `" + name + "` in place (" + Errno() + ")";
      break;
    }
    temps[done].clear();
  }
  if (!failure.empty()) {
    for (std::size_t i = done; i-- > 0;) {
      const std::string& name = files[i].name;
      if (!backups[i].empty()) {
        ::renameat(dirfd.get(), backups[i].c_str(), dirfd.get(), name.c_str());
        backups[i].clear();
      } else {
        ::unlinkat(dirfd.get(), name.c_str(), 0);
      }
    }
    remove_all(temps);
    remove_all(backups);
    ::fsync(dirfd.get());
    return MakeError(dir + ": " + failure + "; the folder was left as it was");
  }
  remove_all(backups);
  ::fsync(dirfd.get());
  return Ok{};
}

// Into a new folder: filled under a temporary name beside it, then renamed into place in one
// step, so no one ever sees it half-written.
Result<Ok> WriteNewFolder(const std::string& dir, const std::vector<FileToWrite>& files) {
  fs::path target = fs::path(dir).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();
  fs::path parent = target.parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  std::vector<fs::path> created;  // ancestors this call makes, outermost first
  for (fs::path p = parent; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    created.insert(created.begin(), p);
    if (p == p.parent_path()) break;
  }
  auto undo_ancestors = [&] {
    for (auto it = created.rbegin(); it != created.rend(); ++it) fs::remove(*it, ec);
  };
  if (!created.empty() && !fs::create_directories(parent, ec)) {
    undo_ancestors();
    return MakeError(dir + ": cannot create the folder (" + ec.message() + ")");
  }
  Fd parentfd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parentfd.ok()) {
    undo_ancestors();
    return MakeError(dir + ": cannot open " + parent.string() + " (" + Errno() + ")");
  }
  std::string staging;
  for (int attempt = 0; attempt < 16 && staging.empty(); ++attempt) {
    const std::string name = "." + target.filename().string() + ".tpu-doctor-" + RandomSuffix();
    if (::mkdirat(parentfd.get(), name.c_str(), 0777) == 0)
      staging = name;
    else if (errno != EEXIST)
      break;
  }
  if (staging.empty()) {
    undo_ancestors();
    return MakeError(dir + ": cannot create the folder (" + Errno() + ")");
  }
  const std::string staging_path = (parent / staging).string();
  auto written = WriteIntoExisting(staging_path, files, false);
  HoldSignals hold;
  if (written &&
      RenameInto(parentfd.get(), staging, parentfd.get(), target.filename().string(), false) != 0) {
    written = MakeError(dir + ": cannot create the folder (" + Errno() + ")");
  }
  if (!written) {
    fs::remove_all(staging_path, ec);
    undo_ancestors();
    if (written.error().message.rfind(staging_path, 0) == 0) {
      return MakeError(dir + written.error().message.substr(staging_path.size()));
    }
    return written.error();
  }
  ::fsync(parentfd.get());
  return Ok{};
}

}  // namespace

Result<Ok> WriteFilesTransaction(const std::string& dir, const std::vector<FileToWrite>& files,
                                 bool overwrite) {
  for (const FileToWrite& f : files) {
    if (!PlainName(f.name)) return MakeError(dir + ": `" + f.name + "` is not a plain file name");
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return MakeError(dir + ": exists and is not a folder");
    return WriteIntoExisting(dir, files, overwrite);
  }
  if (errno != ENOENT) return MakeError(dir + ": cannot use the folder (" + Errno() + ")");
  return WriteNewFolder(dir, files);
}

}  // namespace tpudoctor::cli
