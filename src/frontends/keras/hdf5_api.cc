#include "src/frontends/keras/hdf5_api.h"

#include <dlfcn.h>

#include "src/support/library_symbols.h"

namespace tpudoctor::keras {

bool LoadHdf5(Hdf5Api& api, std::string& problem) {
  void* lib = ::dlopen(TPUD_HDF5_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    problem = "libhdf5 (" + std::string(TPUD_HDF5_SONAME) +
              ") is not installed; install Debian's libhdf5 package to read legacy .h5 files";
    return false;
  }
  const LibrarySymbols symbol(lib, TPUD_HDF5_SONAME, problem);
  hid_t* c_s1 = nullptr;
  hid_t* file_access = nullptr;
  const bool all =
      symbol("H5open", api.open) && symbol("H5Eset_auto2", api.eset_auto2) &&
      symbol("H5Pcreate", api.pcreate) && symbol("H5Pclose", api.pclose) &&
      symbol("H5Pset_fapl_core", api.pset_fapl_core) &&
      symbol("H5Pset_file_image", api.pset_file_image) && symbol("H5Fopen", api.fopen) &&
      symbol("H5Fclose", api.fclose) && symbol("H5Aexists", api.aexists) &&
      symbol("H5Aopen", api.aopen) && symbol("H5Aclose", api.aclose) &&
      symbol("H5Aget_type", api.aget_type) && symbol("H5Aget_space", api.aget_space) &&
      symbol("H5Aread", api.aread) && symbol("H5Tclose", api.tclose) &&
      symbol("H5Tcopy", api.tcopy) && symbol("H5Tget_class", api.tget_class) &&
      symbol("H5Tget_size", api.tget_size) && symbol("H5Tget_cset", api.tget_cset) &&
      symbol("H5Tset_size", api.tset_size) && symbol("H5Tset_cset", api.tset_cset) &&
      symbol("H5Tis_variable_str", api.tis_variable_str) && symbol("H5Sclose", api.sclose) &&
      symbol("H5Sget_simple_extent_npoints", api.sget_simple_extent_npoints) &&
      symbol("H5free_memory", api.free_memory) && symbol("H5T_C_S1_g", c_s1) &&
      symbol("H5P_CLS_FILE_ACCESS_ID_g", file_access);
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
