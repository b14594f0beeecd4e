#include "tpudoctor/frontend/source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "tpudoctor/support/fd.h"

namespace tpudoctor {

namespace {

constexpr std::size_t kReadChunk = std::size_t{16} << 20;

// Watches the line lengths of what is read: once the start looks like text (no NUL in the first
// bytes), a line longer than kMaxTextLineBytes is an error. Binary formats have no lines.
class TextLines {
 public:
  Result<Ok> Feed(std::string_view chunk) {
    if (!decided_) {
      text_ = chunk.substr(0, 4096).find('\0') == std::string_view::npos;
      decided_ = true;
    }
    if (!text_) return Ok{};
    for (std::size_t at = 0; at <= chunk.size();) {
      const std::size_t nl = std::min(chunk.find('\n', at), chunk.size());
      length_ += static_cast<std::int64_t>(nl - at);
      if (length_ > kMaxTextLineBytes) {
        return MakeError("line " + std::to_string(line_ + 1) + " is longer than " +
                         std::to_string(kMaxTextLineBytes >> 20) +
                         " MiB; expected model text (a constant printed in full? dump HLO "
                         "without large constants)");
      }
      if (nl == chunk.size()) break;
      ++line_;
      length_ = 0;
      at = nl + 1;
    }
    return Ok{};
  }

 private:
  bool decided_ = false;
  bool text_ = false;
  std::int64_t line_ = 0;
  std::int64_t length_ = 0;
};

// Files above this size are checked for holes before they are read.
constexpr std::int64_t kSparseCheckBytes = std::int64_t{64} << 20;

Result<std::string> ReadRegularFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return MakeError(path + ": cannot open: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return MakeError(path + ": is a directory, expected a model file");
  if (!S_ISREG(st.st_mode)) return MakeError(path + ": is not a regular file");
  if (st.st_size > kMaxSourceBytes) {
    return MakeError(path +
                     ": file is larger than 2 GiB; expected a model description without weights");
  }
  // A large file that is mostly holes (never written) is not a model; refuse it before reading
  // gigabytes of zeros into memory.
  const double on_disk = static_cast<double>(st.st_blocks) * 512;
  if (st.st_size > kSparseCheckBytes && on_disk < static_cast<double>(st.st_size) / 2) {
    return MakeError(path + ": a sparse file (" + std::to_string(st.st_size / (1024 * 1024)) +
                     " MiB long, " +
                     std::to_string(static_cast<std::int64_t>(on_disk) / (1024 * 1024)) +
                     " MiB on disk): its contents were never written, so it is not a model");
  }
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.ok()) return MakeError(path + ": cannot open for reading: " + std::strerror(errno));
  // Read straight into the result, in chunks, so a text file with an absurd line is refused
  // before it is all in memory. Room for the size stat gave and one byte more (to see the end)
  // is reserved up to 64 MiB; past it, or when the file grows while it is read, the string grows.
  std::string bytes;
  bytes.reserve(
      static_cast<std::size_t>(std::min<std::int64_t>(st.st_size + 1, kMaxTextLineBytes)));
  TextLines lines;
  for (;;) {
    const std::size_t have = bytes.size();
    const std::size_t room = bytes.capacity() - have;
    const std::size_t want = std::min(room > 0 ? room : std::size_t{64} << 10, kReadChunk);
    bytes.resize(have + want);
    const ssize_t got = ::read(fd.get(), bytes.data() + have, want);
    if (got < 0 && errno == EINTR) {
      bytes.resize(have);
      continue;
    }
    if (got < 0) return MakeError(path + ": read error: " + std::strerror(errno));
    bytes.resize(have + static_cast<std::size_t>(got));
    if (got == 0) break;
    if (bytes.size() > static_cast<std::size_t>(kMaxSourceBytes))
      return MakeError(path + ": grew past 2 GiB while it was read");
    const std::string_view chunk(bytes.data() + have, static_cast<std::size_t>(got));
    if (auto line = lines.Feed(chunk); !line) return MakeError(path + ": " + line.error().message);
  }
  return bytes;
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string Dirname(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

std::string Basename(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Result<Source> ReadSource(const std::string& path) {
  // A SavedModel is a folder: read its saved_model.pb, and the Keras metadata beside it.
  std::string file = path;
  if (IsDirectory(path)) {
    file = path + (path.empty() || path.back() == '/' ? "" : "/") + "saved_model.pb";
    if (!IsFile(file)) {
      return MakeError(path +
                       ": is a directory without saved_model.pb, expected a model file or a "
                       "SavedModel folder");
    }
  }
  auto bytes = ReadRegularFile(file);
  if (!bytes) return bytes.error();
  Source src;
  src.display_name = path;
  src.bytes = std::move(*bytes);
  if (Basename(file) == "saved_model.pb") {
    const std::string meta = Dirname(file) + "/keras_metadata.pb";
    if (IsFile(meta)) {
      auto m = ReadRegularFile(meta);
      if (!m) return m.error();
      src.siblings["keras_metadata.pb"] = std::move(*m);
    }
  }
  return src;
}

namespace {

constexpr int kMaxFolderDepth = 8;

bool HasModelExtension(const std::string& name) {
  static constexpr std::string_view kExtensions[] = {
      ".onnx", ".pt2",  ".keras", ".h5",      ".hdf5", ".pb",   ".pbtxt",
      ".meta", ".mlir", ".hlo",   ".hlo.txt", ".py",   ".ipynb"};
  for (std::string_view ext : kExtensions) {
    if (name.ends_with(ext)) return true;
  }
  return false;
}

// One walk under one root: symlinks are followed only to places inside the root, and every
// folder and file is taken once, known by its device and inode (so link loops end).
class FolderWalk {
 public:
  explicit FolderWalk(std::filesystem::path root) : root_(std::move(root)) {}

  void Walk(const std::filesystem::path& dir, int depth, ModelFiles& out) {
    std::error_code ec;
    std::vector<std::filesystem::path> entries;
    std::filesystem::directory_iterator it(dir, ec);
    if (ec) {
      out.unreadable.push_back(MakeError(dir.string() + ": cannot read the folder (" +
                                         ec.message() + "); its models were not checked"));
      return;
    }
    for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
      entries.push_back(it->path());
    }
    std::sort(entries.begin(), entries.end());
    // Real entries before links, so a model reached both ways is listed by its own name.
    std::stable_partition(entries.begin(), entries.end(), [](const std::filesystem::path& p) {
      std::error_code ec;
      return !std::filesystem::is_symlink(p, ec);
    });
    for (const std::filesystem::path& p : entries) Visit(p, depth, out);
  }

  // Marks the folder or file `p` resolves to as seen; false when it was seen before.
  bool FirstVisit(const std::filesystem::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return false;
    return seen_.insert({st.st_dev, st.st_ino}).second;
  }

 private:
  // Whether `p`, with its links resolved, lies inside the root.
  bool InsideRoot(const std::filesystem::path& p) const {
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(p, ec);
    if (ec) return false;
    auto [r, q] = std::mismatch(root_.begin(), root_.end(), real.begin(), real.end());
    return r == root_.end();
  }

  void Visit(const std::filesystem::path& p, int depth, ModelFiles& out) {
    const std::string name = p.filename().string();
    if (name.empty() || name[0] == '.') return;
    std::error_code ec;
    if (std::filesystem::is_symlink(p, ec) && !InsideRoot(p)) return;
    if (std::filesystem::is_directory(p, ec)) {
      if (!FirstVisit(p)) return;
      if (std::filesystem::is_regular_file(p / "saved_model.pb", ec)) {
        out.models.push_back(p.string());  // a SavedModel is one model, its variables/ are not
      } else if (depth < kMaxFolderDepth) {
        Walk(p, depth + 1, out);
      }
    } else if (std::filesystem::is_regular_file(p, ec) && HasModelExtension(name)) {
      if (FirstVisit(p)) out.models.push_back(p.string());
    }
  }

  std::filesystem::path root_;
  std::set<std::pair<dev_t, ino_t>> seen_;
};

}  // namespace

Result<ModelFiles> FindModels(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec) ||
      std::filesystem::is_regular_file(std::filesystem::path(path) / "saved_model.pb", ec)) {
    return ModelFiles{{path}, {}};
  }
  const std::filesystem::path root = std::filesystem::canonical(path, ec);
  if (ec) return MakeError(path + ": cannot resolve the folder (" + ec.message() + ")");
  if (::access(path.c_str(), R_OK | X_OK) != 0) {
    return MakeError(path + ": cannot read the folder (" + std::strerror(errno) + ")");
  }
  ModelFiles out;
  FolderWalk walk(root);
  walk.FirstVisit(path);
  walk.Walk(path, 0, out);
  if (out.models.empty() && out.unreadable.empty()) {
    return MakeError(path +
                     ": a directory with no model files (.onnx, .pt2, .keras, .h5, .pb, "
                     ".pbtxt, .meta, .mlir, .hlo.txt) and no SavedModel");
  }
  if (out.models.empty()) return out.unreadable.front();
  return out;
}

bool IsSafeRelativePath(std::string_view relative) {
  if (relative.empty() || relative.front() == '/' ||
      relative.find('\\') != std::string_view::npos ||
      relative.find('\0') != std::string_view::npos) {
    return false;
  }
  int depth = 0;
  std::size_t start = 0;
  while (start <= relative.size()) {
    std::size_t end = relative.find('/', start);
    if (end == std::string_view::npos) end = relative.size();
    std::string_view part = relative.substr(start, end - start);
    if (part == "..") {
      if (--depth < 0) return false;
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
    start = end + 1;
  }
  return true;
}

}  // namespace tpudoctor
