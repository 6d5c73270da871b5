// HYPERVISOR_console_io. dom0's text goes to the console as it is (Xen's hardware domain
// writes directly: its console may be interactive); an unprivileged domain's is filtered as
// Xen's guest_console_write filters it (console/guest_text_filter: printable characters and
// tabs only), assembled into lines and each printed with a "(dN) " prefix within the domain's
// output limit (domain/console_output), as Xen prints guest output.
// Xen 4.17 lets a domU write only when it is a console domain or the hypervisor is a
// CONFIG_VERBOSE_DEBUG build (xsm_console_io); the domUs built at boot are treated as console
// domains, since until a toolstack exists the console is all they have. Reading is dom0's.
#include "mm/xen_abi.h"
#include <xen/errno.h>
#include <xen/xen.h>
#include "console/console.h"
#include "console/guest_text_filter.h"
#include "domain/console_output.h"
#include "domain/domain.h"
#include "hypercall/console_io.h"
#include "hypercall/dispatch.h"
#include "pv/guest_memory.h"

namespace hypercall {
namespace {
// Appends filtered guest text to the domain's line; a newline (or a full line) prints it.
void append_to_line(Domain& domain, const char* text, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    bool newline = text[i] == '\n';
    if (!newline) domain.console_line[domain.console_line_length++] = text[i];
    if (newline || domain.console_line_length == Domain::console_line_capacity) {
      domain.console_line[domain.console_line_length] = 0;
      console_output::print_line(domain, domain.console_line, domain.console_line_length);
      domain.console_line_length = 0;
    }
  }
}

// What Xen's guest_console_write keeps of a domU's text (printable characters, tabs, line
// ends) goes into its lines.
void write_prefixed(Domain& domain, const char* text, uint64_t length) {
  char kept[128];
  for (uint64_t done = 0; done < length;) {
    size_t n = length - done < sizeof(kept) ? size_t(length - done) : sizeof(kept);
    append_to_line(domain, kept, console::filter_guest_text(text + done, n, kept));
    done += n;
  }
}

}  // namespace

void write_guest_text(Domain& domain, const char* text, uint64_t length) {
  if (domain.privileged)
    console::write_raw(text, length);
  else
    write_prefixed(domain, text, length);
}

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
        write_guest_text(*vcpu.domain, chunk, n);
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
