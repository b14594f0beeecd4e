#include "src/frontends/keras/hdf5_api.h"

#include <dlfcn.h>

namespace tpudoctor::keras {
namespace {

template <typename T>
bool Resolve(void* library, const char* name, T& out, std::string& problem) {
  out = reinterpret_cast<T>(::dlsym(library, name));
  if (out == nullptr) problem = std::string(TPUD_HDF5_SONAME) + " has no `" + name + "`";
  return out != nullptr;
}

}  // namespace

bool LoadHdf5(Hdf5Api& api, std::string& problem) {
  void* lib = ::dlopen(TPUD_HDF5_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    problem = "libhdf5 (" + std::string(TPUD_HDF5_SONAME) +
              ") is not installed; install Debian's libhdf5 package to read legacy .h5 files";
    return false;
  }
  hid_t* c_s1 = nullptr;
  hid_t* file_access = nullptr;
  const bool all =
      Resolve(lib, "H5open", api.open, problem) &&
      Resolve(lib, "H5Eset_auto2", api.eset_auto2, problem) &&
      Resolve(lib, "H5Pcreate", api.pcreate, problem) &&
      Resolve(lib, "H5Pclose", api.pclose, problem) &&
      Resolve(lib, "H5Pset_fapl_core", api.pset_fapl_core, problem) &&
      Resolve(lib, "H5Pset_file_image", api.pset_file_image, problem) &&
      Resolve(lib, "H5Fopen", api.fopen, problem) &&
      Resolve(lib, "H5Fclose", api.fclose, problem) &&
      Resolve(lib, "H5Aexists", api.aexists, problem) &&
      Resolve(lib, "H5Aopen", api.aopen, problem) &&
      Resolve(lib, "H5Aclose", api.aclose, problem) &&
      Resolve(lib, "H5Aget_type", api.aget_type, problem) &&
      Resolve(lib, "H5Aget_space", api.aget_space, problem) &&
      Resolve(lib, "H5Aread", api.aread, problem) &&
      Resolve(lib, "H5Tclose", api.tclose, problem) &&
      Resolve(lib, "H5Tcopy", api.tcopy, problem) &&
      Resolve(lib, "H5Tget_class", api.tget_class, problem) &&
      Resolve(lib, "H5Tget_size", api.tget_size, problem) &&
      Resolve(lib, "H5Tget_cset", api.tget_cset, problem) &&
      Resolve(lib, "H5Tset_size", api.tset_size, problem) &&
      Resolve(lib, "H5Tset_cset", api.tset_cset, problem) &&
      Resolve(lib, "H5Tis_variable_str", api.tis_variable_str, problem) &&
      Resolve(lib, "H5Sclose", api.sclose, problem) &&
      Resolve(lib, "H5Sget_simple_extent_npoints", api.sget_simple_extent_npoints, problem) &&
      Resolve(lib, "H5free_memory", api.free_memory, problem) &&
      Resolve(lib, "H5T_C_S1_g", c_s1, problem) &&
      Resolve(lib, "H5P_CLS_FILE_ACCESS_ID_g", file_access, problem);
  if (!all) return false;
  if (api.open() < 0) {
    problem = "libhdf5 failed to initialise";
    return false;
  }
  api.c_string_type = *c_s1;
  api.file_access_class = *file_access;
  return true;
}

}  // namespace tpudoctor::keras
