#include "tools/libxenguest/pv_start.h"

namespace xenguest {
namespace {

constexpr uint64_t kDr6Default = 0xffff0ff0u;  // Xen's X86_DR6_DEFAULT
constexpr uint64_t kDr7Default = 0x00000400u;
constexpr uint64_t kInterruptEnable = uint64_t(1) << 9;

// Freestanding-safe copies (the pure code links into no libc on the guest side).
void copy_bounded(char* to, size_t capacity, const char* from) {
  size_t i = 0;
  for (; from && from[i] && i + 1 < capacity; ++i) to[i] = from[i];
  for (; i < capacity; ++i) to[i] = 0;
}

template <typename T>
void zero(T& object) {
  auto* bytes = reinterpret_cast<unsigned char*>(&object);
  for (size_t i = 0; i < sizeof(T); ++i) bytes[i] = 0;
}

}  // namespace

void fill_start_info(const PvLayout& layout, const StartInputs& inputs, start_info_t& out) {
  zero(out);
  copy_bounded(out.magic, sizeof(out.magic), kGuestType);
  out.nr_pages = layout.total_pages;
  out.shared_info = inputs.shared_info_mfn << kPageShift;
  out.pt_base = layout.page_tables.vstart;
  out.nr_pt_frames = layout.page_tables.pages;
  out.mfn_list = layout.p2m.vstart;
  out.flags = 0;  // a domU: not SIF_INITDOMAIN; the ramdisk is mapped, so no SIF_MOD_START_PFN
  out.store_mfn = inputs.p2m[layout.xenstore_pfn];
  out.store_evtchn = inputs.store_port;
  out.console.domU.mfn = inputs.p2m[layout.console_pfn];
  out.console.domU.evtchn = inputs.console_port;
  if (layout.has_ramdisk) {
    out.mod_start = layout.ramdisk.vstart;
    out.mod_len = layout.ramdisk.vend - layout.ramdisk.vstart;
  }
  copy_bounded(reinterpret_cast<char*>(out.cmd_line), MAX_GUEST_CMDLINE, inputs.command_line);
}

void fill_initial_context(const PvLayout& layout, const uint64_t* p2m, uint64_t entry, vcpu_guest_context_t& out) {
  zero(out);
  out.user_regs.rip = entry;
  out.user_regs.rsp = layout.initial_rsp();
  out.user_regs.rsi = layout.start_info_address();
  out.user_regs.rflags = kInterruptEnable;
  out.debugreg[6] = kDr6Default;
  out.debugreg[7] = kDr7Default;
  out.flags = VGCF_in_kernel | VGCF_online;
  out.ctrlreg[3] = xen_pfn_to_cr3(p2m[layout.page_tables.pfn]);
  out.user_regs.ds = FLAT_KERNEL_DS;
  out.user_regs.es = FLAT_KERNEL_DS;
  out.user_regs.fs = FLAT_KERNEL_DS;
  out.user_regs.gs = FLAT_KERNEL_DS;
  out.user_regs.ss = FLAT_KERNEL_SS;
  out.user_regs.cs = FLAT_KERNEL_CS;
  out.kernel_ss = out.user_regs.ss;
  out.kernel_sp = out.user_regs.rsp;
}

void fill_shared_info(shared_info_t& out) {
  zero(out);
  for (auto& vcpu : out.vcpu_info) vcpu.evtchn_upcall_mask = 1;
}

}  // namespace xenguest
