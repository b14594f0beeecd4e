#include "tpudoctor/frontend/source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace tpudoctor {

namespace {

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
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(path + ": cannot open for reading");
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  in.read(bytes.data(), st.st_size);
  if (in.gcount() != st.st_size) return MakeError(path + ": short read");
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
  static constexpr std::string_view kExtensions[] = {".onnx", ".pt2", ".keras",  ".h5",
                                                     ".hdf5", ".pb",  ".pbtxt",  ".meta",
                                                     ".mlir", ".hlo", ".hlo.txt"};
  for (std::string_view ext : kExtensions) {
    if (name.ends_with(ext)) return true;
  }
  return false;
}

void CollectModels(const std::filesystem::path& dir, int depth, std::vector<std::string>& out) {
  std::error_code ec;
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  for (const std::filesystem::path& p : entries) {
    const std::string name = p.filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (std::filesystem::is_directory(p, ec)) {
      if (std::filesystem::is_regular_file(p / "saved_model.pb", ec)) {
        out.push_back(p.string());  // a SavedModel is one model, its variables/ are not models
      } else if (depth < kMaxFolderDepth) {
        CollectModels(p, depth + 1, out);
      }
    } else if (std::filesystem::is_regular_file(p, ec) && HasModelExtension(name)) {
      out.push_back(p.string());
    }
  }
}

}  // namespace

Result<std::vector<std::string>> FindModels(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec) ||
      std::filesystem::is_regular_file(std::filesystem::path(path) / "saved_model.pb", ec)) {
    return std::vector<std::string>{path};
  }
  std::vector<std::string> out;
  CollectModels(path, 0, out);
  if (out.empty()) {
    return MakeError(path +
                     ": a directory with no model files (.onnx, .pt2, .keras, .h5, .pb, "
                     ".pbtxt, .meta, .mlir, .hlo.txt) and no SavedModel");
  }
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
