#include "kernel/process/software_interrupts.h"
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/console/console.h"
#include "lib/linux_abi.h"
#include <xen/physdev.h>

namespace kernel {
namespace {
constexpr uint64_t kIoplMask = 3ull << 12;
bool architectural_iopl = false;
}  // namespace

void software_interrupt_arrived(TrapFrame& frame) { frame.rax = kSoftwareInterruptDelivered; }

void sysenter_arrived(TrapFrame& frame) {
  print("swint: sysenter frame: rip 0x%lx cs 0x%lx rsp 0x%lx ss 0x%lx\n", frame.rip, frame.cs & 0xffff, frame.rsp,
        frame.ss);
  frame.rip = frame.rdx;
  frame.rsp = frame.rcx;
  frame.cs = (frame.cs & ~0xffffull) | FLAT_USER_CS;  // the frame's null selector cannot be returned to
  frame.ss = FLAT_USER_SS;
  frame.rax = kSoftwareInterruptDelivered;
}

void set_architectural_iopl(bool on) { architectural_iopl = on; }

long sys_iopl(TrapFrame& frame, uint64_t level) {
  if (level > 3) return -linux_abi::kEINVAL;
  frame.rflags = (frame.rflags & ~kIoplMask) | (level << 12);  // what HYPERVISOR_iret takes under the assist
  if (architectural_iopl) return 0;
  physdev_set_iopl_t request{uint32_t(level)};
  return arch::hypercall(__HYPERVISOR_physdev_op, PHYSDEVOP_set_iopl, arch::arg(&request));
}
}  // namespace kernel
