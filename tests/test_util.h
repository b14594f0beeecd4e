// Helpers shared by the tests: paths under testdata/, loading a model, golden files.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/ir/text.h"
#include "tpudoctor/knowledge/op_support.h"

namespace tpudoctor::testing {

inline std::filesystem::path SourceDir() { return TPUD_SOURCE_DIR; }
inline std::filesystem::path Testdata(const std::string& rel) {
  return SourceDir() / "testdata" / rel;
}

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool UpdateGoldens() {
  const char* v = std::getenv("UPDATE_GOLDENS");
  return v != nullptr && std::string(v) == "1";
}

// Compares `actual` with the golden file; with UPDATE_GOLDENS=1 rewrites it instead.
inline void ExpectGolden(const std::filesystem::path& golden, const std::string& actual) {
  if (UpdateGoldens()) {
    std::ofstream(golden, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(golden))
      << golden << " is missing; run with UPDATE_GOLDENS=1";
  EXPECT_EQ(ReadFile(golden), actual)
      << "golden " << golden << " differs; review, then UPDATE_GOLDENS=1";
}

inline LoadedModel LoadOrDie(const std::filesystem::path& p, const ShapeOptions& options = {}) {
  auto src = ReadSource(p.string());
  EXPECT_TRUE(src.ok()) << (src.ok() ? "" : src.error().message);
  auto model = LoadModel(*src, options);
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
  return std::move(*model);
}

// A graph from the IR text form; fails the test on a parse error.
// Op support is annotated as a frontend would.
inline Graph ParseOrDie(const std::string& text) {
  auto g = ParseGraphText(text);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  if (!g.ok()) return Graph();
  AnnotateOpSupport(*g);
  FillGeometry(*g);
  return std::move(*g);
}

}  // namespace tpudoctor::testing
