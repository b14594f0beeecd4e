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

TEST(YamlInputTest, AliasesExpandWithinTheBudget) {
  auto j =
      ParseYamlInput("base: &b {dim: 8, name: x}\nuse: *b\nlist: &l [1, 2]\nagain: *l\n", "t.yaml");
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_EQ((*j)["use"]["dim"], 8);
  EXPECT_EQ((*j)["again"][1], 2);
  auto undefined = ParseYamlInput("a: *nowhere\n", "t.yaml");
  ASSERT_FALSE(undefined);
  EXPECT_NE(undefined.error().message.find("names no anchor"), std::string::npos);
}

TEST(YamlInputTest, BillionLaughsIsRefusedBeforeItGrows) {
  std::string text =
      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    const char prev = static_cast<char>(c - 1);
    text += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) text += std::string(i ? "," : "") + "*" + prev;
    text += "]\n";
  }
  auto j = ParseYamlInput(text, "t.yaml");
  ASSERT_FALSE(j);
  EXPECT_NE(j.error().message.find("expands to more than"), std::string::npos) << j.error().message;
  // A long string repeated through aliases is charged its length each time.
  std::string wide = "s: &s " + std::string(1 << 20, 'x') + "\nl: [";
  for (int i = 0; i < 100; ++i) wide += std::string(i ? "," : "") + "*s";
  EXPECT_FALSE(ParseYamlInput(wide + "]\n", "t.yaml"));
}

TEST(YamlInputTest, StrayFlowIndicatorsAreErrorsNotLoops) {
  for (const char* text : {",", "base_emb_dim: 4096\n---\n,\n", "a: ]\n", "}", "- ,"}) {
    auto j = ParseYamlInput(text, "t.yaml");
    EXPECT_FALSE(j) << text;
    if (!j) {
      EXPECT_NE(j.error().message.find("line"), std::string::npos) << j.error().message;
    }
  }
}

TEST(YamlInputTest, KeysKeepTheirTextAndComplexKeysTheirJson) {
  auto j = ParseYamlInput("8: a\n\"x\": b\n? [1, 2]\n: c\n", "t.yaml");
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_EQ((*j)["8"], "a");
  EXPECT_EQ((*j)["x"], "b");
  EXPECT_EQ((*j)["[1,2]"], "c");
}

}  // namespace
}  // namespace tpudoctor
