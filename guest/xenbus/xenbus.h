#pragma once
// The xenbus client of a domU: when start_info names a store page and port, it talks xs_wire
// over that ring, driven by the port's events only (boot never waits for a store that nobody
// serves), watches control/shutdown and obeys it (xenbus/xenbus_protocol.h).
#include <stdint.h>
#include <xen/xen.h>
#include <xen/io/xs_wire.h>

namespace kernel {

// After events and the timer are up. Prints one line saying whether a store was found.
// `xenbus=off`: the store page is found but left as its builder made it (no client starts), for
// selftest=hostile-store-ring.
void xenbus_init();
// `xenbus=wait` on the command line: no init, the kernel waits for events (its only way out is
// a control/shutdown request), for the host's xenstore tests. Returns if not asked for.
void xenbus_wait_if_requested();
// `xenbus=hostile hostile=flood|garbage|ringidx` (xenbus_hostile.cpp): the ring is left to the
// hostile client, which misbehaves on it, says what the store did, and powers the domain off.
bool xenbus_hostile_requested();
void xenbus_hostile_run(volatile xenstore_domain_interface* ring, uint32_t port);
// Messages exchanged so far, for the selftests and the boot log.
uint64_t xenbus_messages_received();
// The store page and port start_info named (null and 0 for none), whether a client runs or not.
volatile xenstore_domain_interface* xenbus_store_page();
uint32_t xenbus_store_port();

}  // namespace kernel
