#include "pv/software_interrupt.h"
#include "abi/xen_abi.h"
#include <xen/xen.h>
#include "arch/x86/cpu/rflags.h"
#include "domain/domain.h"
#include "pv/instruction_fetch.h"
#include "pv/bounce.h"

namespace software_interrupt {
namespace {
constexpr unsigned vector_general_protection = 13;
constexpr uint8_t trap_masks_events = 4;  // TI_GET_IF

void bounce_or_crash(Vcpu& vcpu, TrapFrame& frame, const pv::Bounce& bounce, const char* what) {
  if (!pv::create_bounce_frame(vcpu, frame, bounce)) domains::crash(*vcpu.domain, what);
}

// `int $n` refused by the hypervisor's IDT: the guest's trap table decides (Xen's
// do_general_protection and pv_inject_sw_interrupt).
bool deliver_interrupt(Vcpu& vcpu, TrapFrame& frame, const instruction_fetch::FetchedInstruction& fetched) {
  const unsigned n = vector(fetched.bytes, fetched.count, uint32_t(frame.error_code));
  const trap_info_t& trap = vcpu.trap_table[n];
  if (!delivered(n, trap.flags, trap.address != 0, vcpu.kernel_mode)) {
    frame.error_code = refusal_error_code(n);  // the #GP is the guest's
    return false;
  }
  frame.rip += instruction_length;  // a trap: the handler returns past the instruction
  bounce_or_crash(vcpu, frame, pv::Bounce{trap.address, false, 0, bool(trap.flags & trap_masks_events)},
                  "software interrupt with no handler");
  return true;
}

// What Xen's sysenter entry hands the guest: the CPU's sysenter saves no return address or
// stack, so the frame says rip 0, rsp 0, a null user code selector and the user stack
// selector; IF set as the guest had it (sysenter itself clears IF, RF and VM). The callback
// registered with CALLBACKTYPE_sysenter gets it, its own flag saying whether events are
// masked; with none registered, the guest's #GP handler gets it with error code 0.
void deliver_sysenter(Vcpu& vcpu, TrapFrame& frame) {
  frame.rip = 0;
  frame.cs = 3;
  frame.rsp = 0;
  frame.ss = FLAT_USER_SS;
  frame.rflags = (frame.rflags & ~(rflags::resume | rflags::virtual_8086)) | rflags::interrupt;
  if (vcpu.sysenter_callback) {
    bounce_or_crash(vcpu, frame, pv::Bounce{vcpu.sysenter_callback, false, 0, vcpu.sysenter_disables_events},
                    "cannot deliver sysenter");
    return;
  }
  const trap_info_t& gp = vcpu.trap_table[vector_general_protection];
  bounce_or_crash(vcpu, frame, pv::Bounce{gp.address, true, 0, bool(gp.flags & trap_masks_events)},
                  "sysenter with no callback and no #GP handler");
}
}  // namespace

bool deliver(Vcpu& vcpu, TrapFrame& frame) {
  const uint32_t error_code = uint32_t(frame.error_code);
  if (error_code != 0 && !names_idt_entry(error_code)) return false;
  instruction_fetch::FetchedInstruction fetched;
  if (!instruction_fetch::fetch(vcpu, frame.rip, fetched)) fetched.count = 0;
  if (names_idt_entry(error_code)) return deliver_interrupt(vcpu, frame, fetched);
  if (!is_sysenter(fetched.bytes, fetched.count)) return false;
  deliver_sysenter(vcpu, frame);
  return true;
}
}  // namespace software_interrupt
