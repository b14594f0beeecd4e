// ParseArena (src/script/parse_arena.h): blocks, growth, the budget, and a parse that outgrows it.
#include "src/script/parse_arena.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "src/script/syntax.h"

namespace tpudoctor::script {
namespace {

TEST(ParseArenaTest, BlocksAreAlignedAndRemembered) {
  ParseArena arena(std::size_t{16} << 20);
  arena.Reset(1 << 20);
  void* a = arena.Allocate(3);
  void* b = arena.Allocate(100);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % alignof(std::max_align_t), 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % alignof(std::max_align_t), 0u);
  EXPECT_GE(ParseArena::SizeOf(a), 3u);
  EXPECT_GE(ParseArena::SizeOf(b), 100u);
  EXPECT_TRUE(arena.Owns(a) && arena.Owns(b));
  int outside = 0;
  EXPECT_FALSE(arena.Owns(&outside));
  EXPECT_FALSE(arena.overflowed());
}

TEST(ParseArenaTest, ResetReusesTheSameMemory) {
  ParseArena arena(std::size_t{16} << 20);
  arena.Reset(1 << 20);
  void* first = arena.Allocate(64);
  arena.Reset(1 << 20);
  EXPECT_EQ(arena.Allocate(64), first);
}

TEST(ParseArenaTest, PastTheBudgetAllocationsGoToMalloc) {
  ParseArena arena(std::size_t{1} << 20);
  arena.Reset(std::size_t{1} << 20);
  void* inside = arena.Allocate(1000);
  EXPECT_TRUE(arena.Owns(inside));
  void* outside = arena.Allocate(std::size_t{2} << 20);
  ASSERT_NE(outside, nullptr);
  EXPECT_FALSE(arena.Owns(outside));
  EXPECT_TRUE(arena.overflowed());
  std::free(outside);
  arena.Reset(1 << 10);
  EXPECT_FALSE(arena.overflowed());
}

// One function of two megabytes has no top-level statement to cut at: its one part needs more
// than the arena's budget, so the parse fills the arena, continues in malloc, and its tree is
// deleted as usual.
TEST(ParseArenaTest, AParseLargerThanTheBudgetStillReadsWhole) {
  std::string code = "def train(ds):\n";
  for (int i = 0; i < 30000; ++i) {
    code += "    ds_" + std::to_string(i) + " = ds.map(f, num_parallel_calls=8).batch(32)\n";
  }
  auto syntax = Syntax::Parse(code);
  ASSERT_TRUE(syntax.ok());
  ASSERT_EQ(syntax->roots().size(), 1u);
  EXPECT_FALSE(syntax->has_error());
  int calls = 0;
  Walk(syntax->roots()[0], [&](Node n, int) {
    calls += n.is(NodeType::kCall);
    return true;
  });
  EXPECT_EQ(calls, 2 * 30000);
}

}  // namespace
}  // namespace tpudoctor::script
