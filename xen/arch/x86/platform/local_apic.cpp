#include "arch/x86/platform/local_apic.h"
#include "time/pit.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/cpu/trap_frame.h"
#include "arch/x86/layout.h"
#include "console/console.h"
#include "time/time_scale.h"

namespace local_apic {
volatile uint32_t* detail::registers;

namespace {
constexpr uint32_t reg_id = 0x20, reg_icr_low = 0x300, reg_icr_high = 0x310, reg_eoi = 0xb0, reg_spurious = 0xf0,
                   reg_lvt_timer = 0x320, reg_timer_initial = 0x380, reg_timer_current = 0x390,
                   reg_timer_divide = 0x3e0;
constexpr uint32_t masked = 1u << 16;
uint64_t timer_hz;
uint64_t base_address;
TimerHandler timer_handler;

using detail::registers;
uint32_t read(uint32_t reg) { return registers[reg / 4]; }
void write(uint32_t reg, uint32_t value) { registers[reg / 4] = value; }

void calibrate_timer() {
  write(reg_timer_divide, 0x3);  // divide by 16
  write(reg_lvt_timer, masked | vectors::lapic_timer);
  write(reg_timer_initial, 0xffffffff);
  constexpr uint16_t ticks = 11932;  // 10 ms
  pit::wait_ticks(ticks);
  uint32_t elapsed = 0xffffffff - read(reg_timer_current);
  write(reg_timer_initial, 0);
  timer_hz = uint64_t(elapsed) * pit::frequency_hz / ticks;
}
}  // namespace

void init() {
  uint64_t base = cpu::read_msr(cpu::msr::apic_base) & ~0xfffULL;
  base_address = base;
  cpu::write_msr(cpu::msr::apic_base, base | (1u << 11));  // globally enabled
  registers = reinterpret_cast<volatile uint32_t*>(DIRECTMAP_VIRT_START + base);
  write(reg_spurious, 0x100 | vectors::spurious);
  calibrate_timer();
  printk("Local APIC at %lx, timer %lu kHz\n", base, timer_hz / 1000);
}

uint64_t physical_base() { return base_address; }

uint32_t id() { return read(reg_id) >> 24; }

void init_ap() {
  cpu::write_msr(cpu::msr::apic_base, cpu::read_msr(cpu::msr::apic_base) | (1u << 11));
  write(reg_timer_divide, 0x3);                         // as the boot CPU's (calibrate_timer)
  write(reg_lvt_timer, masked | vectors::lapic_timer);  // no timer on a parked CPU
  write(reg_spurious, 0x100 | vectors::spurious);
}

namespace {
// The interrupt command register (xAPIC): the destination's APIC id in the high word, then the
// low word sends. Waits until the previous IPI left (delivery status). With interrupts off: a
// handler sending an IPI of its own between the two writes would change the destination.
constexpr uint32_t icr_pending = 1u << 12, icr_assert = 1u << 14;
constexpr uint32_t icr_fixed = 0u << 8, icr_nmi = 4u << 8, icr_init = 5u << 8, icr_startup = 6u << 8;
constexpr uint32_t icr_all_but_self = 3u << 18;
void wait_icr_idle() {
  while (read(reg_icr_low) & icr_pending) asm volatile("pause");
}
void send(uint32_t apic_id, uint32_t command) {
  uint64_t flags = cpu::save_and_disable_interrupts();
  wait_icr_idle();
  write(reg_icr_high, apic_id << 24);
  write(reg_icr_low, command);
  wait_icr_idle();
  cpu::restore_interrupts(flags);
}
}  // namespace

void send_init(uint32_t apic_id) { send(apic_id, icr_init | icr_assert); }
void send_startup(uint32_t apic_id, uint32_t page) { send(apic_id, icr_startup | icr_assert | (page & 0xff)); }
void send_fixed(uint32_t apic_id, uint8_t vector) { send(apic_id, icr_fixed | icr_assert | vector); }
void send_to_others(uint8_t vector) { send(0, icr_all_but_self | icr_fixed | icr_assert | vector); }
void send_nmi_to_others() { send(0, icr_all_but_self | icr_nmi | icr_assert); }

void arm_timer_ns(uint64_t delta_ns) {
  if (delta_ns == 0) {
    write(reg_timer_initial, 0);
    return;
  }
  uint64_t ticks = ns_to_ticks(delta_ns, timer_hz);
  if (ticks == 0) ticks = 1;
  if (ticks > 0xffffffff) ticks = 0xffffffff;  // re-armed on expiry if the deadline is further
  write(reg_lvt_timer, vectors::lapic_timer);
  write(reg_timer_initial, uint32_t(ticks));
}

void set_timer_handler(TimerHandler handler) { timer_handler = handler; }

void handle_timer_interrupt() {
  end_of_interrupt();
  timer_handler();
}

void end_of_interrupt() { write(reg_eoi, 0); }

}  // namespace local_apic
