// The part of the store a guest made (the nodes it owns under its home, its watches), as its
// record keeps it, so that a restarted pvhvd rebuilds the store its guests left: the daemon's
// own nodes come back from the records, the guests' from this. Pure: unit-tested in
// tests/unit/daemon_store_state_test.cpp.
#pragma once
#include <cstdint>
#include <string>

#include "tools/daemon/protocol.h"
#include "tools/xenstore/xenstore.h"

namespace pvhv::daemon {

// A node's bytes as a record or an answer carries them (JSON text: hex, two digits a byte).
std::string to_hex(const std::string& bytes);

// {"nodes": [{"path" (relative to /local/domain/N), "value_hex", "perms": ["b3", ...]}...],
//  "watches": [{"path", "token"}...]}
Json guest_store_state(const xenstore::Store& store, xenstore::ConnId conn, uint32_t domid);
// Puts a recorded state back: the nodes written with their permissions, the watches
// registered on `conn`, their acknowledgements and first events dropped (the guest had them
// from the first server). Entries that are not well formed are skipped. Never throws.
void restore_guest_store_state(xenstore::Store& store, xenstore::ConnId conn, uint32_t domid, const Json& state);

}  // namespace pvhv::daemon
