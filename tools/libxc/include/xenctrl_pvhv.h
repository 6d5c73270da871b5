/*
 * pvhv's additions to the libxenctrl interface (tools/README.md). Xen's tools map another
 * domain's memory into their own address space (libxenforeignmemory); a host program talking to
 * dom0 over the relay cannot, so it reads and writes foreign frames explicitly instead. Nothing
 * is ever mapped behind the caller's back: these calls copy (a lasting mapping, below, is kept
 * in dom0, and read and written by copies too).
 *
 * C, usable beside <xenctrl.h>. Each returns 0, or -1 with errno set (as libxenctrl does).
 */
#ifndef XENCTRL_PVHV_H
#define XENCTRL_PVHV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct xc_interface_core;

/* Copies `length` bytes at `offset` of machine frame `frame` owned by `domid` (DOMID_XEN for the
 * pages the hypervisor shares with dom0, such as the trace buffers). offset + length <= 4096. */
int pvhv_xc_foreign_read(struct xc_interface_core* xch, uint32_t domid, uint64_t frame, uint32_t offset, void* out,
                         size_t length);
int pvhv_xc_foreign_write(struct xc_interface_core* xch, uint32_t domid, uint64_t frame, uint32_t offset,
                          const void* data, size_t length);

/* A lasting writable mapping of machine frame `frame` owned by `domid`, kept in dom0 until
 * pvhv_xc_foreign_unmap (or the next session: a new OPEN unmaps what the last one left), for a
 * backend's rings, as xenconsoled and xenstored keep a domain's rings mapped (xenforeignmemory):
 * while it lasts the frame holds a writable type, so its domain cannot make it a page table or a
 * descriptor frame, and a destroyed domain stays dying until it is unmapped. *handle names it for
 * pvhv_xc_mapped_read / _write (offset + length <= 4096), which copy through the mapping. Errors:
 * EPERM for dom0 itself, DOMID_SELF, DOMID_XEN and the other reserved ids (the relay's policy);
 * ENOSPC beyond 8 mappings of one domain or 128 in all; the hypervisor's own refusal (ESRCH no
 * such domain, EBUSY a frame that domain does not own or one that is a page table); EBADF a handle that
 * names no mapping of this session. */
int pvhv_xc_foreign_map(struct xc_interface_core* xch, uint32_t domid, uint64_t frame, uint32_t* handle);
int pvhv_xc_foreign_unmap(struct xc_interface_core* xch, uint32_t handle);
int pvhv_xc_mapped_read(struct xc_interface_core* xch, uint32_t handle, uint32_t offset, void* out, size_t length);
int pvhv_xc_mapped_write(struct xc_interface_core* xch, uint32_t handle, uint32_t offset, const void* data,
                         size_t length);

/* Event channels for the host, as Linux's evtchn driver offers them to libxenevtchn: a dom0
 * port bound to `remote_port` of `domid` (an unbound port that domain allocated for dom0, such as
 * a console's), notified and closed. Events arriving on it are pushed by the relay; the port
 * stays masked after each until unmasked. */
int pvhv_xc_evtchn_bind_interdomain(struct xc_interface_core* xch, uint32_t domid, uint32_t remote_port,
                                    uint32_t* local_port);
int pvhv_xc_evtchn_notify(struct xc_interface_core* xch, uint32_t local_port);
int pvhv_xc_evtchn_unmask(struct xc_interface_core* xch, uint32_t local_port);
int pvhv_xc_evtchn_close(struct xc_interface_core* xch, uint32_t local_port);

/* EVTCHNOP_bind_virq in dom0 on vCPU 0 (VIRQ_DOM_EXC, say) for the host; Xen's errors (EINVAL for
 * a VIRQ number out of range, EEXIST for one dom0 has bound already). */
int pvhv_xc_evtchn_bind_virq(struct xc_interface_core* xch, uint32_t virq, uint32_t* local_port);

/* Waits up to `timeout_ms` (-1: for ever) for an event on one of the host's ports and takes it:
 * 0 with *local_port, or -1 with ETIMEDOUT. The port stays masked until pvhv_xc_evtchn_unmask.
 * Any of the host's ports: a process mixing this with xenevtchn handles on one link should wait
 * through one of the two only. */
int pvhv_xc_evtchn_pending(struct xc_interface_core* xch, int timeout_ms, uint32_t* local_port);

/* For pvhvd, which forwards its clients' relay traffic (tools/PROTOCOL.md, the `relay` op): one
 * request of the relay protocol, `type` (0x81..0x8c, not OPEN or SHUTDOWN) with `fields` (its
 * payload after the sequence number), made on this handle's session under its own number. The
 * answer's type and fields (after its sequence number; an ERROR frame's code, type and detail
 * included) go to *answer_type and `answer` (*answer_length: its room in, the length out).
 * 0 when an answer came, -1 with errno when none did. */
int pvhv_xc_relay_forward(struct xc_interface_core* xch, uint8_t type, const void* fields, size_t length,
                          uint8_t* answer_type, void* answer, size_t* answer_length);

/* Asks dom0 to shut down with `reason` (SHUTDOWN_poweroff, _reboot or _crash): the relay ends
 * the trace stream, answers, and dom0 stops; on our hypervisor the machine then ends. */
int pvhv_xc_dom0_shutdown(struct xc_interface_core* xch, unsigned int reason);

/* The page-table write mode of `domid` on our hypervisor (pvhv's own domctl, outside Xen's
 * numbers): PVHV_PTWR_EMULATE, every write to a page table emulated, PVHV_PTWR_WRITABLE, L1
 * tables detached while the guest writes them, or PVHV_PTWR_ADAPTIVE, per L1 one or the other.
 * get stores the mode in *mode; set changes it (leaving writable or adaptive for emulate
 * reattaches every detached table first) and stores the mode now. Errors as
 * a domctl's: ESRCH no such domain, EPERM not the control domain, EINVAL a bad mode or a dying
 * domain; ENOSYS on Xen 4.17, which has no such domctl. */
#define PVHV_PTWR_EMULATE 0u
#define PVHV_PTWR_WRITABLE 1u
#define PVHV_PTWR_ADAPTIVE 2u /* per L1: emulated while its writes are sparse, detached for runs */
int pvhv_xc_ptwr_mode_get(struct xc_interface_core* xch, uint32_t domid, unsigned int* mode);
int pvhv_xc_ptwr_mode_set(struct xc_interface_core* xch, uint32_t domid, unsigned int mode, unsigned int* now);
/* The builder's half of our PVHV ELF note: tells the hypervisor whether the kernel of `domid`
 * (being built: not yet unpaused) reads an unhooked L2 entry as its table (`reads` 1), so that
 * writable pagetables may unhook its reachable L1s, as for a boot-built domain with the note.
 * Errors as a domctl's: ESRCH no such domain, EPERM not the control domain, EINVAL `reads` not
 * 0 or 1 or a dying domain, EEXIST a domain that has run; ENOSYS on Xen 4.17 (which never
 * unhooks: the builder then goes on). */
int pvhv_xc_ptwr_reads_unhooked_set(struct xc_interface_core* xch, uint32_t domid, unsigned int reads);

/* The value of the hypervisor's performance counter `name` (XEN_SYSCTL_perfc_op, summed over
 * its values), such as "ptwr_emulations". ENOENT: no such counter; ENOSYS: the hypervisor has
 * none (Debian's Xen 4.17 is built without them). */
int pvhv_xc_perfc_value(struct xc_interface_core* xch, const char* name, uint64_t* value);

/* A link kept across its drops (pvhvd's: tools/PROTOCOL.md "The link dropping"). After
 * pvhv_xc_link_keep, a link that breaks (the socket closed, a read or write failing, a request
 * unanswered for PVHV_XENCTRL_TIMEOUT_MS) is down: the request that saw it fails with its errno
 * (ECONNRESET, ETIMEDOUT...), every later one at once with EAGAIN, until pvhv_xc_link_reopen
 * connects again (waiting up to `timeout_ms`) and opens a new session, in which nothing the old
 * one held in dom0 (buffers, ports) exists any more. pvhv_xc_link_down: 0 while the link is up,
 * else the errno that broke it; *generation (may be null) counts the sessions reopened. */
int pvhv_xc_link_keep(struct xc_interface_core* xch);
int pvhv_xc_link_down(struct xc_interface_core* xch, uint64_t* generation);
int pvhv_xc_link_reopen(struct xc_interface_core* xch, int timeout_ms);

/* Which transport the handle uses ("relay:<socket path>"), for messages. */
const char* pvhv_xc_transport(struct xc_interface_core* xch);

#ifdef __cplusplus
}
#endif
#endif
