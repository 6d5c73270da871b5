// fuzz=<seed>: the fuzzing domain's campaign. Runs operations start..start+ops-1 of the seed
// (fuzz/generator/fuzz_model.h generates them), prints progress every fuzz_progress operations, audits
// every fuzz_audit operations (dom0: the hypervisor's audit sysctl; a domU asks dom0's
// companion through the mailbox page), checks its own tables at each audit, tears down and
// prints "fuzz: done ..." with a verdict line, then returns to the normal boot.
#define __XEN_TOOLS__ 1
#include "fuzz/fuzz.h"

#include "arch/xen.h"
#include "kernel/console/console.h"
#include "fuzz/fuzz_internal.h"
#include "fuzz/fuzz_mailbox.h"
#include "kernel/measurement/pvhv.h"
#include "kernel/events/time.h"
#include "lib/cmdline.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel {

FuzzMailbox fuzz_mailbox;

namespace fuzz {

Campaign campaign;

namespace {

constexpr uint64_t kAuditWaitNs = 5'000'000'000ull;  // how long a domU waits for dom0's audit
constexpr uint64_t kSlowOperationNs = 200'000'000ull;

// The log's text, after the checks' frame sets in the campaign's work pages.
constexpr size_t kDescriptionBytes = 8192;
char* description_buffer() { return reinterpret_cast<char*>(campaign.work + campaign.work_size - kDescriptionBytes); }

uint64_t c_buffer_va() { return campaign.pool.buffer_va; }

// A description is several lines; print() takes at most 512 bytes at a time.
void print_description(const char* prefix, uint64_t n, const char* text) {
  print("%s %lu: ", prefix, n);
  while (*text) {
    size_t length = 0;
    while (text[length] && text[length] != '\n' && length < 400) ++length;
    console_write(text, length);
    console_write("\n", 1);
    text += length;
    if (*text == '\n') ++text;
  }
}

// dom0 audits itself; a domU asks the companion and waits (yielding) for its answer.
long audit_now(Campaign& c, uint64_t op) {
  settle();
  if (c.pool.privileged) return sys_pvhv_audit();
  if (c.stats.audits_missed > 2) return -1;  // no companion: stop asking
  uint64_t request = fuzz_mailbox.audit_request + 1;
  fuzz_mailbox.audit_request_op = op;
  __atomic_store_n(&fuzz_mailbox.audit_request, request, __ATOMIC_SEQ_CST);
  uint64_t deadline = system_time_ns() + kAuditWaitNs;
  while (fuzz_mailbox.audit_done != request) {
    if (system_time_ns() > deadline) {
      ++c.stats.audits_missed;
      print("fuzz: audit after op %lu: no answer from dom0's companion\n", op);
      return -1;
    }
    xen::sched_op(SCHEDOP_yield, nullptr);
  }
  return fuzz_mailbox.audit_result;
}

void audit(Campaign& c, uint64_t op) {
  check_kernel_tables(c, op, ~0u);
  long mismatches = audit_now(c, op);
  uint64_t violations = check_tables(c, op);
  if (mismatches < 0) {
    print("fuzz: audit after op %lu: not available (%ld), own check: %lu violations\n", op, mismatches, violations);
    return;
  }
  ++c.stats.audits;
  c.stats.audit_mismatches += uint64_t(mismatches);
  print("fuzz: audit after op %lu: %ld frames disagree, own check: %lu violations\n", op, mismatches, violations);
}

uint64_t start_ns = 0;

void progress(const Campaign& c, uint64_t op) {
  const Stats& s = c.stats;
  print(
      "fuzz: seed 0x%lx op %lu: %lu ms, %lu ops, %lu calls (%lu errors), %lu stores (%lu faulted, %lu skipped), "
      "%lu loads (%lu faulted), %lu irets (%lu faulted), %lu traps caught, %lu continued, %lu audits, "
      "%lu mismatches, %lu violations, %lu protected changes\n",
      c.options.seed, op, (system_time_ns() - start_ns) / 1000000, s.ops, s.calls, s.call_errors, s.stores,
      s.store_faults, s.stores_skipped, s.loads, s.load_faults, s.irets, s.iret_faults, s.faults, s.continued, s.audits,
      s.audit_mismatches, s.oracle_violations, s.protected_changes);
}

// Protected entries must be as they were: say which changed (the first few), and put the
// kernel's own back so the campaign can go on and find more.
void check_protected(Campaign& c, uint64_t n) {
  for (unsigned i = 0; i < c.pool.protected_slot_count; ++i) {
    lib::fuzz::ProtectedSlot& slot = c.pool.protected_slots[i];
    uint64_t now = *c.protected_slot_va[i];
    if (now == slot.value) continue;
    // The hypervisor sets accessed/dirty bits itself.
    constexpr uint64_t kHardwareBits = (1u << 5) | (1u << 6);
    if ((now & ~kHardwareBits) == (slot.value & ~kHardwareBits)) {
      slot.value = now;
      continue;
    }
    if (c.stats.protected_changes++ < 20)
      print("fuzz: op %lu changed a protected entry: machine address %lx (level %u) %lx -> %lx\n", n,
            slot.machine_address, slot.level, slot.value, now);
    pv::ops.raw_mmu_update(slot.machine_address, slot.value);
    settle();
  }
}

// fuzz_step_op/fuzz_step_mask: keep only the chosen steps of a store sequence, or the chosen
// entries of a multicall (the others become no-ops: op 0xffff... is -ENOSYS).
void cut_down(Op& op, uint64_t mask) {
  if (op.kind == lib::fuzz::OpKind::ptwrite || op.kind == lib::fuzz::OpKind::touch) {
    unsigned kept = 0;
    for (unsigned i = 0; i < op.step_count; ++i)
      if ((mask >> i) & 1) op.steps[kept++] = op.steps[i];
    op.step_count = kept;
  } else if (op.kind == lib::fuzz::OpKind::multicall && op.call.args[0] >= c_buffer_va() &&
             op.call.args[0] < c_buffer_va() + campaign.pool.buffer_size) {
    auto* entries =
        reinterpret_cast<pv::multicall_entry_like*>(campaign.pool.buffer + (op.call.args[0] - c_buffer_va()));
    for (uint64_t i = 0; i < op.call.args[1] && i < 64; ++i)
      if (!((mask >> i) & 1)) entries[i].op = ~0ull;
  }
  print("fuzz: operation cut down to steps 0x%lx\n", mask);
}

void run_operation(Campaign& c, uint64_t n) {
  Op op;
  lib::fuzz::generate(c.pool, c.options, n, op);
  bool logged = n >= c.options.log_from && n <= c.options.log_to;
  if (logged) {
    lib::fuzz::describe(c.pool, op, description_buffer(), kDescriptionBytes);
    print_description("fuzz: op", n, description_buffer());
  }
  // The generator keeps the rules; the check is the second opinion before anything runs.
  if (const char* problem = lib::fuzz::check_rules(c.pool, op); *problem) {
    if (c.stats.rejected++ < 10) {
      lib::fuzz::describe(c.pool, op, description_buffer(), kDescriptionBytes);
      print("fuzz: op %lu refused by the rule check (%s)\n", n, problem);
      print_description("fuzz: refused op", n, description_buffer());
    }
    return;
  }
  if (n == c.options.step_op) cut_down(op, c.options.step_mask);
  uint64_t before = system_time_ns();
  execute(c, op);
  uint64_t took = system_time_ns() - before;
  ++c.stats.ops;
  // An operation that holds the vCPU this long is worth a look (a loop in the hypervisor, a
  // timer that did not fire): name it.
  if (took > kSlowOperationNs && c.stats.slow_ops++ < 20) {
    lib::fuzz::describe(c.pool, op, description_buffer(), kDescriptionBytes);
    print("fuzz: op %lu took %lu ms\n", n, took / 1000000);
    print_description("fuzz: slow op", n, description_buffer());
  }
  check_protected(c, n);
  check_kernel_tables(c, n, 256);
  if (logged) print("fuzz: op %lu: done\n", n);
}

}  // namespace
}  // namespace fuzz

void fuzz_run_if_requested() {
  using namespace fuzz;
  char value[24];
  if (!lib::cmdline_value(boot_info.cmdline, "fuzz", value, sizeof(value))) return;
  Campaign& c = campaign;
  char error[128];
  if (!lib::fuzz::parse_options(boot_info.cmdline, c.options, error, sizeof(error))) {
    print("fuzz: bad options: %s\n", error);
    print("fuzz: result: failed (bad options)\n");
    return;
  }
  // Several vCPUs: the hv_frames class checks the frames it retyped against snapshots taken
  // within its operation, which the other vCPUs' pins and entries would make wrong: left out.
  if (c.options.vcpus > 1) c.options.skip |= 1ull << lib::fuzz::kHvFrames;
  const Options& options = c.options;
  print("fuzz: seed 0x%lx ops %lu-%lu progress %lu audit %lu skip 0x%lx only 0x%lx vcpus %lu\n", options.seed,
        options.start, options.start + options.ops - 1, options.progress, options.audit_every, options.skip,
        options.only, options.vcpus);
  if (!smp_start(c)) {
    print("fuzz: result: failed (vCPUs)\n");
    return;
  }
  setup(c);
  c.pool.vcpus = smp_vcpus();
  smp_prepare(c);
  snapshot_kernel_tables(c);
  fuzz_mailbox.seed = options.seed;
  fuzz_mailbox.op = options.start;
  fuzz_mailbox.state = FuzzMailbox::kRunning;
  __atomic_store_n(&fuzz_mailbox.magic, FuzzMailbox::kMagic, __ATOMIC_SEQ_CST);
  start_ns = system_time_ns();
  uint64_t end = options.start + options.ops;
  // The other vCPUs' segments: from one barrier (at each audit) to the next.
  const bool smp = smp_vcpus() > 1;
  const uint64_t segment = options.audit_every ? options.audit_every : options.ops;
  for (uint64_t n = options.start; n < end; ++n) {
    if (smp && (n - options.start) % segment == 0) smp_post(n, n + segment <= end ? segment : end - n);
    run_operation(c, n);
    fuzz_mailbox.op = n + 1;
    uint64_t done = n + 1 - options.start;
    if (smp && (done % segment == 0 || n + 1 == end)) smp_barrier(c, n);
    if (options.audit_every && done % options.audit_every == 0 && n >= options.audit_from) audit(c, n);
    if (options.progress && done % options.progress == 0) progress(c, n);
  }
  progress(c, end - 1);
  audit(c, end - 1);
  uint64_t left = teardown(c);
  long final_mismatches = c.pool.privileged ? sys_pvhv_audit() : 0;
  if (final_mismatches > 0) c.stats.audit_mismatches += uint64_t(final_mismatches);
  fuzz_mailbox.state = FuzzMailbox::kDone;
  uint64_t seconds_ms = (system_time_ns() - start_ns) / 1000000;
  const Stats& s = c.stats;
  print(
      "fuzz: done seed 0x%lx ops %lu-%lu: %lu ran, %lu refused, %lu audits, %lu mismatches, %lu violations, "
      "%lu protected changes, %lu frames left typed, %lu ms\n",
      options.seed, options.start, end - 1, s.ops, s.rejected, s.audits, s.audit_mismatches, s.oracle_violations,
      s.protected_changes, left, seconds_ms);
  print(
      "fuzz: hv_frames: %lu retypings of frames the hypervisor writes took, %lu checks after its writes; destroy: "
      "%lu domains created, %lu destroyed, %lu calls racing a destroy, %lu calls for destroyed domains, %lu ids "
      "created again\n",
      s.hv_typed, s.hv_compared, s.domains_created, s.destroys, s.racing_calls, s.dead_calls, s.recreations);
  smp_report(c);
  RacerStats racers = smp_totals();
  bool passed = s.rejected == 0 && s.audit_mismatches == 0 && s.oracle_violations == 0 && s.protected_changes == 0 &&
                left == 0 && racers.illegal == 0 && racers.rejected == 0 && s.barriers_missed == 0;
  print("fuzz: result: %s\n", passed ? "passed" : "failed");
}

}  // namespace kernel
