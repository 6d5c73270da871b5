// Differential test of the xl.cfg parser against Xen 4.17's own (Debian's libxlutil, from
// libxen-dev): for hand-written cases and 10^4 generated inputs, the same messages byte for
// byte, the same success or failure, and the same values. Inputs hold no NUL byte: Xen's
// parser asserts on one inside a string (ours reports a lexical error, xl_cfg_test.cpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "tools/xl/config/xl_cfg.h"

extern "C" {
#include <libxlutil.h>
}

namespace cfg = pvhv::xl::cfg;

namespace {

struct XenParse {
  int error = 0;
  std::string report;
  XLU_Config* config = nullptr;
  ~XenParse() { xlu_cfg_destroy(config); }
};

void xen_parse(const std::string& text, XenParse& out) {
  char* buffer = nullptr;
  size_t size = 0;
  FILE* report = open_memstream(&buffer, &size);
  out.config = xlu_cfg_init(report, "t.cfg");
  out.error = xlu_cfg_readdata(out.config, text.data(), static_cast<int>(text.size()));
  std::fclose(report);
  out.report.assign(buffer, size);
  std::free(buffer);
}

// Runs both parsers on `text`; returns a description of the first difference, or "".
std::string compare(const std::string& text) {
  XenParse xen;
  xen_parse(text, xen);
  const cfg::ParseResult ours = cfg::parse("t.cfg", text);
  if (xen.report != ours.report) return "report: xen [" + xen.report + "] ours [" + ours.report + "]";
  if ((xen.error == 0) != ours.ok())
    return "status: xen " + std::to_string(xen.error) + " ours " + std::to_string(ours.error);
  if (!ours.ok()) return "";
  for (const cfg::Setting& s : ours.config.settings) {
    if (ours.config.find(s.name) != &s) continue;  // only the assignment in force
    const char* value = nullptr;
    const int found = xlu_cfg_get_string(xen.config, s.name.c_str(), &value, 1);
    if (s.value.is_list()) {
      XLU_ConfigList* list = nullptr;
      int entries = -1;
      if (found == 0 || xlu_cfg_get_list(xen.config, s.name.c_str(), &list, &entries, 1) != 0 ||
          entries != static_cast<int>(s.value.list.size()))
        return "list " + s.name + ": xen has " + std::to_string(entries) + " entries";
      for (int i = 0; i < entries; ++i) {
        const char* item = xlu_cfg_get_listitem(list, i);
        const bool ours_atom = !s.value.list[i].is_list();
        if ((item != nullptr) != ours_atom || (item && s.value.list[i].string != item))
          return "list " + s.name + " item " + std::to_string(i);
      }
    } else if (found != 0 || s.value.string != value) {
      return "string " + s.name + ": xen [" + (value ? value : "(none)") + "] ours [" + s.value.string + "]";
    }
    long xen_long = 0, our_long = 0;
    std::string report;
    const bool xen_number = xlu_cfg_get_long(xen.config, s.name.c_str(), &xen_long, 1) == 0;
    const bool our_number = cfg::get_long(ours.config, s.name, our_long, report) == cfg::Lookup::kFound;
    if (xen_number != our_number || (xen_number && xen_long != our_long)) return "number " + s.name;
  }
  return "";
}

TEST(XlCfgAgainstXen, HandWrittenCases) {
  const char* cases[] = {
      "name = \"dom\"\nkernel='k'\nmemory = 64\nvcpus=0x2\n",
      "# a comment\na = 1; a = 2 # trailing\n;;\n\na = \"3\"\n",
      "a = 1\nb = 'x'",
      "a = \"q\\\"s\\'b\\\\n\\n\\t\\a\\b\\f\\r\\v\" \nb = 'it\\'s'\n",
      "a = \"x\\012y\"\n",
      "a = \"\\x41\"\n",
      "a = '\\01'\n",
      "a = \"\\q\"\n",
      "disk = [ 'a', \"b\",\n   3, ]\nempty = []\nnested = [[1, [2]], '3']\n",
      "extra = 'a'\nextra += ' b'\nl = [1]\nl += [2, 3]\nnew += 'x'\n",
      "a = 'x'\na += [1]\n",
      "memory = 1\nmemory += 2\n",
      "a b\n",
      "x = 1\n= 2\n",
      "a = ]\n",
      "a = [1 2]\n",
      "a = [,]\n",
      "a = 1 b = 2\n",
      "x = 1\na =\n",
      "a = 1\nb = # c\n",
      "a =",
      "a = [1,\n",
      "a b\nc = 1\nd e\n",
      "a b\nd e\n",
      "Name = 1\n",
      "a = \"unterminated\nb = 1\n",
      "a = 1\nb = @\n",
      "a = (1 + 2)\n",
      "a = 1\n# x",
      "a = 1\n#",
      "a = @",
      "a = [\n1\n,\n2\n]\n",
      "a = 1;b = 2;\n",
      "a == 1\n",
      "a += += 1\n",
      "1 = 2\n",
      "a = 'x' 'y'\n",
      "a = [1] [2]\n",
      "a.b_c.9 = 1\n",
      "a = 09x\n",
      "a = '\\0 12'\n",
      "a = '\\7'\n",
      "a = \"\\\\\"\n",
      "a = [[[[]]]]\n",
      "  \t\n\n",
      "",
      "=\n=\n=\n=\n",
      "a = 1 #\n",
      "a = -1\n",
      "a = '-12'\nb = ' 7'\nc = '0x'\nd = '010'\n",
  };
  for (const char* text : cases) EXPECT_EQ(compare(text), "") << "input: [" << text << "]";
}

// Generated inputs: random characters of the language, and random sequences of its tokens
// (closer to real files, so the grammar's deeper states are reached).
TEST(XlCfgAgainstXen, TenThousandGeneratedInputs) {
  std::mt19937 rng(20240417);
  const std::string characters = "ab_.09x=+[],;#'\"\\\n \tZ(@-";
  const char* tokens[] = {"a",  "b",     "memory", "=",     "+=", "[",    "]", ",",     ";",      "\n",
                          "\n", "# c\n", "'s'",    "\"t\"", "1",  "0x10", " ", "'\\n'", "'\\x1'", "\"unterminated",
                          "@",  "(",     "'a' "};
  int differences = 0;
  for (int i = 0; i < 10000; ++i) {
    std::string text;
    const int length = rng() % 40;
    for (int j = 0; j < length; ++j) {
      if (i % 2)
        text += characters[rng() % characters.size()];
      else
        text += tokens[rng() % (sizeof tokens / sizeof *tokens)];
    }
    const std::string difference = compare(text);
    if (!difference.empty() && ++differences <= 10) ADD_FAILURE() << "input: [" << text << "] " << difference;
  }
  EXPECT_EQ(differences, 0);
}

}  // namespace
