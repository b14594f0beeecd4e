// The libhdf5 functions the legacy `.h5` Keras reader calls, loaded at run time (dlopen of the
// soname the build found) in the child process that reads the file. Linking libhdf5 into the
// binary would load it, and the 30 libraries it depends on, at every start of the tool: about
// 6 ms on each `check`, for a format few models still use.
#pragma once

#include <hdf5.h>

#include <string>

namespace tpudoctor::keras {

struct Hdf5Api {
  decltype(&::H5open) open = nullptr;
  decltype(&::H5Eset_auto2) eset_auto2 = nullptr;
  decltype(&::H5Pcreate) pcreate = nullptr;
  decltype(&::H5Pclose) pclose = nullptr;
  decltype(&::H5Pset_fapl_core) pset_fapl_core = nullptr;
  decltype(&::H5Pset_file_image) pset_file_image = nullptr;
  decltype(&::H5Fopen) fopen = nullptr;
  decltype(&::H5Fclose) fclose = nullptr;
  decltype(&::H5Aexists) aexists = nullptr;
  decltype(&::H5Aopen) aopen = nullptr;
  decltype(&::H5Aclose) aclose = nullptr;
  decltype(&::H5Aget_type) aget_type = nullptr;
  decltype(&::H5Aget_space) aget_space = nullptr;
  decltype(&::H5Aread) aread = nullptr;
  decltype(&::H5Tclose) tclose = nullptr;
  decltype(&::H5Tcopy) tcopy = nullptr;
  decltype(&::H5Tget_class) tget_class = nullptr;
  decltype(&::H5Tget_size) tget_size = nullptr;
  decltype(&::H5Tget_cset) tget_cset = nullptr;
  decltype(&::H5Tset_size) tset_size = nullptr;
  decltype(&::H5Tset_cset) tset_cset = nullptr;
  decltype(&::H5Tis_variable_str) tis_variable_str = nullptr;
  decltype(&::H5Sclose) sclose = nullptr;
  decltype(&::H5Sget_simple_extent_npoints) sget_simple_extent_npoints = nullptr;
  decltype(&::H5free_memory) free_memory = nullptr;
  // The library's predefined ids (H5T_C_S1, H5P_FILE_ACCESS), valid after open().
  hid_t c_string_type = -1;
  hid_t file_access_class = -1;
};

// Loads libhdf5 and resolves every function above; on failure, says why in `problem`. Call it
// only in the child process: the library stays loaded for the rest of the process.
bool LoadHdf5(Hdf5Api& api, std::string& problem);

}  // namespace tpudoctor::keras
