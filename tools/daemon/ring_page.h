// A domU's ring page (its console or its xenstore ring) as pvhvd, its backend, reaches it. As
// Xen's backends (xenconsoled, xenstored) keep a domain's rings mapped writable in dom0 for the
// domain's life, the daemon holds a lasting mapping of each ring (pvhv_xc_foreign_map) from the
// moment it takes the ring as backend (the domain built, or the daemon attached again) until it
// lets the domain go: the frame then holds a writable type, so the guest can never make its ring
// a page table or a descriptor frame that the daemon's stores would then write (Xen's answer to
// a pin or set_gdt of it: -EINVAL). Every access goes through that mapping; a ring the daemon
// could not map (the relay's limits, or a guest that made it a table while no daemon held it)
// is reached by a foreign copy per access instead, as before.
#pragma once
extern "C" {  // Debian's xenctrl.h declares C functions without extern "C" of its own
#include <xenctrl.h>
}

#include <cstddef>
#include <cstdint>
#include <string>

namespace pvhv::daemon {

struct RingPage {
  uint32_t domid = 0;
  uint64_t mfn = 0;
  uint32_t handle = 0;  // the lasting mapping; 0: none, foreign copies instead

  // On a link thread. False when the access failed (the domain is going: the monitor sees it).
  bool read(xc_interface* xch, uint32_t offset, void* out, size_t length) const;
  bool write(xc_interface* xch, uint32_t offset, const void* data, size_t length) const;
};

// On a link thread: the ring mapped for good, its handle; 0 and `why` when the relay or the
// hypervisor refused (the ring is then reached by copies).
uint32_t hold_ring(xc_interface* xch, uint32_t domid, uint64_t mfn, std::string& why);
// On a link thread: the mapping given back (nothing for handle 0). A destroyed domain held by it
// is freed then.
void release_ring(xc_interface* xch, uint32_t handle);

}  // namespace pvhv::daemon
