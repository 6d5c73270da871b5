#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "boot/command_line.h"

using namespace boot;

namespace {

constexpr uint64_t KiB = 1ull << 10, MiB = 1ull << 20, GiB = 1ull << 30;

CommandLine parse(const std::string& text) {
  CommandLine line;
  parse_command_line(text.c_str(), text.size(), line);
  return line;
}

}  // namespace

TEST(BootCommandLine, Defaults) {
  CommandLine line = parse("");
  EXPECT_EQ(line.log_level, LogLevel::warning);
  EXPECT_EQ(line.ptwr, PtwrMode::emulate);
  EXPECT_FALSE(line.dom0_memory.has_amount);
  EXPECT_FALSE(line.has_console);
  EXPECT_EQ(line.diagnostic_count, 0u);
}

TEST(BootCommandLine, ParsesTheAdaptivePtwrMode) {
  CommandLine line = parse("ptwr=adaptive");
  EXPECT_EQ(line.diagnostic_count, 0u);
  EXPECT_EQ(line.ptwr, PtwrMode::adaptive);
}

TEST(BootCommandLine, ParsesKnownOptions) {
  CommandLine line = parse("  console=com1,vga loglvl=all dom0_mem=128M ptwr=writable  ");
  EXPECT_EQ(line.diagnostic_count, 0u);
  EXPECT_EQ(line.log_level, LogLevel::all);
  EXPECT_EQ(line.rate_limited_log_level, LogLevel::all);
  EXPECT_TRUE(line.dom0_memory.has_amount);
  EXPECT_EQ(line.dom0_memory.amount.bytes, 128 * MiB);
  EXPECT_EQ(line.ptwr, PtwrMode::writable);
  EXPECT_TRUE(line.has_console);
  EXPECT_STREQ(line.console, "com1,vga");
}

TEST(BootCommandLine, DomuMemory) {
  EXPECT_EQ(parse("").domu_memory_bytes, kDefaultDomuMemoryBytes);
  CommandLine line = parse("domU_mem=96M");
  EXPECT_EQ(line.diagnostic_count, 0u);
  EXPECT_EQ(line.domu_memory_bytes, 96 * MiB);
  EXPECT_EQ(parse("domU_mem=1G").domu_memory_bytes, 1 * GiB);
  EXPECT_EQ(parse("domU_mem=8192").domu_memory_bytes, 8192 * KiB);  // no unit: KiB, as Xen
}

TEST(BootCommandLine, BadDomuMemoryKeepsTheDefault) {
  for (const char* bad : {"domU_mem=", "domU_mem", "domU_mem=12Q", "domU_mem=1M", "domU_mem=0"}) {
    CommandLine line = parse(bad);
    EXPECT_EQ(line.domu_memory_bytes, kDefaultDomuMemoryBytes) << bad;
    ASSERT_EQ(line.diagnostic_count, 1u) << bad;
    EXPECT_STREQ(line.diagnostics[0].key, "domU_mem");
    EXPECT_EQ(line.diagnostics[0].kind, CommandLineDiagnostic::Kind::bad_value);
  }
}

TEST(BootCommandLine, LogLevelNamesAndRateLimit) {
  const char* names[] = {"none", "error", "warning", "info", "debug", "all"};
  for (int i = 0; i < 6; ++i) {
    CommandLine line = parse(std::string("loglvl=") + names[i]);
    EXPECT_EQ(line.log_level, LogLevel(i)) << names[i];
    EXPECT_STREQ(log_level_name(LogLevel(i)), names[i]);
  }
  CommandLine line = parse("loglvl=info/debug");
  EXPECT_EQ(line.log_level, LogLevel::info);
  EXPECT_EQ(line.rate_limited_log_level, LogLevel::debug);
  line = parse("loglvl=debug/error");  // rate-limited level never below the first
  EXPECT_EQ(line.rate_limited_log_level, LogLevel::debug);
}

TEST(BootCommandLine, BadValuesKeepDefaultsAndAreReported) {
  CommandLine line = parse("loglvl=loud dom0_mem=12Q ptwr=maybe console= loglvl");
  EXPECT_EQ(line.log_level, LogLevel::warning);
  EXPECT_FALSE(line.dom0_memory.has_amount);
  EXPECT_EQ(line.ptwr, PtwrMode::emulate);
  EXPECT_FALSE(line.has_console);
  ASSERT_EQ(line.diagnostic_count, 5u);
  EXPECT_STREQ(line.diagnostics[0].key, "loglvl");
  EXPECT_EQ(line.diagnostics[0].kind, CommandLineDiagnostic::Kind::bad_value);
  EXPECT_STREQ(line.diagnostics[1].key, "dom0_mem");
  EXPECT_STREQ(line.diagnostics[2].key, "ptwr");
  EXPECT_STREQ(line.diagnostics[3].key, "console");
  EXPECT_STREQ(line.diagnostics[4].key, "loglvl");
  EXPECT_NE(line.diagnostics[0].message, nullptr);
}

TEST(BootCommandLine, UnknownOptionsAreReportedNotFatal) {
  CommandLine line = parse("com1=115200,8n1 noreboot loglvl=debug");
  EXPECT_EQ(line.log_level, LogLevel::debug);
  ASSERT_EQ(line.diagnostic_count, 2u);
  EXPECT_EQ(line.diagnostics[0].kind, CommandLineDiagnostic::Kind::unknown_option);
  EXPECT_STREQ(line.diagnostics[0].key, "com1");
  EXPECT_STREQ(line.diagnostics[1].key, "noreboot");
}

TEST(BootCommandLine, DiagnosticsOverflowIsCounted) {
  std::string text;
  for (int i = 0; i < 12; ++i) text += "bogus" + std::to_string(i) + " ";
  text += std::string(100, 'k');
  CommandLine line = parse(text);
  EXPECT_EQ(line.diagnostic_count, CommandLine::max_diagnostics);
  EXPECT_EQ(line.dropped_diagnostics, 13 - CommandLine::max_diagnostics);
  CommandLine single = parse(std::string(100, 'k'));
  EXPECT_EQ(std::strlen(single.diagnostics[0].key), sizeof(single.diagnostics[0].key) - 1);
}

TEST(BootCommandLine, LengthLimitAndNulStopParsing) {
  const char text[] = "loglvl=all\0ptwr=writable";
  CommandLine line;
  parse_command_line(text, sizeof(text), line);
  EXPECT_EQ(line.log_level, LogLevel::all);
  EXPECT_EQ(line.ptwr, PtwrMode::emulate);
  CommandLine cut;
  parse_command_line("ptwr=writable", 8, cut);  // "ptwr=wri"
  EXPECT_EQ(cut.ptwr, PtwrMode::emulate);
  EXPECT_EQ(cut.diagnostic_count, 1u);
}

TEST(BootCommandLine, SizesFollowXenUnits) {
  auto size = [](const char* text) {
    uint64_t bytes = 0;
    EXPECT_TRUE(parse_size(text, std::strlen(text), bytes)) << text;
    return bytes;
  };
  EXPECT_EQ(size("128M"), 128 * MiB);
  EXPECT_EQ(size("128m"), 128 * MiB);
  EXPECT_EQ(size("4G"), 4 * GiB);
  EXPECT_EQ(size("1T"), 1024 * GiB);
  EXPECT_EQ(size("64K"), 64 * KiB);
  EXPECT_EQ(size("100B"), 100u);
  EXPECT_EQ(size("512"), 512 * KiB);  // no unit: KiB
  EXPECT_EQ(size("0x10M"), 16 * MiB);
  EXPECT_EQ(size("010K"), 8 * KiB);  // leading 0: octal, as simple_strtoull
  uint64_t bytes = 0;
  for (const char* bad : {"", "M", "12Q", "99999999999999999999", "20000000000T", "0x", "1MM"})
    EXPECT_FALSE(parse_size(bad, std::strlen(bad), bytes)) << bad;
}

TEST(BootCommandLine, Dom0MemoryVariants) {
  CommandLine line = parse("dom0_mem=1G,min:512M,max:2G");
  const Dom0MemorySpec& spec = line.dom0_memory;
  ASSERT_EQ(line.diagnostic_count, 0u);
  EXPECT_TRUE(spec.has_amount && spec.has_min && spec.has_max);
  EXPECT_EQ(spec.min.bytes, 512 * MiB);
  EXPECT_EQ(spec.max.bytes, 2 * GiB);
  EXPECT_EQ(spec.resolve(16 * GiB, 0), 1 * GiB);
  EXPECT_EQ(spec.resolve(768 * MiB, 0), 768 * MiB);  // never beyond what exists

  line = parse("dom0_mem=-1G");
  EXPECT_TRUE(line.dom0_memory.amount.all_but);
  EXPECT_EQ(line.dom0_memory.resolve(8 * GiB, 0), 7 * GiB);

  line = parse("dom0_mem=25%");
  EXPECT_EQ(line.dom0_memory.amount.percent, 25u);
  EXPECT_EQ(line.dom0_memory.resolve(8 * GiB, 0), 2 * GiB);

  line = parse("dom0_mem=1G+25%");
  EXPECT_EQ(line.dom0_memory.resolve(256 * GiB, 0), 65 * GiB);

  line = parse("dom0_mem=max:1G");
  EXPECT_FALSE(line.dom0_memory.has_amount);
  EXPECT_EQ(line.dom0_memory.resolve(8 * GiB, 4 * GiB), 1 * GiB);  // default clamped

  for (const char* bad : {"dom0_mem=100%", "dom0_mem=1G,", "dom0_mem=min:", "dom0_mem=1G+5", "dom0_mem=5%+1G",
                          "dom0_mem=", "dom0_mem=-", "dom0_mem=+5%", "dom0_mem=-+5%", "dom0_mem=0", "dom0_mem=1K",
                          "dom0_mem=4095B", "dom0_mem=0%", "dom0_mem=max:0", "dom0_mem=64M,max:1K"}) {
    CommandLine rejected = parse(bad);
    EXPECT_EQ(rejected.diagnostic_count, 1u) << bad;
    EXPECT_FALSE(rejected.dom0_memory.has_amount) << bad;
  }
}

TEST(BootCommandLine, ConsoleTooLongIsRejected) {
  CommandLine line = parse("console=" + std::string(64, 'c'));
  EXPECT_FALSE(line.has_console);
  EXPECT_EQ(line.diagnostic_count, 1u);
  line = parse("console=" + std::string(63, 'c'));
  EXPECT_TRUE(line.has_console);
}

TEST(BootCommandLine, SkipsImageName) {
  EXPECT_STREQ(skip_image_name("  /boot/xen.gz console=com1"), "console=com1");
  EXPECT_STREQ(skip_image_name("xen"), "");
  EXPECT_STREQ(skip_image_name(""), "");
}

TEST(BootCommandLine, Selftest) {
  EXPECT_EQ(parse("").selftest, HypervisorSelftest::none);
  EXPECT_EQ(parse("selftest=hypervisor-fault").selftest, HypervisorSelftest::hypervisor_fault);
  EXPECT_EQ(parse("selftest=stack-overflow").selftest, HypervisorSelftest::stack_overflow);
  EXPECT_EQ(parse("selftest=syscall-entry-debug").selftest, HypervisorSelftest::syscall_entry_debug);
  EXPECT_EQ(parse("selftest=ap-fault").selftest, HypervisorSelftest::ap_fault);
  EXPECT_EQ(parse("selftest=bsp-fault").selftest, HypervisorSelftest::bsp_fault);
  EXPECT_EQ(parse("selftest=ap-hang").selftest, HypervisorSelftest::ap_hang);
  EXPECT_EQ(parse("selftest=ipi").selftest, HypervisorSelftest::ipi);
  EXPECT_EQ(parse("selftest=ipi-unlocked").selftest, HypervisorSelftest::ipi_unlocked);
  EXPECT_EQ(parse("selftest=lock-order").selftest, HypervisorSelftest::lock_order);
  EXPECT_EQ(parse("selftest=lock-recursion").selftest, HypervisorSelftest::lock_recursion);
  CommandLine bad = parse("selftest=reboot-the-moon");
  EXPECT_EQ(bad.selftest, HypervisorSelftest::none);
  ASSERT_EQ(bad.diagnostic_count, 1u);
  EXPECT_EQ(bad.diagnostics[0].kind, CommandLineDiagnostic::Kind::bad_value);
  EXPECT_STREQ(bad.diagnostics[0].key, "selftest");
}

// maxcpus=<n> as Xen's: at least one CPU; anything else is a warning and all CPUs come up.
TEST(BootCommandLine, MaxCpus) {
  EXPECT_EQ(parse("").max_cpus, 0u);
  EXPECT_EQ(parse("maxcpus=1").max_cpus, 1u);
  EXPECT_EQ(parse("maxcpus=2 loglvl=info").max_cpus, 2u);
  EXPECT_EQ(parse("maxcpus=0x10").max_cpus, 16u);
  for (const char* bad : {"maxcpus", "maxcpus=", "maxcpus=0", "maxcpus=two", "maxcpus=2x", "maxcpus=-1",
                          "maxcpus=99999999999999999999999"}) {
    CommandLine line = parse(bad);
    EXPECT_EQ(line.max_cpus, 0u) << bad;
    ASSERT_EQ(line.diagnostic_count, 1u) << bad;
    EXPECT_EQ(line.diagnostics[0].kind, CommandLineDiagnostic::Kind::bad_value) << bad;
    EXPECT_STREQ(line.diagnostics[0].key, "maxcpus") << bad;
  }
}

// dom0_max_vcpus= in Xen's four forms; dom0 then gets the online CPUs clamped to them and to
// the vCPUs a domain may have, never none.
TEST(BootCommandLine, Dom0MaxVcpus) {
  EXPECT_EQ(parse("").dom0_vcpus, (Dom0VcpusSpec{1, ~0u}));
  EXPECT_EQ(parse("dom0_max_vcpus=4").dom0_vcpus, (Dom0VcpusSpec{4, 4}));
  EXPECT_EQ(parse("dom0_max_vcpus=2-").dom0_vcpus, (Dom0VcpusSpec{2, ~0u}));
  EXPECT_EQ(parse("dom0_max_vcpus=2-6").dom0_vcpus, (Dom0VcpusSpec{2, 6}));
  EXPECT_EQ(parse("dom0_max_vcpus=-3").dom0_vcpus, (Dom0VcpusSpec{1, 3}));
  EXPECT_EQ(parse("dom0_max_vcpus=0").dom0_vcpus, (Dom0VcpusSpec{1, 1})) << "N of 0 is 1, as Xen";
  EXPECT_EQ(parse("dom0_max_vcpus=0x2").dom0_vcpus, (Dom0VcpusSpec{2, 2}));
  for (const char* bad : {"dom0_max_vcpus", "dom0_max_vcpus=", "dom0_max_vcpus=two", "dom0_max_vcpus=2x",
                          "dom0_max_vcpus=1-2-3", "dom0_max_vcpus=-", "dom0_max_vcpus=99999999999"}) {
    CommandLine line = parse(bad);
    EXPECT_EQ(line.dom0_vcpus, (Dom0VcpusSpec{1, ~0u})) << bad;
    ASSERT_EQ(line.diagnostic_count, 1u) << bad;
    EXPECT_STREQ(line.diagnostics[0].key, "dom0_max_vcpus") << bad;
  }
  EXPECT_EQ((Dom0VcpusSpec{1, ~0u}).resolve(4, 8), 4u) << "as many as the CPUs online";
  EXPECT_EQ((Dom0VcpusSpec{1, ~0u}).resolve(1, 8), 1u);
  EXPECT_EQ((Dom0VcpusSpec{4, 4}).resolve(1, 8), 4u) << "more vCPUs than CPUs";
  EXPECT_EQ((Dom0VcpusSpec{1, 2}).resolve(4, 8), 2u);
  EXPECT_EQ((Dom0VcpusSpec{16, 16}).resolve(4, 8), 8u) << "never beyond what a domain may have";
  EXPECT_EQ((Dom0VcpusSpec{1, 0}).resolve(4, 8), 1u) << "never none";
}

TEST(BootCommandLine, DomuMaxVcpus) {
  EXPECT_EQ(parse("").domu_vcpus, 1u);
  EXPECT_EQ(parse("domU_max_vcpus=4").domu_vcpus, 4u);
  EXPECT_EQ(parse("domU_max_vcpus=8").domu_vcpus, 8u);
  for (const char* bad : {"domU_max_vcpus", "domU_max_vcpus=0", "domU_max_vcpus=9", "domU_max_vcpus=2-4"}) {
    CommandLine line = parse(bad);
    EXPECT_EQ(line.domu_vcpus, 1u) << bad;
    ASSERT_EQ(line.diagnostic_count, 1u) << bad;
    EXPECT_STREQ(line.diagnostics[0].key, "domU_max_vcpus") << bad;
  }
}

// An amount of at least a page, or relative to what is there, is fine; min: may be 0.
TEST(BootCommandLine, Dom0MemoryOfAtLeastAPage) {
  for (const char* good :
       {"dom0_mem=4K", "dom0_mem=4096B", "dom0_mem=-0", "dom0_mem=1%", "dom0_mem=min:0", "dom0_mem=0+5%"}) {
    CommandLine line = parse(good);
    EXPECT_EQ(line.diagnostic_count, 0u) << good;
  }
}

// What the console says: the parameter, the value given and what it takes, as Xen's
// 'parameter "x" has invalid value "y"' lines.
TEST(BootCommandLine, DiagnosticsNameTheValue) {
  CommandLine line =
      parse("ptwr=maybe loglvl=loud dom0_mem=12Q domU_mem=1M noreboot ptwr console=" + std::string(70, 'c'));
  ASSERT_EQ(line.diagnostic_count, 7u);
  auto text = [&](size_t i) {
    char out[160];
    size_t length = format_diagnostic(line.diagnostics[i], out, sizeof(out));
    EXPECT_LT(length, sizeof(out));
    return std::string(out);
  };
  EXPECT_EQ(text(0), "parameter \"ptwr\" has invalid value \"maybe\" (expected emulate|writable|adaptive): ignored");
  EXPECT_EQ(text(1),
            "parameter \"loglvl\" has invalid value \"loud\" "
            "(expected none|error|warning|info|debug|all[/level]): ignored");
  EXPECT_NE(text(2).find("\"dom0_mem\" has invalid value \"12Q\""), std::string::npos);
  EXPECT_NE(text(3).find("\"domU_mem\" has invalid value \"1M\" (expected a size of at least 4M"), std::string::npos);
  EXPECT_EQ(text(4), "parameter \"noreboot\" unknown: ignored");
  EXPECT_EQ(text(5), "parameter \"ptwr\" needs a value (expected emulate|writable|adaptive): ignored");
  EXPECT_NE(text(6).find("has invalid value \"" + std::string(47, 'c') + "...\""), std::string::npos);
  char small[16];
  EXPECT_GT(format_diagnostic(line.diagnostics[0], small, sizeof(small)), sizeof(small));
  EXPECT_EQ(std::strlen(small), sizeof(small) - 1);
}

TEST(BootCommandLine, InstructionCacheSwitch) {
  EXPECT_TRUE(parse("").instruction_cache);
  EXPECT_FALSE(parse("instruction_cache=0").instruction_cache);
  EXPECT_TRUE(parse("instruction_cache=0 instruction_cache=1").instruction_cache);
  CommandLine line = parse("instruction_cache=yes instruction_cache");
  EXPECT_TRUE(line.instruction_cache);
  ASSERT_EQ(line.diagnostic_count, 2u);
  EXPECT_STREQ(line.diagnostics[0].key, "instruction_cache");
  EXPECT_EQ(line.diagnostics[0].kind, CommandLineDiagnostic::Kind::bad_value);
}
