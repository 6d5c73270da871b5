// HYPERVISOR_physdev_op. Served: PHYSDEVOP_set_iopl, by which a guest kernel asks for the I/O
// ports (dom0 drives devices; here: the serial port its trace streamer writes to). The IOPL
// is virtual, as in Xen: the guest's in/out fault with #GP and pv/port_io performs them for
// its kernel mode; real IOPL would also hand it cli/sti and the hypervisor's timer. Any
// domain may set it (Xen 4.17's physdev.c checks nothing but the range); what a port access
// then does depends on the domain's I/O port permission, which only dom0 has.
#include "abi/xen_abi.h"
#include <xen/physdev.h>
#include "domain/domain.h"
#include "hypercall/dispatch.h"
#include "domain/guest_memory.h"

namespace hypercall {
long physdev_op(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  switch (args.a[0]) {
    case PHYSDEVOP_set_iopl: {
      physdev_set_iopl_t request;
      if (!guest_memory::read(vcpu, args.a[1], request)) return -XEN_EFAULT;
      if (request.iopl > 3) return -XEN_EINVAL;
      vcpu.iopl = request.iopl;
      return 0;
    }
    default: return -XEN_ENOSYS;
  }
}
}  // namespace hypercall
