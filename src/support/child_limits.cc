#include "src/support/child_limits.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace tpudoctor {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// Bytes of address space mapped now (/proc/self/statm's first field, in pages); 0 if unknown.
std::uint64_t MappedBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long pages = 0;
  const int n = std::fscanf(f, "%llu", &pages);
  std::fclose(f);
  const long page = ::sysconf(_SC_PAGESIZE);
  return n == 1 && page > 0 ? pages * static_cast<std::uint64_t>(page) : 0;
}

}  // namespace

void LimitThisChild(std::uint64_t extra_bytes, int cpu_seconds) {
  const rlimit cpu{static_cast<rlim_t>(cpu_seconds), static_cast<rlim_t>(cpu_seconds) + 1};
  ::setrlimit(RLIMIT_CPU, &cpu);
  if (kSanitized) return;
  const std::uint64_t mapped = MappedBytes();
  if (mapped == 0) return;
  const rlimit as{static_cast<rlim_t>(mapped + extra_bytes),
                  static_cast<rlim_t>(mapped + extra_bytes)};
  ::setrlimit(RLIMIT_AS, &as);
}

}  // namespace tpudoctor
