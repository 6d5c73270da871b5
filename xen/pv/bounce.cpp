#include "pv/bounce.h"
#include "abi/xen_abi.h"
#include <xen/xen.h>
#include "arch/x86/cpu/rflags.h"
#include "domain/domain.h"
#include "domain/guest_mode.h"
#include "domain/guest_memory.h"

namespace pv {
bool create_bounce_frame(Vcpu& vcpu, TrapFrame& frame, const Bounce& bounce) {
  if (!bounce.handler) return false;
  uint64_t cs = frame.cs;
  uint64_t stack;
  if (vcpu.kernel_mode) {
    stack = frame.rsp;
    cs &= ~3ULL;  // tells the guest the interrupted context was its kernel
  } else {
    guest_mode::toggle_inline(vcpu);
    stack = vcpu.kernel_sp;
  }
  stack &= ~0xfULL;  // a stack in the hypervisor's range, or one that wraps, fails in copy_to

  vcpu_info_t* info = vcpu.info();
  uint8_t saved_mask = info->evtchn_upcall_mask;
  if (bounce.mask_events) info->evtchn_upcall_mask = 1;
  uint64_t saved_flags = (frame.rflags & ~(rflags::interrupt | rflags::iopl)) | (saved_mask ? 0 : rflags::interrupt);
  // With architectural IOPL the frame carries the virtual IOPL, which the guest's iret
  // gives back (Xen's create_bounce_frame); under the classic ABI the field reads 0.
  if (vcpu.domain->vm_assist & (1ul << VMASST_TYPE_architectural_iopl)) saved_flags |= uint64_t(vcpu.iopl) << 12;

  uint64_t words[8];
  unsigned n = 0;
  words[n++] = frame.rcx;
  words[n++] = frame.r11;
  if (bounce.has_error_code) words[n++] = bounce.error_code;
  words[n++] = frame.rip;
  words[n++] = (cs & 0xffff) | (uint64_t(saved_mask) << 32);
  words[n++] = saved_flags;
  words[n++] = frame.rsp;
  words[n++] = frame.ss;
  stack -= n * 8;
  if (!guest_memory::copy_to(vcpu, stack, words, n * 8)) return false;

  frame.rflags &=
      ~(rflags::alignment_check | rflags::virtual_8086 | rflags::resume | rflags::nested_task | rflags::trap);
  frame.rflags |= rflags::interrupt;  // hardware IF stays on for a PV guest; the upcall mask is virtual
  frame.ss = FLAT_KERNEL_SS;
  frame.rsp = stack;
  frame.cs = FLAT_KERNEL_CS;
  frame.rip = bounce.handler;
  return true;
}
}  // namespace pv
