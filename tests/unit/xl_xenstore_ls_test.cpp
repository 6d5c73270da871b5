// xenstore-ls's format, worked out by hand from Xen 4.17's xenstore_client.c rules.
#include "tools/xl/xenstore_ls.h"

#include <gtest/gtest.h>

namespace pvhv::xl {
namespace {

std::vector<StoreNode> sample() {
  return {{0, "local", "/local", std::string(""), {"n0"}},
          {1, "domain", "/local/domain", std::string(""), {"n0"}},
          {2, "3", "/local/domain/3", std::string(""), {"n0", "r3"}},
          {3, "name", "/local/domain/3/name", std::string("calm"), {"n0", "r3"}},
          {3, "gone", "/local/domain/3/gone", std::nullopt, {}}};
}

TEST(XlXenstoreLs, IndentedByDepth) {
  EXPECT_EQ(format_xenstore_ls(sample(), {}),
            "local = \"\"\n"
            " domain = \"\"\n"
            "  3 = \"\"\n"
            "   name = \"calm\"\n"
            "   gone:\n");
}

TEST(XlXenstoreLs, PermissionsAfterADottedLeaderToColumn60) {
  std::string out = format_xenstore_ls({sample()[3]}, {.perms = true});
  // `   name = "calm"` is 16 columns, then a space, then ". " alternating up to column 60.
  std::string expected = "   name = \"calm\" ";
  for (int column = 17; column < 60; ++column) expected += (column & 1) ? '.' : ' ';
  expected += "  (n0,r3)\n";
  EXPECT_EQ(out, expected);
}

TEST(XlXenstoreLs, FullPathsAndWideValuesCut) {
  EXPECT_EQ(format_xenstore_ls({sample()[3]}, {.full_paths = true}), "/local/domain/3/name = \"calm\"\n");
  StoreNode wide{0, "big", "/big", std::string(100, 'x'), {"n0"}};
  // 80 columns: the name (3), then as much of the value as leaves room for ` = "...\"` (8).
  EXPECT_EQ(format_xenstore_ls({wide}, {}), "big = \"" + std::string(80 - 8 - 3, 'x') + "\\...\"\n");
}

TEST(XlXenstoreLs, ValuesAreSanitised) {
  EXPECT_EQ(sanitise_value(std::string("a\tb\nc\rd\\e\x01\xff", 11)), "a\\tb\\nc\\rd\\\\e\\001\\377");
}

TEST(XlXenstoreLs, DaemonNodesReadBackAndJunkSkipped) {
  Json nodes =
      Json::parse(R"([{"depth": 0, "name": "a", "path": "/a", "value": "x", "value_hex": "780a", "perms": ["n0"]},
                                {"depth": 1, "name": "b", "value_hex": null},
                                {"name": "nodepth"}, 5, {"depth": "x", "name": "c"}])");
  auto read = store_nodes(nodes);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].value, std::string("x\n"));
  EXPECT_EQ(read[0].perms, std::vector<std::string>{"n0"});
  EXPECT_FALSE(read[1].value);
  EXPECT_TRUE(store_nodes(Json("x")).empty());
}

}  // namespace
}  // namespace pvhv::xl
