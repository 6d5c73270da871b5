/*
 * pvhv's additions to the libxenctrl interface (tools/README.md). Xen's tools map another
 * domain's memory into their own address space (libxenforeignmemory); a host program talking to
 * dom0 over the relay cannot, so it reads and writes foreign frames explicitly instead. Nothing
 * is ever mapped behind the caller's back: these calls copy.
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
int pvhv_xc_foreign_read(struct xc_interface_core *xch, uint32_t domid, uint64_t frame,
                         uint32_t offset, void *out, size_t length);
int pvhv_xc_foreign_write(struct xc_interface_core *xch, uint32_t domid, uint64_t frame,
                          uint32_t offset, const void *data, size_t length);

/* Event channels for the host, as Linux's evtchn driver offers them to libxenevtchn: a dom0
 * port bound to `remote_port` of `domid` (an unbound port that domain allocated for dom0, such as
 * a console's), notified and closed. Events arriving on it are pushed by the relay; the port
 * stays masked after each until unmasked. */
int pvhv_xc_evtchn_bind_interdomain(struct xc_interface_core *xch, uint32_t domid, uint32_t remote_port,
                                    uint32_t *local_port);
int pvhv_xc_evtchn_notify(struct xc_interface_core *xch, uint32_t local_port);
int pvhv_xc_evtchn_unmask(struct xc_interface_core *xch, uint32_t local_port);
int pvhv_xc_evtchn_close(struct xc_interface_core *xch, uint32_t local_port);

/* Asks dom0 to shut down with `reason` (SHUTDOWN_poweroff, _reboot or _crash): the relay ends
 * the trace stream, answers, and dom0 stops; on our hypervisor the machine then ends. */
int pvhv_xc_dom0_shutdown(struct xc_interface_core *xch, unsigned int reason);

/* The page-table write mode of `domid` on our hypervisor (pvhv's own domctl, outside Xen's
 * numbers): PVHV_PTWR_EMULATE, every write to a page table emulated, or PVHV_PTWR_WRITABLE, L1
 * tables detached while the guest writes them. get stores the mode in *mode; set changes it
 * (leaving writable reattaches every detached table first) and stores the mode now. Errors as
 * a domctl's: ESRCH no such domain, EPERM not the control domain, EINVAL a bad mode or a dying
 * domain; ENOSYS on Xen 4.17, which has no such domctl. */
#define PVHV_PTWR_EMULATE 0u
#define PVHV_PTWR_WRITABLE 1u
int pvhv_xc_ptwr_mode_get(struct xc_interface_core *xch, uint32_t domid, unsigned int *mode);
int pvhv_xc_ptwr_mode_set(struct xc_interface_core *xch, uint32_t domid, unsigned int mode, unsigned int *now);

/* The value of the hypervisor's performance counter `name` (XEN_SYSCTL_perfc_op, summed over
 * its values), such as "ptwr_emulations". ENOENT: no such counter; ENOSYS: the hypervisor has
 * none (Debian's Xen 4.17 is built without them). */
int pvhv_xc_perfc_value(struct xc_interface_core *xch, const char *name, uint64_t *value);

/* Which transport the handle uses ("relay:<socket path>"), for messages. */
const char *pvhv_xc_transport(struct xc_interface_core *xch);

#ifdef __cplusplus
}
#endif
#endif
