// HYPERVISOR_console_io. The guest's text is printed as domain_console/console_output prints
// guest text: dom0's as it is, an unprivileged domain's filtered into "(dN) " lines within its
// output limit, as Xen prints guest output.
// Xen 4.17 lets a domU write only when it is a console domain or the hypervisor is a
// CONFIG_VERBOSE_DEBUG build (xsm_console_io); the domUs built at boot are treated as console
// domains, since until a toolstack exists the console is all they have. Reading is dom0's.
#include "abi/xen_abi.h"
#include <xen/errno.h>
#include <xen/xen.h>
#include "domain_console/console_output.h"
#include "domain/domain.h"
#include "hypercall/dispatch.h"
#include "domain/guest_memory.h"

namespace hypercall {
// CONSOLEIO_write copies the guest's text out in chunks; a bad buffer is -EFAULT (and whatever
// was readable before the bad page has been printed, as on Xen). The count is 32 bits, as
// Xen's, and the copy preemptible between chunks. There is no console input.
long console_io(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  uint64_t command = args.a[0], buffer = args.a[2];
  uint32_t count = uint32_t(args.a[1]);
  switch (command) {
    case CONSOLEIO_write: {
      char chunk[128];
      for (uint32_t done = 0; done < count;) {
        if (done && preemption_requested()) {
          args.a[1] = count - done;
          args.a[2] = buffer + done;
          return restart;
        }
        uint32_t n = count - done < sizeof(chunk) ? count - done : uint32_t(sizeof(chunk));
        if (!guest_memory::copy_from(vcpu, chunk, buffer + done, n)) return -XEN_EFAULT;
        console_output::write_guest_text(*vcpu.domain, chunk, n);
        done += n;
      }
      console_output::keep_draining();
      return 0;
    }
    case CONSOLEIO_read: return vcpu.domain->privileged ? 0 : -XEN_EPERM;
    default: return vcpu.domain->privileged ? -XEN_ENOSYS : -XEN_EPERM;
  }
}
}  // namespace hypercall
