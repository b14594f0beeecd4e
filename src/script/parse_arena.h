// ParseArena: where tree-sitter allocates while one thread parses a script and flattens the tree.
//
// A parse makes about one allocation per two bytes of source and frees them all when the tree
// is deleted; through malloc that was a fifth of the parse, and deleting the tree walked it once
// more. Inside an arena, allocations are bumped from large chunks, frees are nothing (the tree
// is most of what a parse allocates: reusing freed blocks saved 4% of the memory), and the tree
// is dropped with the arena instead of being walked: see Syntax::Parse. Past its budget an arena
// hands allocations to malloc, and the tree must then be deleted as usual (`overflowed()`). The
// parser is always deleted: a grammar's external scanner allocates its state with malloc itself.
//
// The hooks are tree-sitter's process-wide allocator (ts_set_allocator, installed once): on a
// thread with no arena open they are malloc, calloc, realloc and free, so other users of
// tree-sitter in the process are unaffected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpudoctor::script {

class ParseArena {
 public:
  // Opens the arena on the calling thread (an arena opened inside another is the one used until
  // it closes). Past `budget_bytes` of chunks in all, allocations go to malloc.
  explicit ParseArena(std::size_t budget_bytes);
  ~ParseArena();
  ParseArena(const ParseArena&) = delete;
  ParseArena& operator=(const ParseArena&) = delete;

  // Empties the arena for the next parse (nothing allocated in it before is used again: the
  // memory is), which is expected to allocate about `expected_bytes`.
  void Reset(std::size_t expected_bytes);

  // Whether an allocation since the last Reset went to malloc because the budget was spent: what
  // was made in the arena must then be deleted through tree-sitter before the arena closes.
  bool overflowed() const { return overflowed_; }

  // The hooks' side (parse_arena.cc).
  void* Allocate(std::size_t bytes);
  bool Owns(const void* p) const;
  // The capacity of a block of this arena.
  static std::size_t SizeOf(const void* p);

 private:
  struct Chunk {
    char* begin;
    char* end;
    bool mapped;  // by mmap (else malloc)
  };
  bool AddChunk(std::size_t need);
  std::vector<Chunk> chunks_;
  std::size_t chunk_ = 0;  // the chunk being filled
  char* next_ = nullptr;
  char* limit_ = nullptr;
  std::size_t used_ = 0;
  std::size_t expected_ = 0;
  std::size_t budget_;
  bool overflowed_ = false;
  ParseArena* outer_;
};

}  // namespace tpudoctor::script
