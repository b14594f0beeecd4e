// How the command-line tool allocates: its operator new (malloc, plus transparent huge pages for
// large blocks) and TuneAllocator (main calls it first).
//
// Loading a 100k-node model allocates a few large arrays (the parsed protobuf's arena blocks, the
// graph's node and value vectors: tens of MiB each). Touched 4 KiB at a time, each page is a
// fault; a tenth of such a run went to faulting them in. Where the kernel leaves huge pages to
// the program (`/sys/kernel/mm/transparent_hugepage/enabled` = madvise, Debian's default), a
// block of 8 MiB or more is advised MADV_HUGEPAGE before its first touch: 2 MiB per fault.
// Elsewhere the advice is ignored. Only the executable links this file, so the library, the
// Python module and the tests allocate as usual; so does a sanitizer build, whose allocator must
// see every new and delete.
#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define TPUD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TPUD_SANITIZED 1
#endif
#endif
#ifndef TPUD_SANITIZED
#define TPUD_SANITIZED 0
#endif

namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
constexpr std::size_t kAdviseFrom = std::size_t{8} << 20;

void AdviseHugePages(void* block, std::size_t size) {
  const auto start = reinterpret_cast<std::uintptr_t>(block);
  const std::uintptr_t begin = (start + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = (start + size) & ~(kHugePage - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void* Allocate(std::size_t size) {
  void* block = std::malloc(size == 0 ? 1 : size);
  if (block == nullptr) throw std::bad_alloc();
  if (size >= kAdviseFrom) AdviseHugePages(block, size);
  return block;
}

}  // namespace

namespace tpudoctor::cli {

// Large blocks come from the heap rather than their own mappings, and the heap is not trimmed: a
// run frees the parsed model (tens of MiB) before the checks allocate theirs, which then reuse
// pages already faulted in instead of fresh ones the kernel must zero.
//
// The heap's first kReserveHeap bytes are advised onto huge pages too: a run's many small blocks
// (the HLO parser's and the IR's) otherwise fault in 4 KiB at a time.
void TuneAllocator() {
  ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  constexpr std::size_t kReserveHeap = std::size_t{256} << 20;
  if (void* block = std::malloc(kReserveHeap)) {
    AdviseHugePages(block, kReserveHeap);
    std::free(block);  // back to the heap's top, which is not trimmed
  }
}

bool LeakCheckedBuild() { return TPUD_SANITIZED != 0; }

}  // namespace tpudoctor::cli

#if !TPUD_SANITIZED
void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
void operator delete(void* block) noexcept { std::free(block); }
void operator delete[](void* block) noexcept { std::free(block); }
void operator delete(void* block, std::size_t) noexcept { std::free(block); }
void operator delete[](void* block, std::size_t) noexcept { std::free(block); }
#endif  // !TPUD_SANITIZED
