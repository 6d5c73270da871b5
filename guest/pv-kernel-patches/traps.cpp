#include "pv-kernel-patches/traps.h"

#include "arch/xen.h"
#include "kernel/console/panic.h"

extern "C" {
void trap_divide_error();
void trap_debug();
void trap_int3();
void trap_overflow();
void trap_bounds();
void trap_invalid_op();
void trap_device_not_available();
void trap_coprocessor_segment();
void trap_invalid_tss();
void trap_segment_not_present();
void trap_stack_segment();
void trap_general_protection();
void trap_page_fault();
void trap_coprocessor_error();
void trap_alignment_check();
void trap_machine_check();
void trap_simd_error();
}

namespace pv {
namespace {

// trap_info flags: bits 0-1 the privilege level allowed to raise it with int n, bit 2 set
// means "interrupt gate": event delivery is masked on entry. Masking matters for #PF: an
// event upcall before the handler reads vcpu_info.arch.cr2 could fault and overwrite it.
constexpr uint8_t kMaskEvents = 4;
constexpr uint8_t kUserMayRaise = 3;

trap_info_t entry(uint8_t vector, void (*handler)(), uint8_t flags = kMaskEvents) {
  return trap_info_t{vector, flags, FLAT_KERNEL_CS, reinterpret_cast<unsigned long>(handler)};
}

// Vector 2 (NMI) uses the NMI callback, 8 (double fault) is handled by the hypervisor.
const trap_info_t* table() {
  static const trap_info_t entries[] = {
      entry(0, trap_divide_error),
      entry(1, trap_debug),
      entry(3, trap_int3, kMaskEvents | kUserMayRaise),
      entry(4, trap_overflow, kMaskEvents | kUserMayRaise),
      entry(5, trap_bounds),
      entry(6, trap_invalid_op),
      entry(7, trap_device_not_available),
      entry(9, trap_coprocessor_segment),
      entry(10, trap_invalid_tss),
      entry(11, trap_segment_not_present),
      entry(12, trap_stack_segment),
      entry(13, trap_general_protection),
      entry(14, trap_page_fault),
      entry(16, trap_coprocessor_error),
      entry(17, trap_alignment_check),
      entry(18, trap_machine_check),
      entry(19, trap_simd_error),
      trap_info_t{0, 0, 0, 0},  // terminator: address 0
  };
  return entries;
}
}  // namespace

void traps_install() {
  long rc = xen::set_trap_table(table());
  if (rc < 0) kernel::panic("set_trap_table: %ld", rc);
}

void traps_remove_all() { xen::set_trap_table(nullptr); }

void traps_fill_context(trap_info_t (&by_vector)[256]) {
  for (trap_info_t& entry : by_vector) entry = trap_info_t{};
  for (const trap_info_t* entry = table(); entry->address; ++entry) by_vector[entry->vector] = *entry;
}

}  // namespace pv
