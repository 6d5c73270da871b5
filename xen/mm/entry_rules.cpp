#include "mm/entry_rules.h"

namespace mm {

bool is_denied_interrupt_frame(uint64_t mfn, const InterruptHardware& hardware) {
  if (mfn == hardware.local_apic_mfn) return true;
  if (mfn >= kMsiFirstMfn && mfn <= kMsiLastMfn) return true;
  return hardware.hypertransport && mfn >= kHyperTransportFirstMfn && mfn <= kHyperTransportLastMfn;
}

IoFrameAccess io_frame_access(DomainIdentity caller, uint64_t mfn, const InterruptHardware& hardware) {
  if (!caller.privileged || mfn >= (uint64_t{1} << (kPhysicalAddressBits - kPageShift))) return IoFrameAccess::denied;
  if (is_denied_interrupt_frame(mfn, hardware)) return IoFrameAccess::denied;
  if (mfn >= kIoApicFirstMfn && mfn <= kIoApicLastMfn) return IoFrameAccess::read_only;
  return IoFrameAccess::full;
}

}  // namespace mm
