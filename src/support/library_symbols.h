// LibrarySymbols: functions and globals of a library opened with dlopen by its soname — the
// libraries only some inputs need, kept out of every start (libhdf5 for legacy `.h5` files,
// libzip for `.keras` and `.pt2` archives).
#pragma once

#include <dlfcn.h>

#include <string>

namespace tpudoctor {

class LibrarySymbols {
 public:
  // `problem` receives what is missing, once a lookup fails.
  LibrarySymbols(void* library, const char* soname, std::string& problem)
      : library_(library), soname_(soname), problem_(problem) {}

  // Finds `name` as a T; false, with `problem` naming the library and the symbol, when it lacks it.
  template <typename T>
  bool operator()(const char* name, T& out) const {
    out = reinterpret_cast<T>(::dlsym(library_, name));
    if (out == nullptr) problem_ = std::string(soname_) + " has no `" + name + "`";
    return out != nullptr;
  }

 private:
  void* library_;
  const char* soname_;
  std::string& problem_;
};

}  // namespace tpudoctor
