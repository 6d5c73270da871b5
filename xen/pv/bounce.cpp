#include "pv/bounce.h"
#include "mm/xen_abi.h"
#include <xen/xen.h>
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "pv/guest_memory.h"

namespace pv {
namespace {
constexpr uint64_t flag_if = 1u << 9, flag_iopl = 3u << 12, flag_tf = 1u << 8, flag_nt = 1u << 14,
                   flag_rf = 1u << 16, flag_vm = 1u << 17, flag_ac = 1u << 18;

bool in_hypervisor_range(uint64_t va) {
  return va >= HYPERVISOR_VIRT_START && va < HYPERVISOR_VIRT_END + 8 * 8;
}
}  // namespace

void load_guest_page_table(const Vcpu& vcpu) {
  cpu::write_cr3(vcpu.active_table_mfn() << 12);
  cpu::write_msr(cpu::msr::gs_base, vcpu.active_gs_base());
}

void toggle_guest_mode(Vcpu& vcpu) {
  vcpu.kernel_mode = !vcpu.kernel_mode;
  load_guest_page_table(vcpu);
}

bool create_bounce_frame(Vcpu& vcpu, TrapFrame& frame, const Bounce& bounce) {
  if (!bounce.handler) return false;
  uint64_t cs = frame.cs;
  uint64_t stack;
  if (vcpu.kernel_mode) {
    stack = frame.rsp;
    cs &= ~3ULL;  // tells the guest the interrupted context was its kernel
  } else {
    toggle_guest_mode(vcpu);
    stack = vcpu.kernel_sp;
  }
  stack &= ~0xfULL;
  if (in_hypervisor_range(stack)) return false;

  vcpu_info_t* info = vcpu.info();
  uint8_t saved_mask = info->evtchn_upcall_mask;
  if (bounce.mask_events) info->evtchn_upcall_mask = 1;
  uint64_t rflags = (frame.rflags & ~(flag_if | flag_iopl)) | (saved_mask ? 0 : flag_if);

  uint64_t words[8];
  unsigned n = 0;
  words[n++] = frame.rcx;
  words[n++] = frame.r11;
  if (bounce.has_error_code) words[n++] = bounce.error_code;
  words[n++] = frame.rip;
  words[n++] = (cs & 0xffff) | (uint64_t(saved_mask) << 32);
  words[n++] = rflags;
  words[n++] = frame.rsp;
  words[n++] = frame.ss;
  stack -= n * 8;
  if (!guest_memory::copy_to(vcpu, stack, words, n * 8)) return false;

  frame.rflags &= ~(flag_ac | flag_vm | flag_rf | flag_nt | flag_tf);
  frame.rflags |= flag_if;  // hardware IF stays on for a PV guest; the upcall mask is virtual
  frame.ss = FLAT_KERNEL_SS;
  frame.rsp = stack;
  frame.cs = FLAT_KERNEL_CS;
  frame.rip = bounce.handler;
  return true;
}
}  // namespace pv
