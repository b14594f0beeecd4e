#include "src/frontends/keras/keras_h5.h"

#include <hdf5.h>

#include <cstring>
#include <memory>
#include <optional>

namespace tpudoctor::keras {
namespace {

constexpr std::size_t kMaxConfigBytes = std::size_t{256} << 20;

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
      problem = std::string("the `") + name + "` attribute is larger than 256 MiB";
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

Result<H5Config> ReadH5Config(std::string_view bytes, const std::string& display_name) {
  if (!LooksLikeHdf5(bytes)) return MakeError(display_name + ": not an HDF5 file");
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

}  // namespace tpudoctor::keras
