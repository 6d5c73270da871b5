// A domain's life as the toolstack drives it, with Xen 4.17's rules (the pure ones are in
// control/): createdomain (a PV domain of up to 8 vCPUs, paused by the controller, no memory
// yet), max_vcpus (its vCPUs made, down), setvcpucontext / getvcpucontext (64-bit PV, any of
// its vCPUs), VCPUOP_initialise (a guest's context for another of its vCPUs), hypercall_init
// and destroydomain (alive -> dying -> dead, preemptible, every frame back to the allocator).
// The boot builder creates its domains and sets vCPU 0's first context through the same
// functions.
#pragma once
#include "control/control_abi.h"
#include "domain/domain.h"

namespace domain_lifecycle {
// The ptwr= mode every domain gets (the hypervisor's command line; emulate by default).
void set_page_table_write_mode(PageTableWriteMode mode);

// A xen_domctl_createdomain with what a PV domain of `max_vcpus` vCPUs needs (the boot builder's).
xen_domctl_createdomain default_config(uint32_t max_vcpus = 1);

// XEN_DOMCTL_createdomain: op->domain is `requested` (0 or reserved: the next free id); 0
// with `created` set, or Xen's error (-EEXIST, -ENOMEM, -EINVAL, ...). Nothing is left
// behind on failure.
long create(uint32_t requested, const xen_domctl_createdomain& config, Domain*& created);
// The same with the id given (the boot builder: dom0 is 0, boot domUs 1, 2, ...).
long create_with_id(domid_t id, const xen_domctl_createdomain& config, bool privileged, Domain*& created);

// XEN_DOMCTL_max_vcpus with the count createdomain was given: every vCPU up to it is made
// (Xen's vcpu_create: down, offline, no context); again, nothing more to do. 0.
long create_vcpus(Domain& target);

// XEN_DOMCTL_destroydomain: 0 once the domain is dead, hypercall::restart when preempted
// (`preemptible`), -EINVAL on the caller's own domain. From its start the domain is dying: its
// page list is closed (no frame is assigned to it any more, Xen's assign_pages). The slot is
// given back when its page list is empty (frames another domain still maps keep it, dead,
// until a later call).
long destroy(Domain& target, const Domain* caller, bool preemptible);

// Frees the slots of dead domains whose last frames have been let go since (Xen frees a domain
// when its last page goes): run before the control hypercalls look at the domain table, so a
// domain another holder kept alive vanishes once that holder unmaps its frames. Each visit
// walks what the dead domain still holds (its page list), however many frames that is.
void reap_dead();

// XEN_DOMCTL_setvcpucontext's work on `vcpu` (of a domain the caller checked is not its own):
// Xen's arch_set_info_guest, the checks of control/vcpu_context, then for a first context its
// GDT frames and page tables (-EINVAL when they are not the domain's or of the wrong type).
// `context` is fixed up in place (selectors). VGCF_online in it brings the vCPU up.
long set_vcpu_context(Vcpu& vcpu, vcpu_guest_context& context);
// VCPUOP_initialise: -EEXIST for a vCPU that has a context, else set_vcpu_context (the
// guest's own domain: the vCPU is down, so not the running one).
long initialise_vcpu(Vcpu& vcpu, vcpu_guest_context& context);
// setvcpucontext with a null context: Xen's vcpu_reset (page tables released, vCPU down and
// uninitialised again).
long reset_vcpu(Vcpu& vcpu);
// XEN_DOMCTL_getvcpucontext: -ENODATA before the vCPU has a context.
long get_vcpu_context(const Vcpu& vcpu, vcpu_guest_context& context);

// XEN_DOMCTL_hypercall_init: the hypercall page written into the target's frame `gmfn` (its
// mfn: PV); -EINVAL when the frame is not the target's, -EPERM when it cannot be writable.
long hypercall_init(Domain& target, uint64_t gmfn);
}  // namespace domain_lifecycle
