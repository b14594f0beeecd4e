#include "src/support/yaml_input.h"

#include <gtest/gtest.h>

namespace tpudoctor {
namespace {

TEST(YamlInputTest, TypesScalarsAsTheCoreSchema) {
  auto j = ParseYamlInput(
      "a: 8\nb: 1.5e-5\nc: True\nd: ~\ne: \"8\"\nf: 500_000\ng: v5litepod-16\nh: [1, x]\n",
      "t.yaml");
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_EQ((*j)["a"], 8);
  EXPECT_DOUBLE_EQ((*j)["b"].get<double>(), 1.5e-5);
  EXPECT_EQ((*j)["c"], true);
  EXPECT_TRUE((*j)["d"].is_null());
  EXPECT_EQ((*j)["e"], "8");
  EXPECT_EQ((*j)["f"], 500000);
  EXPECT_EQ((*j)["g"], "v5litepod-16");
  EXPECT_EQ((*j)["h"][1], "x");
}

TEST(YamlInputTest, MultiDocumentStreamsAreArrays) {
  auto j = ParseYamlInput("kind: A\n---\nkind: B\n", "t.yaml");
  ASSERT_TRUE(j);
  ASSERT_TRUE(j->is_array());
  EXPECT_EQ((*j)[1]["kind"], "B");
}

TEST(YamlInputTest, RefusesWhatWouldRunAway) {
  std::string flow(100000, '[');
  auto deep = ParseYamlInput(flow, "t.yaml");
  ASSERT_FALSE(deep);
  EXPECT_NE(deep.error().message.find("nested"), std::string::npos);
  std::string block;
  for (int i = 0; i < 200; ++i) block += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
  EXPECT_FALSE(ParseYamlInput(block, "t.yaml"));
  std::string dashes;
  for (int i = 0; i < 200; ++i) dashes += "- ";
  EXPECT_FALSE(ParseYamlInput(dashes + "x\n", "t.yaml"));
  EXPECT_FALSE(ParseYamlInput(std::string(kMaxYamlBytes + 1, 'a'), "t.yaml"));
  EXPECT_FALSE(ParseYamlInput(std::string("a: \0b", 5), "t.yaml"));
  auto bad = ParseYamlInput("a: [1, 2\nb: c\n", "t.yaml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("invalid YAML at line"), std::string::npos);
  EXPECT_FALSE(ParseYamlInput("", "t.yaml"));
  EXPECT_FALSE(ParseYamlInput("# only a comment\n", "t.yaml"));
}

}  // namespace
}  // namespace tpudoctor
