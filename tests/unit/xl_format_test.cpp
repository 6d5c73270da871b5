// xl's output formats (tools/xl/format.cpp), the daemon answers as rows (model.cpp) and the
// option parsing (options.cpp), against the formats and messages Xen 4.17's xl prints
// (xl_info.c, xl_vcpu.c, xl_utils.c, xl_cmdtable.c; the expected strings are written from
// those printf formats).
#include <gtest/gtest.h>

#include "tools/xl/format.h"
#include "tools/xl/model.h"
#include "tools/xl/options.h"

namespace xl = pvhv::xl;

namespace {

xl::DomainRow dom0() {
  xl::DomainRow d;
  d.domid = 0;
  d.name = "Domain-0";
  d.uuid = "00000000-0000-0000-0000-000000000000";
  d.running = true;
  d.mem_kb = 512 * 1024;
  d.vcpus = d.vcpus_online = 1;
  d.cpu_time_ns = 12'345'678'901;
  return d;
}

TEST(XlFormat, ListHeaderIsXens) {
  EXPECT_EQ(xl::list_header(false), "Name                                        ID   Mem VCPUs\tState\tTime(s)\n");
  EXPECT_EQ(xl::list_header(true),
            "Name                                        ID   Mem VCPUs\tState\tTime(s)"
            "   UUID                            Reason-Code\tSecurity Label\n");
}

TEST(XlFormat, ListRow) {
  // "%-40s %5d %5lu %5d     %c%c%c%c%c%c  %8.1f"
  EXPECT_EQ(xl::list_row(dom0(), false),
            "Domain-0                                     0   512     1     r-----      12.3\n");
  xl::DomainRow d = dom0();
  d.domid = 7;
  d.name = "forktest";
  d.running = false;
  d.blocked = true;
  d.paused = true;
  d.mem_kb = 64 * 1024 + 512;
  d.cpu_time_ns = 0;
  EXPECT_EQ(xl::list_row(d, false),
            "forktest                                     7    64     1     -bp---       0.0\n");
  EXPECT_EQ(xl::list_row(d, true),
            "forktest                                     7    64     1     -bp---       0.0"
            " 00000000-0000-0000-0000-000000000000        -                -\n");
}

TEST(XlFormat, StateLettersAndShutdownReasons) {
  xl::DomainRow d;
  EXPECT_EQ(xl::state_letters(d), "------");
  d.shutdown = true;
  EXPECT_EQ(xl::state_letters(d), "---s--");  // poweroff shows '-'
  d.shutdown_reason = 1;
  EXPECT_EQ(xl::state_letters(d), "---sr-");
  d.shutdown_reason = 4;
  EXPECT_EQ(xl::state_letters(d), "---sw-");
  d.shutdown_reason = 5;
  EXPECT_EQ(xl::state_letters(d), "---sS-");
  d.shutdown_reason = 9;
  EXPECT_EQ(xl::state_letters(d), "---s?-");
  xl::DomainRow crashed;
  crashed.crashed = true;
  crashed.dying = true;
  EXPECT_EQ(xl::state_letters(crashed), "---scd");
  crashed.dying = false;
  crashed.uuid = "00000000-0000-0000-0000-000000000000";
  EXPECT_NE(xl::list_row(crashed, true).find(" 00000000-0000-0000-0000-000000000000        3"), std::string::npos);
}

TEST(XlFormat, CpuTimeRoundsThroughAFloatAsXl) {
  xl::DomainRow d = dom0();
  d.cpu_time_ns = 16'777'217'000'000'000ull;  // not representable in a float
  const float as_float = static_cast<float>(d.cpu_time_ns);
  char expected[32];
  std::snprintf(expected, sizeof expected, "%8.1f\n", as_float / 1e9);
  EXPECT_NE(xl::list_row(d, false).find(expected), std::string::npos);
}

TEST(XlFormat, ANamelessDomainIsNullAsXensXlPrintsIt) {
  xl::DomainRow d = dom0();
  d.domid = 3;
  d.name = "";
  EXPECT_EQ(xl::list_row(d, false),
            "(null)                                       3   512     1     r-----      12.3\n");
}

TEST(XlFormat, VcpuList) {
  EXPECT_EQ(xl::vcpu_list_header(),
            "Name                                ID  VCPU   CPU State   Time(s) Affinity (Hard / Soft)\n");
  xl::VcpuRow v;
  v.name = "Domain-0";
  v.online = v.running = true;
  v.cpu = 0;
  v.cpu_time_ns = 1'500'000'000;
  v.affinity = {0, 1};
  EXPECT_EQ(xl::vcpu_row(v, 2), "Domain-0                             0     0    0   r--       1.5  all / all\n");
  v.online = false;
  v.vcpu = 1;
  v.affinity = {1};
  EXPECT_EQ(xl::vcpu_row(v, 2), "Domain-0                             0     1    -   --p       1.5  1 / all\n");
}

TEST(XlFormat, CpuBitmapAsPrintBitmap) {
  EXPECT_EQ(xl::cpu_bitmap({}, 4), "none");
  EXPECT_EQ(xl::cpu_bitmap({0, 1, 2, 3}, 4), "all");
  EXPECT_EQ(xl::cpu_bitmap({0, 1, 2}, 4), "0-2");
  EXPECT_EQ(xl::cpu_bitmap({1, 2, 3}, 4), "1-3");
  EXPECT_EQ(xl::cpu_bitmap({0, 2, 3, 5}, 8), "0,2-3,5");
  EXPECT_EQ(xl::cpu_bitmap({7}, 4), "none");
}

TEST(XlFormat, InfoLinesAndFieldFilter) {
  const std::string text = xl::info_text({{"host", "pvhv"},
                                          {"nr_cpus", "1"},
                                          {"virt_caps", ""},
                                          {"xen_major", "4"},
                                          {"xen_minor", "17"},
                                          {"xen_commandline", "a=b:c"}});
  EXPECT_EQ(text,
            "host                   : pvhv\n"
            "nr_cpus                : 1\n"
            "virt_caps              :\n"
            "xen_major              : 4\n"
            "xen_minor              : 17\n"
            "xen_commandline        : a=b:c\n");
  // maybe_printf: a prefix selects every matching line, values only.
  EXPECT_EQ(xl::info_filter(text, "xen_major"), "4\n");
  EXPECT_EQ(xl::info_filter(text, "xen_m"), "4\n17\n");
  EXPECT_EQ(xl::info_filter(text, "xen_commandline"), "a=b:c\n");
  EXPECT_EQ(xl::info_filter(text, "virt_caps"), "");
  EXPECT_EQ(xl::info_filter(text, "nope"), "");
}

TEST(XlFormat, InfoFieldsInXlOrder) {
  const xl::Json answer = {{"ok", true}, {"xen_major", 4}, {"host", "h"}, {"cpu_mhz", "2999.999"}, {"nr_cpus", 2}};
  const auto fields = xl::info_fields(answer);
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_EQ(fields[0].first, "host");
  EXPECT_EQ(fields[1].first, "nr_cpus");
  EXPECT_EQ(fields[1].second, "2");
  EXPECT_EQ(fields[2].second, "2999.999");
  EXPECT_EQ(fields[3].first, "xen_major");
  EXPECT_EQ(fields[4], std::make_pair(std::string("xend_config_format"), std::string("4")));
}

TEST(XlFormat, Uptime) {
  EXPECT_EQ(xl::uptime_string(59, false), " 0:00:59");
  EXPECT_EQ(xl::uptime_string(3 * 3600 + 4 * 60 + 5, false), " 3:04:05");
  EXPECT_EQ(xl::uptime_string(86400 + 3600, false), "1 day,  1:00:00");
  EXPECT_EQ(xl::uptime_string(3 * 86400 + 61, true), "3 days,  0:01");
  EXPECT_EQ(xl::uptime_header(), "Name                                ID Uptime\n");
  EXPECT_EQ(xl::uptime_row("Domain-0", 0, 62), "Domain-0                             0  0:01:02\n");
  EXPECT_EQ(xl::uptime_short_row("12:00:00", "d", 3, 3600), " 12:00:00 up  1:00, d (3)\n");
}

TEST(XlFormat, TopTableIsXentopsColumns) {
  EXPECT_EQ(xl::top_header(), "      NAME  STATE   CPU(sec) CPU(%)     MEM(k) MEM(%)  MAXMEM(k) MAXMEM(%) VCPUS\n");
  xl::DomainRow d = dom0();
  d.name = "a-very-long-domain-name";
  d.max_mem_kb = 1024 * 1024;
  EXPECT_EQ(xl::top_row(d, 12.34, 2048 * 1024),
            "a-very-lon -----r         12   12.3     524288   25.0    1048576      50.0     1\n");
}

TEST(XlModel, DomainRowsFromTheListAnswer) {
  const xl::Json answer = xl::Json::parse(R"({"id":1,"ok":true,"domains":[
    {"domid":0,"name":"Domain-0","running":true,"mem_kb":524288,"vcpus":1,"vcpus_online":1,"cpu_time_ns":5},
    {"domid":3,"name":"d","uuid":"u","shutdown":true,"shutdown_reason":1,"mem_kb":"bad","config":{"name":"d"}}]})");
  const auto rows = xl::domain_rows(answer);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "Domain-0");
  EXPECT_TRUE(rows[0].running);
  EXPECT_EQ(rows[1].domid, 3u);
  EXPECT_EQ(rows[1].mem_kb, 0u);  // a field of the wrong type reads as zero
  EXPECT_EQ(xl::state_letters(rows[1]), "---sr-");
  EXPECT_TRUE(xl::domain_rows(xl::Json::parse(R"({"ok":true})")).empty());
  EXPECT_TRUE(xl::domain_rows(xl::Json::parse(R"({"domains":[1,"x",null]})")).size() == 3);
}

TEST(XlModel, LongListingHasDomidThenConfig) {
  const xl::Json answer = xl::Json::parse(
      R"({"ok":true,"domains":[{"domid":3,"name":"d","config":{"name":"d","memory":64}},{"domid":0}]})");
  EXPECT_EQ(xl::long_listing(answer).dump(),
            R"([{"domid":3,"config":{"name":"d","memory":64}},{"domid":0,"config":{}}])");
}

TEST(XlModel, CreateConfig) {
  pvhv::xl::cfg::DomainConfig d;
  d.name = "d";
  d.memory_mib = 64;
  EXPECT_FALSE(xl::create_config(d).contains("ptwr_mode"));
  d.ptwr_mode = "emulate";
  const xl::Json c = xl::create_config(d);
  EXPECT_EQ(c["ptwr_mode"], "emulate");
  EXPECT_EQ(c["memory"], 64);
  EXPECT_EQ(c["on_reboot"], "restart");
}

TEST(XlOptions, PermutedShortAndLongOptions) {
  const auto p = xl::parse_options({"dom", "-w", "--all", "-fFILE", "--", "-x"},
                                   "awf:", {{"all", false, 'a'}, {"wait", false, 'w'}});
  EXPECT_FALSE(p.rejected);
  EXPECT_TRUE(p.has('w'));
  EXPECT_TRUE(p.has('a'));
  EXPECT_EQ(p.value('f'), "FILE");
  EXPECT_EQ(p.operands, (std::vector<std::string>{"dom", "-x"}));
  const auto q =
      xl::parse_options({"-cp", "-f", "x.cfg", "--defconfig=y.cfg", "memory=3"}, "cpf:", {{"defconfig", true, 'f'}});
  EXPECT_TRUE(q.has('c') && q.has('p'));
  EXPECT_EQ(q.value('f'), "y.cfg");
  EXPECT_EQ(q.operands, std::vector<std::string>{"memory=3"});
}

TEST(XlOptions, RefusalsAsDefGetopt) {
  auto refusal = xl::check_options(xl::parse_options({"-z", "d"}, "f", {}), "destroy", 1);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->message, "option `z' not supported.\n");
  EXPECT_EQ(refusal->status, 2);
  refusal = xl::check_options(xl::parse_options({}, "f", {}), "destroy", 1);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->message, "'xl destroy' requires at least 1 argument.\n\n");
  EXPECT_TRUE(refusal->show_help);
  EXPECT_EQ(refusal->status, 2);
  refusal = xl::check_options(xl::parse_options({"a"}, "", {}), "mem-max", 2);
  EXPECT_EQ(refusal->message, "'xl mem-max' requires at least 2 arguments.\n\n");
  refusal = xl::check_options(xl::parse_options({"--help"}, "", {}), "pause", 1);
  EXPECT_EQ(refusal->status, 0);
  EXPECT_TRUE(refusal->show_help);
  refusal = xl::check_options(xl::parse_options({"-h"}, "", {}), "pause", 1);
  EXPECT_EQ(refusal->status, 0);
  refusal = xl::check_options(xl::parse_options({"-f"}, "f:", {}), "create", 0);
  EXPECT_EQ(refusal->message, "option `f' not supported.\n");
  refusal = xl::check_options(xl::parse_options({"--bogus"}, "", {}), "list", 0);
  EXPECT_EQ(refusal->message, "option `' not supported.\n");
  EXPECT_FALSE(xl::check_options(xl::parse_options({"d"}, "", {}), "pause", 1));
}

TEST(XlOptions, MemorySizes) {
  EXPECT_EQ(xl::parse_mem_size_kb("64"), 64 * 1024);
  EXPECT_EQ(xl::parse_mem_size_kb("64m"), 64 * 1024);
  EXPECT_EQ(xl::parse_mem_size_kb("2G"), 2 * 1024 * 1024);
  EXPECT_EQ(xl::parse_mem_size_kb("1t"), 1024LL * 1024 * 1024);
  EXPECT_EQ(xl::parse_mem_size_kb("512k"), 512);
  EXPECT_EQ(xl::parse_mem_size_kb("4096b"), 4);
  EXPECT_EQ(xl::parse_mem_size_kb("64mb"), -1);
  EXPECT_EQ(xl::parse_mem_size_kb("64q"), -1);
}

}  // namespace
