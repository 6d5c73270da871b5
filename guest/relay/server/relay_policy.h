#pragma once
// What the dom0 relay forwards for the host, and what it refuses because it could break dom0
// itself (tools/PROTOCOL.md, "What the relay refuses"). The relay is generic: it knows the
// hypercalls' own argument conventions (which argument is a pointer, to how many bytes, which
// names a domain) and a domctl's header (its command and domain), never the structures of
// domctl or sysctl sub-operations (pvhv's own ptwr-mode domctl excepted). Pure.
#include <stdint.h>

#include "relay/server/relay_buffer_table.h"
#include "common/relay/protocol.h"

namespace lib::relay {

using ::relay::Refusal;

// Refusal::none if the hypercall may be forwarded: its number is allowed, the sub-operation
// too, every pointer argument is 0 or lies (with the bytes the hypercall will touch) inside one
// buffer, and it acts on another domain where acting on dom0 would break it: a domctl on
// domain 0 only from a short allow-list (what the toolstack reads), page-table updates of
// another domain's tables mapping another ordinary domain's frames.
Refusal check_hypercall(uint32_t number, const uint64_t (&args)[5], const BufferTable& buffers);

// Foreign frame access: any domain but the reserved ids (DOMID_XEN excepted: the hypervisor
// pages it shares, such as the trace buffers); writes never into dom0's own frames.
Refusal check_foreign_access(uint32_t domid, bool write);

// A lasting writable mapping (FOREIGN_MAP) of another ordinary domain's frame: never dom0's own
// (0, DOMID_SELF), nor DOMID_XEN's, DOMID_IO's or another reserved id's. A backend maps the
// rings of the domains it serves; nothing else needs a frame mapped between requests.
Refusal check_foreign_map(uint32_t domid);

// The domain a domid argument names, seen from dom0: DOMID_SELF is dom0.
constexpr bool names_dom0(uint32_t domid) { return domid == 0 || domid == 0x7ff0; }

}  // namespace lib::relay
