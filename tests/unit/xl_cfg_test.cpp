// The xl.cfg parser (tools/xl/config/xl_cfg.cpp) against Xen 4.17's rules and messages
// (libxlu_cfg_l.l, libxlu_cfg_y.y, libxlu_cfg.c), and against hostile input.
#include "tools/xl/config/xl_cfg.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <random>

namespace cfg = pvhv::xl::cfg;

namespace {

cfg::ParseResult parse(std::string_view text) { return cfg::parse("t.cfg", text); }

std::string string_of(const cfg::ParseResult& r, std::string_view key) {
  std::string value, report;
  EXPECT_EQ(cfg::get_string(r.config, key, value, report), cfg::Lookup::kFound) << key;
  return value;
}

TEST(XlCfg, AssignmentsStringsAndNumbers) {
  auto r = parse("name = \"dom\"\nkernel='k'\nmemory = 64\nvcpus=0x2\n");
  ASSERT_TRUE(r.ok()) << r.report;
  EXPECT_EQ(r.report, "");
  EXPECT_EQ(string_of(r, "name"), "dom");
  EXPECT_EQ(string_of(r, "kernel"), "k");
  long v = 0;
  std::string report;
  ASSERT_EQ(cfg::get_long(r.config, "memory", v, report), cfg::Lookup::kFound);
  EXPECT_EQ(v, 64);
  ASSERT_EQ(cfg::get_long(r.config, "vcpus", v, report), cfg::Lookup::kFound);
  EXPECT_EQ(v, 2);
  EXPECT_EQ(r.config.find("memory")->line, 3);
}

TEST(XlCfg, SemicolonsCommentsAndLastAssignmentWins) {
  auto r = parse("# a comment\na = 1; a = 2 # trailing\n;;\n\na = \"3\"\n");
  ASSERT_TRUE(r.ok()) << r.report;
  EXPECT_EQ(string_of(r, "a"), "3");
  EXPECT_EQ(r.config.find("a")->line, 5);
}

TEST(XlCfg, LastStatementNeedsNoNewline) {
  auto r = parse("a = 1\nb = 'x'");
  ASSERT_TRUE(r.ok()) << r.report;
  EXPECT_EQ(string_of(r, "b"), "x");
}

TEST(XlCfg, EscapesAsXen) {
  auto r = parse(R"(a = "q\"s\'b\\n\n\t\a\b\f\r\v" )"
                 "\n"
                 R"(b = 'it\'s')"
                 "\n");
  ASSERT_TRUE(r.ok()) << r.report;
  EXPECT_EQ(string_of(r, "a"), "q\"s'b\\n\n\t\a\b\f\r\v");
  EXPECT_EQ(string_of(r, "b"), "it's");
}

TEST(XlCfg, NumericEscapesProduceNothingAsInXen417) {
  // Xen 4.17 swallows an octal escape's digits without storing a character...
  auto r = parse("a = \"x\\012y\"\n");
  ASSERT_TRUE(r.ok()) << r.report;
  EXPECT_EQ(string_of(r, "a"), "xy");
  // ...and refuses every hex escape, and an octal one with fewer than two more digits.
  r = parse("a = \"\\x41\"\n");
  EXPECT_EQ(r.error, EINVAL);
  EXPECT_EQ(r.report,
            "t.cfg:1: config parsing error near `\"\\x41\"': invalid digit after backslash hexnumerical character "
            "escape in quoted string\n");
  r = parse("a = '\\01'\n");
  EXPECT_EQ(r.report,
            "t.cfg:1: config parsing error near `'\\01'': invalid digit after backslash octalnumerical character "
            "escape in quoted string\n");
  r = parse("a = \"\\q\"\n");
  EXPECT_EQ(r.report,
            "t.cfg:1: config parsing error near `\"\\q\"': invalid character after backlash in quoted string\n");
}

TEST(XlCfg, Lists) {
  auto r = parse("disk = [ 'a', \"b\",\n   3, ]\nempty = []\nnested = [[1, [2]], '3']\n");
  ASSERT_TRUE(r.ok()) << r.report;
  const cfg::Setting* disk = r.config.find("disk");
  ASSERT_TRUE(disk->value.is_list());
  ASSERT_EQ(disk->value.list.size(), 3u);
  EXPECT_EQ(disk->value.list[1].string, "b");
  EXPECT_EQ(disk->value.list[2].string, "3");
  EXPECT_TRUE(r.config.find("empty")->value.list.empty());
  const cfg::Value& nested = r.config.find("nested")->value;
  ASSERT_EQ(nested.list.size(), 2u);
  EXPECT_EQ(nested.list[0].list[1].list[0].string, "2");
}

TEST(XlCfg, AppendJoinsStringsAndLists) {
  auto r = parse("extra = 'a'\nextra += ' b'\nl = [1]\nl += [2, 3]\nnew += 'x'\n");
  ASSERT_TRUE(r.ok()) << r.report;
  EXPECT_EQ(string_of(r, "extra"), "a b");
  EXPECT_EQ(r.config.find("l")->value.list.size(), 3u);
  EXPECT_EQ(string_of(r, "new"), "x");
  r = parse("a = 'x'\na += [1]\n");
  EXPECT_EQ(r.error, EINVAL);
  EXPECT_EQ(r.report, "t.cfg:2: config parsing error near `]': can't add [list] to \"string\" or vice versa\n");
}

TEST(XlCfg, AppendIsRefusedForNumbers) {
  auto r = parse("memory = 1\nmemory += 2\n");
  ASSERT_TRUE(r.ok());
  long v = 0;
  std::string report;
  EXPECT_EQ(cfg::get_long(r.config, "memory", v, report), cfg::Lookup::kWrongType);
  EXPECT_EQ(report, "t.cfg:2: warning: can't use += with numbers for parameter `memory'\n");
}

TEST(XlCfg, WrongTypesWarnAndCountAsAbsent) {
  auto r = parse("name = ['a']\nmemory = 'lots'\nvcpus = 99999999999999999999\n");
  ASSERT_TRUE(r.ok());
  std::string s, report;
  long v = 0;
  EXPECT_EQ(cfg::get_string(r.config, "name", s, report), cfg::Lookup::kWrongType);
  EXPECT_EQ(cfg::get_long(r.config, "memory", v, report), cfg::Lookup::kWrongType);
  EXPECT_EQ(cfg::get_long(r.config, "vcpus", v, report), cfg::Lookup::kWrongType);
  EXPECT_EQ(report,
            "t.cfg:1: warning: parameter `name' is a list but should be a single value\n"
            "t.cfg:2: warning: parameter `memory' is not a valid number\n"
            "t.cfg:3: warning: parameter `vcpus' could not be parsed as a number: Numerical result out of range\n");
  EXPECT_EQ(cfg::get_string(r.config, "absent", s, report), cfg::Lookup::kAbsent);
}

// Bison's verbose messages, with the expected tokens of the state the error is found in.
TEST(XlCfg, SyntaxErrorsAsXen) {
  EXPECT_EQ(parse("a b\n").report,
            "t.cfg:1: config parsing error near `b': syntax error, unexpected IDENT, expecting += or '='\n");
  EXPECT_EQ(parse("x = 1\n= 2\n").report,
            "t.cfg:2: config parsing error near `=': syntax error, unexpected '=', expecting $end or IDENT or NEWLINE "
            "or ';'\n");
  EXPECT_EQ(
      parse("a = ]\n").report,
      "t.cfg:1: config parsing error near `]': syntax error, unexpected ']', expecting STRING or NUMBER or '['\n");
  EXPECT_EQ(parse("a = [1 2]\n").report,
            "t.cfg:1: config parsing error near `2': syntax error, unexpected NUMBER, expecting ']'\n");
  EXPECT_EQ(parse("a = [,]\n").report,
            "t.cfg:1: config parsing error near `,': syntax error, unexpected ',', expecting ']'\n");
  // After a whole assignment bison has reduced the file: only the end would do.
  EXPECT_EQ(parse("a = 1 b = 2\n").report,
            "t.cfg:1: config parsing error near `b': syntax error, unexpected IDENT, expecting $end\n");
  // An unexpected newline: Xen reports the line before the one it is on.
  EXPECT_EQ(parse("x = 1\na =\n").report,
            "t.cfg:1: config parsing error near <newline>: syntax error, unexpected NEWLINE, expecting STRING or "
            "NUMBER or '['\n");
  EXPECT_EQ(parse("a = 1\nb = # c\n").report,
            "t.cfg:1: config parsing error near `# c': syntax error, unexpected NEWLINE, expecting STRING or NUMBER or "
            "'['\n");
  EXPECT_EQ(
      parse("a =").report,
      "t.cfg:1: config parsing error near `': syntax error, unexpected $end, expecting STRING or NUMBER or '['\n");
  EXPECT_EQ(parse("a = [1,\n").report,
            "t.cfg:1: config parsing error near `': syntax error, unexpected $end, expecting ']'\n");
  EXPECT_EQ(parse("a b\n").error, EINVAL);
}

TEST(XlCfg, RecoveryReportsLaterLinesAfterThreeTokens) {
  // Each bad line is skipped to its newline; the next error is reported once three tokens
  // (the newline and two more) have been read.
  EXPECT_EQ(parse("a b\nc = 1\nd e\n").report,
            "t.cfg:1: config parsing error near `b': syntax error, unexpected IDENT, expecting += or '='\n"
            "t.cfg:3: config parsing error near `e': syntax error, unexpected IDENT, expecting += or '='\n");
  EXPECT_EQ(parse("a b\nd e\n").report,
            "t.cfg:1: config parsing error near `b': syntax error, unexpected IDENT, expecting += or '='\n");
}

TEST(XlCfg, LexicalErrors) {
  auto r = parse("Name = 1\n");
  EXPECT_EQ(r.error, EINVAL);
  EXPECT_EQ(r.report, "t.cfg:1: config parsing error near `Name': lexical error\n");
  r = parse("a = \"unterminated\nb = 1\n");
  EXPECT_EQ(r.report, "t.cfg:1: config parsing error near `\"unterminated': lexical error\n");
  r = parse("a = 1\nb = @\n");
  EXPECT_EQ(r.report, "t.cfg:2: config parsing error near `@': lexical error\n");
  r = parse("a = (1 + 2)\n");
  EXPECT_EQ(r.report,
            "t.cfg:1: config parsing error near `(1': lexical error\n"
            "t.cfg:1: config parsing error near `)': lexical error\n"
            "warning: Config file looks like it contains Python code.\n"
            "warning:  Arbitrary Python is no longer supported.\n"
            "warning:  See https://wiki.xen.org/wiki/PythonInXlConfig\n");
  // A comment without its newline is no comment to Xen's lexer.
  EXPECT_EQ(parse("a = 1\n# x").report, "t.cfg:2: config parsing error near `#': lexical error\n");
}

TEST(XlCfg, NulBytesAreLexicalErrors) {
  const std::string text("a = 'x\0y'\nb = 1\n", 16);
  auto r = parse(text);
  EXPECT_EQ(r.error, EINVAL);
  EXPECT_NE(r.report.find("t.cfg:1: config parsing error near `'x"), std::string::npos) << r.report;
  EXPECT_FALSE(parse(std::string("a\0 = 1\n", 7)).ok());
}

TEST(XlCfg, HugeAndDeepInputs) {
  std::string big = "a = '" + std::string(1 << 22, 'x') + "'\n";
  auto r = parse(big);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(string_of(r, "a").size(), 1u << 22);
  EXPECT_FALSE(parse("a = '" + std::string(1 << 22, 'x') + "\n").ok());
  std::string deep = "a = " + std::string(cfg::kMaxListDepth, '[') + std::string(cfg::kMaxListDepth, ']') + "\n";
  EXPECT_TRUE(parse(deep).ok());
  std::string too_deep = "a = " + std::string(200000, '[') + "\n";
  r = parse(too_deep);
  EXPECT_EQ(r.error, EINVAL);
  EXPECT_NE(r.report.find("memory exhausted"), std::string::npos);
  std::string long_list = "a = [";
  for (int i = 0; i < 100000; ++i) long_list += "1,";
  r = parse(long_list + "]\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.config.find("a")->value.list.size(), 100000u);
}

// 10^4 random inputs from the language's own characters: never a crash (the test runs under
// ASan and UBSan), and a failed parse always says why.
TEST(XlCfg, RandomInputsNeverCrash) {
  std::mt19937 rng(12345);
  const std::string alphabet("ab_.09x=+[],;#'\"\\\n \tZ(@\0", 24);
  for (int i = 0; i < 10000; ++i) {
    std::string text;
    const int length = rng() % 64;
    for (int j = 0; j < length; ++j) text += alphabet[rng() % alphabet.size()];
    auto r = parse(text);
    if (!r.ok()) {
      EXPECT_FALSE(r.report.empty()) << text;
    }
  }
}

}  // namespace
