// ZipArchive: read-only access to a zip archive held in memory (.keras, .pt2), for frontends.
//
// Nothing is ever extracted to disk. Open() rejects, with one line saying why, archives that are
// truncated or inconsistent, and archives with a member name that could escape a folder if it
// were extracted (absolute, `..`, backslashes, drive letters, NUL). Read() refuses a member whose
// declared size is over the caller's limit or whose compression ratio marks a zip bomb, and never
// inflates more than the declared size.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tpudoctor/support/result.h"

namespace tpudoctor {

struct ZipEntry {
  std::string name;
  std::uint64_t size = 0;             // uncompressed, as the central directory declares it
  std::uint64_t compressed_size = 0;  // as stored
  std::uint64_t index = 0;
};

// True when `bytes` start like a zip archive (a local file header or an empty archive's end
// record).
bool LooksLikeZip(std::string_view bytes);

class ZipArchive {
 public:
  // `bytes` must outlive the archive. `display_name` prefixes every error.
  static Result<std::unique_ptr<ZipArchive>> Open(std::string_view bytes, std::string display_name);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  const std::vector<ZipEntry>& entries() const { return entries_; }
  // The entry with exactly this name, or the first whose name ends with "/" + suffix when
  // `suffix_match` (archives put everything under one root folder named after the model).
  const ZipEntry* Find(std::string_view name) const;
  const ZipEntry* FindSuffix(std::string_view suffix) const;

  // The member's bytes, at most `max_bytes` of them (a larger declared size is an error).
  Result<std::string> Read(const ZipEntry& entry, std::uint64_t max_bytes) const;

 private:
  struct Handle;
  ZipArchive(std::unique_ptr<Handle> handle, std::string display_name,
             std::vector<ZipEntry> entries);

  std::unique_ptr<Handle> handle_;
  std::string display_name_;
  std::vector<ZipEntry> entries_;
};

}  // namespace tpudoctor
