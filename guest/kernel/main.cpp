// Start of day: from Xen's entry state to the first user process.
#include "pv-kernel-patches/callbacks.h"
#include "pv-kernel-patches/traps.h"
#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "kernel/console/console.h"
#include "kernel/memory/direct_map.h"
#include "fuzz/fuzz.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/console/panic.h"
#include "kernel/process/process.h"
#include "relay/relay.h"
#include "selftest/runner/selftest_runner.h"
#include "kernel/measurement/trace_capture.h"
#include "xenbus/xenbus.h"
#include "pv-kernel-patches/shared_info.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"
#include "lib/cmdline.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel {
namespace {

void choose_pte_mode() {
  char value[16];
  if (!lib::cmdline_value(boot_info.cmdline, "pte", value, sizeof(value))) return;
  pv::PteMode mode;
  if (!pv::parse_pte_mode(value, mode)) {
    print("pv: unknown pte=%s, using hypercall\n", value);
    return;
  }
  pv::ops.set_mode(mode);
}

void print_banner() {
  const start_info_t* si = boot_info.start_info;
  print("pvguest: booting on %s, %lu pages, cmdline '%s'\n", si->magic, si->nr_pages, boot_info.cmdline);
  print("pvguest: pt_base %lx (%lu frames), initrd %p (%lu bytes), first free pfn %lx\n", si->pt_base, si->nr_pt_frames,
        boot_info.initrd, boot_info.initrd_size, boot_info.first_free_pfn.value);
}

void print_time() {
  uint64_t wall = wallclock_ns();
  print("time: system %lu ns, wallclock %lu.%09lu\n", system_time_ns(), wall / 1000000000, wall % 1000000000);
}

void run_selftest() {
  char names[96];
  if (!lib::cmdline_value(boot_info.cmdline, "selftest", names, sizeof(names))) return;
  selftest_run_list(names);
}

}  // namespace
}  // namespace kernel

extern "C" [[noreturn]] void kernel_main(start_info_t* start_info, uint64_t boot_rsp) {
  using namespace kernel;
  boot_info_init(start_info, boot_rsp);
  console_init();
  print_banner();
  choose_pte_mode();
  print("pv: page-table updates by %s\n", pv::pte_mode_name(pv::ops.mode()));

  pv::traps_install();
  pv::callbacks_install();
  pv::vm_assists_install();
  shared_info_map();
  // The time in shared_info runs from here on: a full console ring can be waited for.
  console_set_clock(system_time_ns);
  pv::ops.disable_events();  // the kernel runs with events masked except while blocked

  page_allocator.init(boot_info.first_free_pfn, boot_info.nr_pages);
  direct_map_extend();
  print("pv: %lu page-table entries written with %lu hypercalls\n", pv::ops.entries_written(),
        pv::ops.hypercalls_issued());
  write_protect_kernel_text();

  // Capture starts before the timer check, so a trace also shows the vCPU blocking and waking.
  trace_capture::start_if_requested();
  timer_init();
  print_time();
  timer_boot_check();
  xenbus_init();  // a domU with a store: answers come as events, boot goes on

  run_selftest();
  fuzz_companion_run_if_requested();
  fuzz_run_if_requested();
  relay::run_if_requested();   // relay=com2: serves the host until it says SHUTDOWN
  xenbus_wait_if_requested();  // xenbus=wait: until the store asks for a shutdown

  char init_path[64] = "/init";
  lib::cmdline_value(boot_info.cmdline, "init", init_path, sizeof(init_path));
  process_run_init(init_path);
}
