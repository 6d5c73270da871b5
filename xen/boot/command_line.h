#pragma once
// The hypervisor's own command line, in Xen's syntax: space-separated `key=value` or bare
// `flag` words. Unknown words and bad values are reported, never fatal: a typo on the boot
// line must not stop the machine, and the option keeps its default.

#include <stddef.h>
#include <stdint.h>

namespace boot {

// Xen's console levels, in increasing verbosity.
enum class LogLevel : uint8_t { none, error, warning, info, debug, all };
const char* log_level_name(LogLevel level);

// How direct guest page-table writes are handled (see the design notes, section 5).
enum class PtwrMode : uint8_t { emulate, writable, adaptive };

// One dom0_mem amount: `[-]<size>`, `<frac>%` or `<size>+<frac>%`. A size without a unit is in
// KiB (Xen's parse_size_and_unit); `-` means "all available memory but this much".
struct MemoryAmount {
  bool all_but = false;
  uint64_t bytes = 0;
  uint32_t percent = 0;  // of the memory available to dom0, < 100

  // The amount in bytes given `available_bytes`, clamped to [0, available_bytes].
  constexpr uint64_t resolve(uint64_t available_bytes) const {
    // Split so percent (< 100) times the value cannot overflow 64 bits.
    uint64_t fraction = available_bytes / 100 * percent + available_bytes % 100 * percent / 100;
    if (fraction > available_bytes) fraction = available_bytes;
    uint64_t amount = bytes > available_bytes - fraction ? available_bytes : fraction + bytes;
    return all_but ? available_bytes - amount : amount;
  }
  constexpr bool operator==(const MemoryAmount&) const = default;
};

// `dom0_mem=` is a comma-separated list of `<amount>`, `min:<amount>` and `max:<amount>`.
struct Dom0MemorySpec {
  bool has_amount = false, has_min = false, has_max = false;
  MemoryAmount amount, min, max;

  // dom0's size: the amount (or `default_bytes`), raised to min, lowered to max, and never
  // beyond what is available.
  uint64_t resolve(uint64_t available_bytes, uint64_t default_bytes) const;
};

// `dom0_max_vcpus=` as Xen's: `N` (exactly N), `N-` (at least N), `N-M`, `-M` (at most M). dom0
// gets as many vCPUs as there are CPUs online, raised to min, lowered to max, at least one and
// at most `limit` (Xen's MAX_VIRT_CPUS; ours: the vCPUs a domain may have).
struct Dom0VcpusSpec {
  uint32_t min = 1;
  uint32_t max = ~uint32_t(0);

  constexpr uint32_t resolve(uint32_t online_cpus, uint32_t limit) const {
    uint32_t count = online_cpus;
    if (min > count) count = min;
    if (max < count) count = max;
    if (count > limit) count = limit;
    return count ? count : 1;
  }
  constexpr bool operator==(const Dom0VcpusSpec&) const = default;
};

// Deliberate failures that prove the hypervisor's own error paths work (tests only).
//   hypervisor-fault: a page fault inside the hypervisor right after the IDT is up, which must
//   print the registers and a backtrace and halt.
//   stack-overflow: unbounded recursion on the hypervisor's entry stack once its guard page is
//   in place, which must end in a double fault with a report, not a triple fault.
//   syscall-entry-debug: a data breakpoint on the word the syscall entry's first instruction
//   writes, so every guest syscall raises #DB in the entry while it still runs on the guest's
//   rsp: what a `mov %ss` right before a `syscall` does on hardware (XSA-260), which QEMU's TCG
//   does not reproduce. Guests must run on regardless (the #DB has its own stack).
//   ap-fault: once the other CPUs are up, the last one faults inside the hypervisor while the
//   boot CPU spins with interrupts off (only the NMI stops it): the panic stops every other CPU
//   and is printed once.
//   bsp-fault: the same on the boot CPU, with the others parked.
//   ap-hang: the last AP stops as soon as it runs, before it reports in: the boot CPU must give
//   up on it after 100 ms, report it and boot on without it.
//   ipi: once the other CPUs are up, the boot CPU calls a function on each and on all, waited
//   and not, floods 10,000 calls, wakes each AP with the event check, sends flush IPIs, checks
//   the flush filter and has all CPUs increment a counter under one lock, printing each result
//   (test_smp_ipi.py); then the boot goes on. ipi-unlocked: the same with the counter's lock
//   left out (the count must come out short: the test can see a broken lock).
//   lock-order: the boot CPU takes two locks against the lock order; lock-recursion: one lock
//   twice. The checker must panic naming the locks.
enum class HypervisorSelftest : uint8_t {
  none,
  hypervisor_fault,
  stack_overflow,
  syscall_entry_debug,
  ap_fault,
  bsp_fault,
  ap_hang,
  ipi,
  ipi_unlocked,
  lock_order,
  lock_recursion
};

struct CommandLineDiagnostic {
  enum class Kind : uint8_t { unknown_option, bad_value };
  Kind kind = Kind::unknown_option;
  char key[32] = {};    // truncated copy of the offending key
  char value[48] = {};  // truncated copy of its value (bad_value)
  bool value_truncated = false;
  bool has_value = false;         // `key=...` rather than a bare `key`
  const char* message = nullptr;  // what the option takes, e.g. "expected emulate|writable|adaptive"
};

// The console line for a diagnostic, in the spirit of Xen's 'parameter "x" has invalid value':
//   parameter "ptwr" has invalid value "maybe" (expected emulate|writable|adaptive): ignored
//   parameter "noreboot" unknown: ignored
// Returns the length it would have written (as format_to), writing at most capacity - 1.
size_t format_diagnostic(const CommandLineDiagnostic& diagnostic, char* out, size_t capacity);

// Every domU built at boot gets this much memory (`domU_mem=`, Xen size syntax).
constexpr uint64_t kDefaultDomuMemoryBytes = uint64_t(64) << 20;
constexpr uint64_t kMinDomuMemoryBytes = uint64_t(4) << 20;
// The most vCPUs domU_max_vcpus= may ask for (the vCPUs a domain may have, control/create_config.h).
constexpr uint32_t kMaxDomuVcpus = 8;

struct CommandLine {
  static constexpr size_t max_diagnostics = 8;
  static constexpr size_t console_capacity = 64;

  LogLevel log_level = LogLevel::warning;               // Xen's default: loglvl=warning
  LogLevel rate_limited_log_level = LogLevel::warning;  // loglvl=<level>/<rate-limited>
  Dom0MemorySpec dom0_memory;
  uint64_t domu_memory_bytes = kDefaultDomuMemoryBytes;
  Dom0VcpusSpec dom0_vcpus;
  // domU_max_vcpus=<n> (ours, beside domU_mem=): the vCPUs of each domU built at boot, 1 ..
  // kMaxDomuVcpus; vCPU 0 starts, the others wait for the guest's VCPUOP_initialise / up.
  uint32_t domu_vcpus = 1;
  PtwrMode ptwr = PtwrMode::emulate;
  // instruction_cache=0|1 (bhyve's hw.vmm.instruction_cache): the decode cache's
  // write-protected slots (emulate/decode_cache.h); off, every hit compares the bytes.
  bool instruction_cache = true;
  // sched_smp=0|1 (ours): 1 runs guests on every online CPU (per-CPU run queues, placement,
  // migration: sched/scheduler), the default as on Xen; 0 keeps every vCPU on CPU 0.
  bool sched_smp = true;
  // dom0_vcpus_pin (Xen's, a bare word): dom0's vCPU n may run only on CPU n (modulo the CPUs
  // online), its hard affinity; meaningful with sched_smp=1.
  bool dom0_vcpus_pin = false;
  HypervisorSelftest selftest = HypervisorSelftest::none;
  // maxcpus=<n> (Xen's): bring up at most n CPUs, the boot CPU counted; 0 = all there are.
  unsigned max_cpus = 0;
  bool has_console = false;
  char console[console_capacity] = {};  // e.g. "com1,vga"

  CommandLineDiagnostic diagnostics[max_diagnostics];
  size_t diagnostic_count = 0;     // how many were stored
  size_t dropped_diagnostics = 0;  // how many did not fit
};

// Parses at most `length` bytes of `text` (stops early at a NUL). Never fails: problems are
// in out.diagnostics and the affected option keeps its default.
void parse_command_line(const char* text, size_t length, CommandLine& out);

// Xen's rule for multiboot loaders other than GRUB2 (e.g. QEMU): the line starts with the
// image's file name, which is not an option. Returns the text after that first word.
const char* skip_image_name(const char* text);

// Parses one Xen size ("128M", "4G", "0x1000K", "512" = 512 KiB); false if malformed or too
// large. Exposed for the tests and for other size-valued options.
bool parse_size(const char* text, size_t length, uint64_t& bytes);

}  // namespace boot
