#include "tpudoctor/frontend/source.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

namespace tpudoctor {

Result<Source> ReadSource(const std::string& path) {
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
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(path + ": cannot open for reading");
  Source src;
  src.display_name = path;
  src.bytes.resize(static_cast<std::size_t>(st.st_size));
  in.read(src.bytes.data(), st.st_size);
  if (in.gcount() != st.st_size) return MakeError(path + ": short read");
  return src;
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
