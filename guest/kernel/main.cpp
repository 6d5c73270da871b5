#include "arch/xen.h"
#include "kernel/boot_info.h"
#include "kernel/console.h"

extern "C" [[noreturn]] void kernel_main(start_info_t* start_info, uint64_t boot_rsp) {
  kernel::boot_info_init(start_info, boot_rsp);
  kernel::print("pvguest: hello (%s) nr_pages=%lu pt_base=%lx nr_pt=%lu mod=%lx+%lu rsp=%lx flags=%x cmdline='%s'\n",
                start_info->magic, start_info->nr_pages, start_info->pt_base, start_info->nr_pt_frames,
                start_info->mod_start, start_info->mod_len, boot_rsp, start_info->flags, kernel::boot_info.cmdline);
  xen::shutdown(SHUTDOWN_poweroff);
}
extern "C" void trap_dispatch(void*) {}
