#include "selftest/runner/selftest_runner.h"

#include "kernel/console/console.h"
#include "lib/cmdline.h"
#include "selftest/control/control_selftests.h"
#include "selftest/cpu/cpu_selftests.h"
#include "selftest/events/events_selftests.h"
#include "selftest/memory/memory_selftests.h"
#include "selftest/memory/selftest_ptwr_assist.h"
#include "selftest/selftest.h"

namespace kernel {

bool selftest_run(const char* name) {
  struct Entry {
    const char* name;
    void (*run)(SelfTest&);
  };
  static const Entry kTests[] = {{"hypercall", selftest_hypercall},
                                 {"mmu", selftest_mmu},
                                 {"fault", selftest_fault},
                                 {"ptwrite", selftest_ptwrite},
                                 {"tbuf", selftest_tbuf},
                                 {"unprivileged", selftest_unprivileged},
                                 {"fpu", selftest_fpu},
                                 {"hostile-cpu", selftest_hostile_cpu},
                                 {"hostile-iret-crash", selftest_hostile_iret_crash},
                                 {"hostile-privop-crash", selftest_hostile_privop_crash},
                                 {"hostile-console-ring", selftest_hostile_console_ring},
                                 {"hostile-store-ring", selftest_hostile_store_ring},
                                 {"hostile-guest-frames", selftest_hostile_guest_frames},
                                 {"ioports", selftest_ioports},
                                 {"iomem", selftest_iomem},
                                 {"ptwr-overlap", selftest_ptwr_overlap},
                                 {"ptwr-alias", selftest_ptwr_alias},
                                 {"ptwr-links", selftest_ptwr_links},
                                 {"ptwr-unlink", selftest_ptwr_unlink},
                                 {"linear-pt", selftest_linear_pt},
                                 {"flush-clock", selftest_flush_clock},
                                 {"flush-multi", selftest_flush_multi},
                                 {"emulation-caches", selftest_emulation_caches},
                                 {"emulation-caches-smp", selftest_emulation_caches_smp},
                                 {"domctl", selftest_domctl},
                                 {"domctl-domu", selftest_domctl_domu},
                                 {"cpuinfo", selftest_cpuinfo},
                                 {"domctl-unprivileged", selftest_domctl_unprivileged},
                                 {"domctl-leave-paused", selftest_domctl_leave_paused},
                                 {"domctl-pause-sync", selftest_domctl_pause_sync},
                                 {"xdom-self", selftest_xdom_self},
                                 {"xdom-domu", selftest_xdom_domu},
                                 {"xdom-peer", selftest_xdom_peer},
                                 {"xdom-wait", selftest_xdom_wait},
                                 {"privop", selftest_privop},
                                 {"swint", selftest_swint},
                                 {"msr", selftest_msr},
                                 {"ldt", selftest_ldt},
                                 {"ipi", selftest_ipi},
                                 {"poll", selftest_poll},
                                 {"evtchn-fifo", selftest_evtchn_fifo},
                                 {"vcpus", selftest_vcpus},
                                 {"vcpus-fifo", selftest_vcpus_fifo},
                                 {"vcpus-down-last", selftest_vcpus_down_last},
                                 {"vcpus-flush", selftest_vcpus_flush},
                                 {"debugreg", selftest_debugreg},
                                 {"time-area", selftest_time_area},
                                 {"cpuid", selftest_cpuid},
                                 {"gdt", selftest_gdt},
                                 {"vcpu-areas", selftest_vcpu_areas},
                                 {"lifecycle", selftest_lifecycle},
                                 {"lifecycle-100", selftest_lifecycle_100},
                                 {"lifecycle-domu", selftest_lifecycle_domu},
                                 {"lifecycle-unprivileged", selftest_lifecycle_unprivileged},
                                 {"ptwr-mode", selftest_ptwr_mode},
                                 {"hostile-smp", selftest_hostile_smp},
                                 {"console-filter", selftest_console_filter},
                                 {"console-flood", selftest_console_flood},
                                 {"ptwr-assist", check_ptwr_assist}};
  for (const Entry& entry : kTests) {
    if (!lib::string_equal(name, entry.name)) continue;
    SelfTest test(entry.name);
    entry.run(test);
    test.finish();
    return true;
  }
  for (unsigned i = 0; i < hostile_cpu_group_count; ++i) {
    const HostileGroup& group = hostile_cpu_groups[i];
    if (!lib::string_equal(name, group.name)) continue;
    SelfTest test(group.name);
    group.run(test);
    test.finish();
    return true;
  }
  return false;
}

bool selftest_run_list(const char* names) {
  bool all_known = true;
  char name[32];
  while (*names) {
    size_t length = 0;
    while (names[length] && names[length] != '+') ++length;
    if (length < sizeof(name)) {
      __builtin_memcpy(name, names, length);
      name[length] = 0;
      if (!selftest_run(name)) {
        print("selftest: unknown test '%s'\n", name);
        all_known = false;
      }
    }
    names += length;
    if (*names == '+') ++names;
  }
  return all_known;
}

}  // namespace kernel
