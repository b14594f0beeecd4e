#include "src/support/zip_archive.h"

#include <dlfcn.h>
#include <zip.h>

#include <utility>

#include "src/support/library_symbols.h"

namespace tpudoctor {
namespace {

// libzip's functions, found in the library when the first archive is opened: a process that reads
// no archive never loads libzip (nor libcrypto and libbz2, which it links), as it never loads
// libhdf5 (src/frontends/keras/hdf5_api.cc).
struct ZipApi {
  decltype(&zip_error_init) error_init;
  decltype(&zip_error_init_with_code) error_init_with_code;
  decltype(&zip_error_strerror) error_strerror;
  decltype(&zip_error_code_zip) error_code_zip;
  decltype(&zip_error_fini) error_fini;
  decltype(&zip_source_buffer_create) source_buffer_create;
  decltype(&zip_source_free) source_free;
  decltype(&zip_open_from_source) open_from_source;
  decltype(&zip_discard) discard;
  decltype(&zip_get_num_entries) get_num_entries;
  decltype(&zip_stat_init) stat_init;
  decltype(&zip_stat_index) stat_index;
  decltype(&zip_fopen_index) fopen_index;
  decltype(&zip_fread) fread;
  decltype(&zip_fclose) fclose;
  decltype(&zip_strerror) strerror;
};

struct LoadedZipApi {
  ZipApi api{};
  std::string problem;  // empty when every function was found
};

LoadedZipApi LoadZipApi() {
  LoadedZipApi z;
  void* lib = ::dlopen(TPUD_LIBZIP_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    z.problem = "libzip (" + std::string(TPUD_LIBZIP_SONAME) +
                ") is not installed; install Debian's libzip package to read .keras and .pt2 "
                "archives";
    return z;
  }
  ZipApi& a = z.api;
  const LibrarySymbols symbol(lib, TPUD_LIBZIP_SONAME, z.problem);
  (void)(symbol("zip_error_init", a.error_init) &&
         symbol("zip_error_init_with_code", a.error_init_with_code) &&
         symbol("zip_error_strerror", a.error_strerror) &&
         symbol("zip_error_code_zip", a.error_code_zip) && symbol("zip_error_fini", a.error_fini) &&
         symbol("zip_source_buffer_create", a.source_buffer_create) &&
         symbol("zip_source_free", a.source_free) &&
         symbol("zip_open_from_source", a.open_from_source) && symbol("zip_discard", a.discard) &&
         symbol("zip_get_num_entries", a.get_num_entries) && symbol("zip_stat_init", a.stat_init) &&
         symbol("zip_stat_index", a.stat_index) && symbol("zip_fopen_index", a.fopen_index) &&
         symbol("zip_fread", a.fread) && symbol("zip_fclose", a.fclose) &&
         symbol("zip_strerror", a.strerror));
  return z;
}

// libzip's functions, or nullptr with `problem` saying why they cannot be had.
const ZipApi* TheZipApi(std::string& problem) {
  static const LoadedZipApi* loaded = new LoadedZipApi(LoadZipApi());
  problem = loaded->problem;
  return problem.empty() ? &loaded->api : nullptr;
}

// A member that inflates more than this many times its stored size, and to more than
// kBombFloor bytes, is treated as a zip bomb. JSON compresses ~10-20x; 200x is far beyond it.
constexpr std::uint64_t kMaxRatio = 200;
constexpr std::uint64_t kBombFloor = std::uint64_t{16} << 20;
constexpr std::uint64_t kMaxEntries = 1'000'000;

bool SafeMemberName(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find('\\') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    return false;
  }
  if (name.size() >= 2 && name[1] == ':') return false;  // C:foo
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

std::string ZipErrorText(const ZipApi& z, int code) {
  zip_error_t error;
  z.error_init_with_code(&error, code);
  std::string text = z.error_strerror(&error);
  z.error_fini(&error);
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

struct ZipArchive::Handle {
  const ZipApi* z = nullptr;
  zip_t* zip = nullptr;
  ~Handle() {
    if (zip != nullptr) z->discard(zip);
  }
};

bool LooksLikeZip(std::string_view bytes) {
  return bytes.size() >= 4 && bytes[0] == 'P' && bytes[1] == 'K' &&
         ((bytes[2] == 3 && bytes[3] == 4) || (bytes[2] == 5 && bytes[3] == 6));
}

ZipArchive::ZipArchive(std::unique_ptr<Handle> handle, std::string display_name,
                       std::vector<ZipEntry> entries)
    : handle_(std::move(handle)),
      display_name_(std::move(display_name)),
      entries_(std::move(entries)) {}

ZipArchive::~ZipArchive() = default;

Result<std::unique_ptr<ZipArchive>> ZipArchive::Open(std::string_view bytes,
                                                     std::string display_name) {
  std::string problem;
  const ZipApi* z = TheZipApi(problem);
  if (z == nullptr) return MakeError(display_name + ": " + problem);
  zip_error_t error;
  z->error_init(&error);
  zip_source_t* source = z->source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) {
    z->error_fini(&error);
    return MakeError(display_name + ": cannot read the zip archive");
  }
  auto handle = std::make_unique<Handle>();
  handle->z = z;
  handle->zip = z->open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (handle->zip == nullptr) {
    const int code = z->error_code_zip(&error);
    z->source_free(source);
    z->error_fini(&error);
    return MakeError(display_name + ": a truncated or damaged zip archive (libzip: " +
                     ZipErrorText(*z, code) + ")");
  }
  z->error_fini(&error);
  const zip_int64_t count = z->get_num_entries(handle->zip, 0);
  if (count < 0 || static_cast<std::uint64_t>(count) > kMaxEntries) {
    return MakeError(display_name + ": the zip archive has too many members");
  }
  std::vector<ZipEntry> entries;
  entries.reserve(static_cast<std::size_t>(count));
  for (zip_uint64_t i = 0; i < static_cast<zip_uint64_t>(count); ++i) {
    zip_stat_t st;
    z->stat_init(&st);
    if (z->stat_index(handle->zip, i, ZIP_FL_ENC_RAW, &st) != 0 ||
        (st.valid & ZIP_STAT_NAME) == 0) {
      return MakeError(display_name + ": cannot read member " + std::to_string(i) +
                       " of the zip archive");
    }
    const std::string name = st.name;
    if (!SafeMemberName(name)) {
      return MakeError(display_name + ": zip member `" + name +
                       "` has an unsafe name (absolute or climbing out with `..`); refusing the "
                       "archive");
    }
    entries.push_back({name, st.size, st.comp_size, i});
  }
  return std::unique_ptr<ZipArchive>(
      new ZipArchive(std::move(handle), std::move(display_name), std::move(entries)));
}

const ZipEntry* ZipArchive::Find(std::string_view name) const {
  for (const ZipEntry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

const ZipEntry* ZipArchive::FindSuffix(std::string_view suffix) const {
  for (const ZipEntry& e : entries_) {
    if (e.name == suffix) return &e;
    if (e.name.size() > suffix.size() &&
        std::string_view(e.name).substr(e.name.size() - suffix.size()) == suffix &&
        e.name[e.name.size() - suffix.size() - 1] == '/') {
      return &e;
    }
  }
  return nullptr;
}

Result<std::string> ZipArchive::Read(const ZipEntry& entry, std::uint64_t max_bytes) const {
  const std::string where = display_name_ + ": zip member `" + entry.name + "`";
  if (entry.size > max_bytes) {
    return MakeError(where + " claims " + std::to_string(entry.size) +
                     " bytes uncompressed, more than the " + std::to_string(max_bytes) +
                     " this reader accepts");
  }
  if (entry.size > kBombFloor &&
      entry.size / std::max<std::uint64_t>(entry.compressed_size, 1) > kMaxRatio) {
    return MakeError(
        where + " inflates " +
        std::to_string(entry.size / std::max<std::uint64_t>(entry.compressed_size, 1)) +
        "x; refusing a likely zip bomb");
  }
  const ZipApi& z = *handle_->z;
  zip_file_t* file = z.fopen_index(handle_->zip, entry.index, 0);
  if (file == nullptr) {
    return MakeError(where + ": " + std::string(z.strerror(handle_->zip)));
  }
  // The buffer grows with what really inflates, never to the declared size up front: a member
  // that claims a gigabyte and holds a kilobyte costs a kilobyte.
  std::string out;
  constexpr std::size_t kStep = std::size_t{1} << 20;
  zip_int64_t got = 0;
  while (out.size() < entry.size) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(kStep, entry.size - out.size()));
    const std::size_t at = out.size();
    out.resize(at + want);
    got = z.fread(file, out.data() + at, want);
    if (got <= 0) {
      out.resize(at);
      break;
    }
    out.resize(at + static_cast<std::size_t>(got));
  }
  char extra;
  const zip_int64_t more = z.fread(file, &extra, 1);  // also runs the CRC check at the end
  z.fclose(file);
  if (got < 0 || out.size() != entry.size || more != 0) {
    return MakeError(where +
                     " is corrupt or truncated (its data does not match its declared "
                     "size or checksum)");
  }
  return out;
}

}  // namespace tpudoctor
