// LimitThisChild: the resource limits a forked helper process (the HDF5 reader) puts on itself
// before it touches untrusted bytes, so a hostile file costs bounded CPU time and memory.
//
// Memory is limited with RLIMIT_AS, the only limit Linux enforces on a process's own allocations:
// the child inherits the parent's address space, so the limit is what is mapped at the fork plus
// `extra_bytes`; an allocation beyond it fails (malloc returns null, operator new throws) and the
// child exits with an error instead of growing. Sanitizer builds reserve terabytes of shadow
// memory up front, so there the memory limit is left off.
#pragma once

#include <cstdint>

namespace tpudoctor {

void LimitThisChild(std::uint64_t extra_bytes, int cpu_seconds);

}  // namespace tpudoctor
