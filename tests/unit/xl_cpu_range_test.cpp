// xl's CPU lists (tools/xl/config/cpu_range.cpp) as Xen 4.17's parse_cpurange reads them, and
// the xl.cfg keys that use them (cpus, cpus_soft), the model's and the formats' parts.
#include "tools/xl/config/cpu_range.h"

#include <gtest/gtest.h>

#include "tools/xl/config/domain_config.h"
#include "tools/xl/format.h"
#include "tools/xl/model.h"

namespace cfg = pvhv::xl::cfg;
namespace xl = pvhv::xl;

namespace {
using Cpus = std::vector<uint32_t>;

Cpus parse(const char* text, uint32_t nr_cpus = 4) {
  std::string error;
  auto cpus = cfg::parse_cpu_range(text, nr_cpus, error);
  EXPECT_TRUE(cpus.has_value()) << text << ": " << error;
  return cpus.value_or(Cpus{});
}

std::string refused(const char* text) {
  std::string error;
  EXPECT_FALSE(cfg::parse_cpu_range(text, 4, error).has_value()) << text;
  return error;
}

TEST(XlCpuRange, Forms) {
  EXPECT_EQ(parse("all"), (Cpus{0, 1, 2, 3}));
  EXPECT_EQ(parse("2-3"), (Cpus{2, 3}));
  EXPECT_EQ(parse("0,2"), (Cpus{0, 2}));
  EXPECT_EQ(parse("1"), (Cpus{1}));
  EXPECT_EQ(parse("all,^1"), (Cpus{0, 2, 3}));
  EXPECT_EQ(parse("0-3,^1-2"), (Cpus{0, 3}));
  EXPECT_EQ(parse("^1"), Cpus{}) << "an exclusion from nothing is nothing";
  EXPECT_EQ(parse("^1,all"), (Cpus{0, 1, 2, 3})) << "left to right";
  EXPECT_EQ(parse("2-2"), (Cpus{2}));
  EXPECT_EQ(parse("0,,3"), (Cpus{0, 3})) << "strtok skips empty items";
  EXPECT_EQ(parse(""), Cpus{});
  EXPECT_EQ(parse("nodes:0"), (Cpus{0, 1, 2, 3})) << "the one node holds every CPU";
  EXPECT_EQ(parse("node:0,^2"), (Cpus{0, 1, 3}));
  EXPECT_EQ(parse("all,^nodes:0"), Cpus{});
  EXPECT_EQ(parse("nodes:1"), Cpus{}) << "a node that does not exist names no CPU";
}

TEST(XlCpuRange, CpusBeyondTheHostAreIgnored) {
  EXPECT_EQ(parse("3-9"), (Cpus{3}));
  EXPECT_EQ(parse("5-6"), Cpus{});
  EXPECT_EQ(parse("0-4294967294", 2), (Cpus{0, 1})) << "a huge range costs only the host's CPUs";
  EXPECT_EQ(parse("all", 0), Cpus{});
}

TEST(XlCpuRange, RefusalsWithXlsMessages) {
  EXPECT_EQ(refused("^all"), "Can't combine \"^\" and \"all\".");
  EXPECT_EQ(refused("^nodes:all"), "Can't combine \"^\" and \"all\".");
  EXPECT_EQ(refused("1-x"), "Invalid pcpu range: 1-x.");
  EXPECT_EQ(refused("3-1"), "Invalid pcpu range: 3-1.") << "a range must not go down";
  EXPECT_EQ(refused("x"), "Invalid pcpu range: x.");
  EXPECT_EQ(refused("1-"), "Invalid pcpu range: 1-.");
  EXPECT_EQ(refused("-1"), "Invalid pcpu range: -1.") << "strtoul of -1 is ULONG_MAX";
  EXPECT_EQ(refused("0,2 "), "Invalid pcpu range: 2 .");
  EXPECT_EQ(refused("^^1"), "Invalid pcpu range: ^1.");
  EXPECT_EQ(refused("18446744073709551615"), "Invalid pcpu range: 18446744073709551615.");
}

TEST(XlCpuRange, ConfigKeys) {
  auto r =
      cfg::resolve_domain("d.cfg", "name='d'\nvcpus=2\nmaxvcpus=3\ncpus='2-3'\ncpus_soft=['0', '1,2', '3', '0']\n");
  ASSERT_TRUE(r.domain) << r.report;
  EXPECT_TRUE(r.domain->cpus.given);
  EXPECT_FALSE(r.domain->cpus.per_vcpu);
  EXPECT_EQ(r.domain->cpus.lists, (std::vector<std::string>{"2-3"}));
  EXPECT_TRUE(r.domain->cpus_soft.per_vcpu);
  EXPECT_EQ(r.domain->cpus_soft.lists, (std::vector<std::string>{"0", "1,2", "3"})) << "beyond maxvcpus: ignored";
  EXPECT_EQ(r.report, "") << "known keys, no warning";
  xl::Json config = xl::create_config(*r.domain);
  EXPECT_EQ(config["cpus"], "2-3");
  EXPECT_EQ(config["cpus_soft"], xl::Json::array({"0", "1,2", "3"}));
  r = cfg::resolve_domain("d.cfg", "name='d'\n");
  ASSERT_TRUE(r.domain);
  EXPECT_FALSE(r.domain->cpus.given);
  EXPECT_FALSE(xl::create_config(*r.domain).contains("cpus"));
}

TEST(XlCpuRange, ConfigRefusals) {
  auto r = cfg::resolve_domain("d.cfg", "name='d'\ncpus='1-x'\n");
  EXPECT_FALSE(r.domain);
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_EQ(r.report, "Invalid pcpu range: 1-x.\n");
  r = cfg::resolve_domain("d.cfg", "name='d'\ncpus_soft=['all', '^all']\nvcpus=2\n");
  EXPECT_FALSE(r.domain);
  EXPECT_EQ(r.report, "Can't combine \"^\" and \"all\".\n");
  r = cfg::resolve_domain("d.cfg", "name='d'\ncpus=[['1']]\n");
  EXPECT_FALSE(r.domain);
  EXPECT_EQ(r.report, "Unable to parse cpus list\n");
}

TEST(XlCpuRange, VcpuListShowsSoftAffinity) {
  xl::VcpuRow v;
  v.name = "d";
  v.domid = 3;
  v.online = v.blocked = true;
  v.affinity = {1};
  v.affinity_soft = {1, 2, 3};
  v.has_soft = true;
  EXPECT_EQ(xl::vcpu_row(v, 4), "d                                    3     0    0   -b-       0.0  1 / 1-3\n");
  v.affinity_soft = {};
  EXPECT_EQ(xl::vcpu_row(v, 4), "d                                    3     0    0   -b-       0.0  1 / none\n");
  xl::VcpuRow parsed = xl::vcpu_row_of(xl::Json{{"affinity", {0, 2}}, {"affinity_soft", {3}}});
  EXPECT_TRUE(parsed.has_soft);
  EXPECT_EQ(parsed.affinity, (Cpus{0, 2}));
  EXPECT_EQ(parsed.affinity_soft, (Cpus{3}));
  EXPECT_FALSE(xl::vcpu_row_of(xl::Json{{"affinity", {0}}}).has_soft) << "an older daemon: soft shown as all";
}

TEST(XlCpuRange, CpupoolList) {
  EXPECT_EQ(xl::cpupool_header(false), "Name               CPUs   Sched     Active   Domain count\n");
  EXPECT_EQ(xl::cpupool_header(true), "Name               CPU list\n");
  std::vector<xl::CpupoolRow> pools = xl::cpupool_rows(xl::Json{
      {"pools", {{{"id", 0}, {"name", "Pool-0"}, {"sched", "credit2"}, {"cpus", {0, 1, 2, 3}}, {"n_dom", 2}}}}});
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(xl::cpupool_row(pools[0], false), "Pool-0               4   credit2       y          2\n");
  EXPECT_EQ(xl::cpupool_row(pools[0], true), "Pool-0             0,1,2,3\n");
  EXPECT_TRUE(xl::cpupool_rows(xl::Json{{"pools", 3}}).empty());
}
}  // namespace
