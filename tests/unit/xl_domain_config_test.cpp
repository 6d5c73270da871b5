// Resolving an xl.cfg into a PV domain (tools/xl/config/domain_config.cpp) as Xen 4.17's xl
// and libxl resolve it: defaults, composition, refusals and their messages.
#include "tools/xl/config/domain_config.h"

#include <gtest/gtest.h>

namespace cfg = pvhv::xl::cfg;

namespace {

TEST(XlDomainConfig, FullConfig) {
  auto r = cfg::resolve_domain("d.cfg",
                               "name = 'd'\ntype = 'pv'\nkernel = 'k'\nramdisk = \"r\"\ncmdline = 'init=/x'\n"
                               "memory = 64\nmaxmem = 128\nvcpus = 2\nmaxvcpus = 4\non_poweroff = 'preserve'\n"
                               "on_reboot = 'destroy'\non_crash = 'restart'\n"
                               "uuid = '01234567-89ab-cdef-0123-456789abcdef'\nptwr_mode = 'writable'\n");
  ASSERT_TRUE(r.domain) << r.report;
  EXPECT_EQ(r.report, "");
  const cfg::DomainConfig& d = *r.domain;
  EXPECT_EQ(d.name, "d");
  EXPECT_EQ(d.kernel, "k");
  EXPECT_EQ(d.ramdisk, "r");
  EXPECT_EQ(d.cmdline, "init=/x");
  EXPECT_EQ(d.memory_mib, 64);
  EXPECT_EQ(d.maxmem_mib, 128);
  EXPECT_EQ(d.vcpus, 2);
  EXPECT_EQ(d.maxvcpus, 4);
  EXPECT_EQ(d.on_poweroff, "preserve");
  EXPECT_EQ(d.on_reboot, "destroy");
  EXPECT_EQ(d.on_crash, "restart");
  EXPECT_EQ(d.uuid, "01234567-89ab-cdef-0123-456789abcdef");
  EXPECT_EQ(d.ptwr_mode, "writable");
}

TEST(XlDomainConfig, DefaultsAsXlAndLibxl) {
  auto r = cfg::resolve_domain("d.cfg", "name = 'd'\n");
  ASSERT_TRUE(r.domain) << r.report;
  EXPECT_EQ(r.domain->memory_mib, 32);
  EXPECT_EQ(r.domain->maxmem_mib, 32);
  EXPECT_EQ(r.domain->vcpus, 1);
  EXPECT_EQ(r.domain->maxvcpus, 1);
  EXPECT_EQ(r.domain->on_poweroff, "destroy");
  EXPECT_EQ(r.domain->on_reboot, "restart");
  EXPECT_EQ(r.domain->on_crash, "destroy");
  EXPECT_EQ(r.domain->uuid, "");
  EXPECT_EQ(r.domain->ptwr_mode, "");
  r = cfg::resolve_domain("d.cfg", "name = 'd'\nmemory = 48\nvcpus = 3\n");
  EXPECT_EQ(r.domain->maxmem_mib, 48);
  EXPECT_EQ(r.domain->maxvcpus, 3);
  r = cfg::resolve_domain("d.cfg", "name = 'd'\nmaxmem = 96\n");
  EXPECT_EQ(r.domain->memory_mib, 96);
}

TEST(XlDomainConfig, CmdlineComposition) {
  auto line = [](const char* text) {
    auto r = cfg::resolve_domain("d.cfg", std::string("name='d'\n") + text);
    EXPECT_TRUE(r.domain) << r.report;
    return std::make_pair(r.domain->cmdline, r.report);
  };
  EXPECT_EQ(line("root='/dev/xvda'\nextra='quiet'\n").first, "root=/dev/xvda quiet");
  EXPECT_EQ(line("root='/dev/xvda'\n").first, "root=/dev/xvda");
  EXPECT_EQ(line("extra='quiet'\n").first, "quiet");
  auto both = line("cmdline='a'\nroot='b'\n");
  EXPECT_EQ(both.first, "a");
  EXPECT_EQ(both.second, "Warning: ignoring root= and extra= in favour of cmdline=\n");
  EXPECT_EQ(line("extra = 'a'\nextra += ' b'\n").first, "a b");
}

TEST(XlDomainConfig, Refusals) {
  auto refused = [](const std::string& text) {
    auto r = cfg::resolve_domain("d.cfg", text);
    EXPECT_FALSE(r.domain) << text;
    EXPECT_EQ(r.exit_status, 1);
    return r.report;
  };
  EXPECT_EQ(refused("memory = 1\n"), "Domain name must be specified.\n");
  EXPECT_EQ(
      refused("name = ['a']\n"),
      "d.cfg:1: warning: parameter `name' is a list but should be a single value\nDomain name must be specified.\n");
  EXPECT_EQ(refused("name='d'\non_poweroff='explode'\n"), "Unknown on_poweroff action \"explode\" specified\n");
  EXPECT_EQ(refused("name='d'\non_reboot='x'\n"), "Unknown on_reboot action \"x\" specified\n");
  EXPECT_EQ(refused("name='d'\non_crash='x'\n"), "Unknown on_crash action \"x\" specified\n");
  EXPECT_EQ(refused("name='d'\nuuid='nope'\n"), "Failed to parse UUID: nope\n");
  EXPECT_EQ(refused("name='d'\ntype='xyz'\n"), "Invalid domain type xyz.\n");
  EXPECT_NE(refused("name='d'\ntype='hvm'\n").find("type=hvm is not supported"), std::string::npos);
  EXPECT_NE(refused("name='d'\ntype='pvh'\n").find("type=pvh is not supported"), std::string::npos);
  // Xen's prefix matching: "" and "h" mean hvm.
  EXPECT_NE(refused("name='d'\ntype=''\n").find("type=hvm"), std::string::npos);
  EXPECT_EQ(refused("name='d'\nvcpus=4\nmaxvcpus=2\n"), "xl: maxvcpus < vcpus\n");
  EXPECT_NE(refused("name='d'\nptwr_mode='fast'\n").find("Invalid ptwr_mode \"fast\""), std::string::npos);
  EXPECT_EQ(refused("name = 'd\n"),
            "d.cfg:1: config parsing error near `'d': lexical error\nFailed to parse config: Invalid argument\n");
}

TEST(XlDomainConfig, TypePvAndPrefixAccepted) {
  EXPECT_TRUE(cfg::resolve_domain("d.cfg", "name='d'\ntype='pv'\n").domain);
  EXPECT_TRUE(cfg::resolve_domain("d.cfg", "name='d'\ntype='p'\n").domain);
}

TEST(XlDomainConfig, UnknownKeysWarnOnceWithTheirLine) {
  auto r = cfg::resolve_domain("d.cfg", "name='d'\nvif = ['bridge=br0']\nvif = []\ndisk = []\n");
  ASSERT_TRUE(r.domain);
  EXPECT_EQ(r.report,
            "d.cfg:2: warning: ignoring unknown key `vif'\n"
            "d.cfg:4: warning: ignoring unknown key `disk'\n");
}

TEST(XlDomainConfig, CommandLineOverridesWinAsXlCreate) {
  const std::string text = cfg::with_overrides("name = 'd'\nmemory = 64", {"memory=128", "extra=\"x y\""});
  EXPECT_EQ(text, "name = 'd'\nmemory = 64\nmemory=128\nextra=\"x y\"\n\n");
  auto r = cfg::resolve_domain("d.cfg", text);
  ASSERT_TRUE(r.domain) << r.report;
  EXPECT_EQ(r.domain->memory_mib, 128);
  EXPECT_EQ(r.domain->cmdline, "x y");
  EXPECT_EQ(cfg::with_overrides("a = 1\n", {}), "a = 1\n");
}

TEST(XlDomainConfig, UuidFormat) {
  EXPECT_TRUE(cfg::is_uuid("01234567-89AB-cdef-0123-456789abcdef"));
  EXPECT_FALSE(cfg::is_uuid("01234567-89ab-cdef-0123-456789abcde"));
  EXPECT_FALSE(cfg::is_uuid("01234567x89ab-cdef-0123-456789abcdef"));
  EXPECT_FALSE(cfg::is_uuid("g1234567-89ab-cdef-0123-456789abcdef"));
}

}  // namespace
