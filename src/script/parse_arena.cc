#include "src/script/parse_arena.h"

#include <sys/mman.h>
#include <tree_sitter/api.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace tpudoctor::script {
namespace {

// Each block carries its size in a header of this many bytes, which keeps blocks aligned as
// malloc's are (realloc needs the size to copy).
constexpr std::size_t kHeader = alignof(std::max_align_t);
constexpr std::size_t kMinChunk = std::size_t{64} << 10;
// Chunks from this size on are mapped on their own, aligned and advised onto transparent huge
// pages: a large parse's memory then faults in 2 MiB at a time instead of 4 KiB.
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kMapFrom = kHugePage;

thread_local ParseArena* current = nullptr;

void* Malloc(std::size_t bytes) {
  return current != nullptr ? current->Allocate(bytes) : std::malloc(bytes);
}

void* Calloc(std::size_t count, std::size_t size) {
  if (current == nullptr) return std::calloc(count, size);
  if (size != 0 && count > SIZE_MAX / size) return nullptr;
  void* p = current->Allocate(count * size);
  if (p != nullptr) std::memset(p, 0, count * size);
  return p;
}

void* Realloc(void* p, std::size_t bytes) {
  if (p == nullptr) return Malloc(bytes);
  if (current == nullptr || !current->Owns(p)) return std::realloc(p, bytes);
  const std::size_t old = ParseArena::SizeOf(p);
  if (bytes <= old) return p;
  void* grown = current->Allocate(bytes);
  if (grown != nullptr) std::memcpy(grown, p, old);
  return grown;
}

void Free(void* p) {
  if (p == nullptr || (current != nullptr && current->Owns(p))) return;
  std::free(p);
}

void InstallHooks() {
  static std::once_flag once;
  std::call_once(once, [] { ts_set_allocator(Malloc, Calloc, Realloc, Free); });
}

// `bytes` (a multiple of kHugePage) mapped at a huge-page boundary, or null.
char* MapAligned(std::size_t bytes) {
  void* raw = ::mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > start) ::munmap(raw, aligned - start);
  const std::uintptr_t tail = start + bytes + kHugePage - (aligned + bytes);
  if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  ::madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);
  return reinterpret_cast<char*>(aligned);
}

}  // namespace

ParseArena::ParseArena(std::size_t budget_bytes) : budget_(budget_bytes), outer_(current) {
  InstallHooks();
  current = this;
}

void ParseArena::Reset(std::size_t expected_bytes) {
  expected_ = std::max(expected_bytes, kMinChunk);
  overflowed_ = false;
  chunk_ = 0;
  next_ = chunks_.empty() ? nullptr : chunks_[0].begin;
  limit_ = chunks_.empty() ? nullptr : chunks_[0].end;
}

ParseArena::~ParseArena() {
  current = outer_;
  for (const Chunk& c : chunks_) {
    if (c.mapped) {
      ::munmap(c.begin, static_cast<std::size_t>(c.end - c.begin));
    } else {
      std::free(c.begin);
    }
  }
}

void* ParseArena::Allocate(std::size_t bytes) {
  if (bytes > SIZE_MAX - 2 * kHeader) return nullptr;
  const std::size_t capacity = std::max<std::size_t>(1, (bytes + kHeader - 1) / kHeader) * kHeader;
  const std::size_t need = kHeader + capacity;
  if (need > static_cast<std::size_t>(limit_ - next_) && !AddChunk(need)) {
    overflowed_ = true;
    return std::malloc(bytes);
  }
  char* block = next_;
  next_ += need;
  std::memcpy(block, &capacity, sizeof capacity);
  return block + kHeader;
}

bool ParseArena::AddChunk(std::size_t need) {
  // The chunks an earlier parse filled, in order, then new ones: the first the size the parse is
  // expected to need, later ones as large as all before.
  while (!chunks_.empty() && chunk_ + 1 < chunks_.size()) {
    const Chunk& c = chunks_[++chunk_];
    if (static_cast<std::size_t>(c.end - c.begin) < need) continue;
    next_ = c.begin;
    limit_ = c.end;
    return true;
  }
  if (need > budget_ - used_) return false;
  std::size_t size = std::clamp(chunks_.empty() ? expected_ : used_, need, budget_ - used_);
  const bool mapped = size >= kMapFrom;
  // Whole huge pages (the budget may be passed by less than one).
  if (mapped) size = (size + kHugePage - 1) / kHugePage * kHugePage;
  char* begin = mapped ? MapAligned(size) : static_cast<char*>(std::malloc(size));
  if (begin == nullptr) return false;
  chunks_.push_back({begin, begin + size, mapped});
  chunk_ = chunks_.size() - 1;
  used_ += size;
  next_ = begin;
  limit_ = begin + size;
  return true;
}

bool ParseArena::Owns(const void* p) const {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  return std::any_of(chunks_.begin(), chunks_.end(), [at](const Chunk& k) {
    return at >= reinterpret_cast<std::uintptr_t>(k.begin) &&
           at < reinterpret_cast<std::uintptr_t>(k.end);
  });
}

std::size_t ParseArena::SizeOf(const void* p) {
  std::size_t bytes;
  std::memcpy(&bytes, static_cast<const char*>(p) - kHeader, sizeof bytes);
  return bytes;
}

}  // namespace tpudoctor::script
