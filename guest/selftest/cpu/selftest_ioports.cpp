// selftest=ioports: run in dom0 with virtual IOPL 1 (PHYSDEVOP_set_iopl), so its in/out
// instructions are performed by the hypervisor. Wide accesses whose first port is free but
// whose last bytes reach a port the hypervisor keeps (COM1 at 0x3f8, the PIC at 0x20, the
// exit device at 0xf4) must not reach that port: Xen 4.17 (admin_io_okay, guest_io_read and
// guest_io_write in xen/arch/x86/pv/emul-priv-op.c) checks the whole [port, port + size - 1]
// and, when part of it is denied, splits the access, reading all ones from a denied port and
// dropping what would be written to it. The values written are chosen so that a byte landing
// on the device would show: 0x01 on the exit device ends the machine with value 1, 0x11 on
// the PIC's command port restarts its initialisation (unmasking it), 'Z' on COM1 prints.
// QEMU gives a wide write to the device at its first port, so a write that wrongly passed
// would still not show here: the rule itself is unit tested (tests/unit/port_io_test.cpp);
// the writes check that the accesses complete and the machine runs on. A wide read shows
// it: split as Xen splits it, the bytes of denied ports read all ones.
#include <stdint.h>
#include <xen/physdev.h>

#include "arch/hypercall.h"
#include "arch/xen.h"
#include "selftest/cpu/cpu_selftests.h"

namespace kernel {
namespace {
long set_iopl(uint32_t iopl) {
  physdev_set_iopl_t request{iopl};
  return arch::hypercall(__HYPERVISOR_physdev_op, PHYSDEVOP_set_iopl, arch::arg(&request));
}

void out32(uint16_t port, uint32_t value) { asm volatile("outl %0, %1" ::"a"(value), "Nd"(port)); }
void out16(uint16_t port, uint16_t value) { asm volatile("outw %0, %1" ::"a"(value), "Nd"(port)); }
uint32_t in32(uint16_t port) {
  uint32_t value;
  asm volatile("inl %1, %0" : "=a"(value) : "Nd"(port));
  return value;
}
// A read of 16 bits leaves the upper half of eax as it was, as the CPU does.
uint64_t in16_keeping(uint16_t port, uint64_t rax) {
  asm volatile("inw %1, %%ax" : "+a"(rax) : "d"(port));
  return rax;
}

void writes(SelfTest& test) {
  out32(0xf1, 0x01000000);  // bytes 0xf1..0xf4: the last one on the exit device
  test.check("outl at 0xf1 (last byte on the exit device) completes, the machine runs on", 1, 1);
  out32(0x1f, 0x11000000);  // 0x1f..0x22: 0x20 and 0x21 are the PIC's
  test.check("outl at 0x1f (bytes on the PIC) completes", 1, 1);
  out32(0x3f5, 0x5a000000);  // 0x3f5..0x3f8: 0x3f8 is COM1's data register
  out16(0x3f7, 0x5a5a);
  test.check("outl at 0x3f5 and outw at 0x3f7 (bytes on COM1) complete", 1, 1);
  uint32_t element = 0x01000000;
  const uint32_t* from = &element;
  uint64_t count = 1;
  asm volatile("rep outsl" : "+S"(from), "+c"(count) : "d"(uint16_t(0xf1)) : "memory");
  test.check("rep outsl at 0xf1 completes, rcx counted down", static_cast<long>(count), 0);
}

void reads(SelfTest& test) {
  // 0x1f..0x22: the bytes of 0x20 and 0x21 (the PIC) read all ones, whatever the others are.
  test.check("inl at 0x1f reads all ones from the PIC's ports", static_cast<long>((in32(0x1f) >> 8) & 0xffff), 0xffff);
  // The last port: a wide read must not wrap to port 0 (the DMA controller); the byte of
  // the port beyond 0xffff, which does not exist, reads all ones.
  test.check("inl at 0xfffd reads all ones beyond the last port", static_cast<long>(in32(0xfffd) >> 24), 0xff);
  // 0xf1..0xf3 are free and 0xf4 is our exit device (Xen does not know it and lets dom0 read
  // it): only noted.
  test.note("inl at 0xf1", static_cast<long>(in32(0xf1)));
  test.check("inw at 0x21 keeps the upper bits of rax",
             static_cast<long>(in16_keeping(0x21, 0x1234567800000000ULL) >> 16), 0x123456780000L);
}
}  // namespace

void selftest_ioports(SelfTest& test) {
  test.check("physdev set_iopl 1", set_iopl(1), 0);
  writes(test);
  reads(test);
  test.check("physdev set_iopl 0", set_iopl(0), 0);
  test.check("a hypercall after the accesses", xen::xen_version(XENVER_version, nullptr) > 0, 1);
}

}  // namespace kernel
