#include "mm/xen_abi.h"
#include <xen/errno.h>
#include <xen/xen.h>
#include "console/console.h"
#include "domain/domain.h"
#include "hypercall/dispatch.h"
#include "pv/guest_memory.h"

namespace hypercall {
// CONSOLEIO_write copies the guest's text out in chunks; a bad buffer is -EFAULT (and whatever
// was readable before the bad page has been printed, as on Xen). There is no console input.
long console_io(Vcpu& vcpu, TrapFrame&, const Arguments& args) {
  uint64_t command = args.a[0], count = args.a[1], buffer = args.a[2];
  if (!vcpu.domain->privileged) return -XEN_EPERM;
  switch (command) {
    case CONSOLEIO_write: {
      char chunk[128];
      for (uint64_t done = 0; done < count;) {
        uint64_t n = count - done < sizeof(chunk) ? count - done : sizeof(chunk);
        if (!guest_memory::copy_from(vcpu, chunk, buffer + done, n)) return -XEN_EFAULT;
        console::write_raw(chunk, n);
        done += n;
      }
      return 0;
    }
    case CONSOLEIO_read: return 0;
    default: return -XEN_ENOSYS;
  }
}
}  // namespace hypercall
