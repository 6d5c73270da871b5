// The daemon's state directory: its socket (the machine's whole control), the relay's window and
// socket, the domains' records and console logs. Only the daemon's user may reach into it, as
// sshd and gpg-agent demand of theirs: a directory that another user owns, or that group or
// others may read, write or search, is refused (a client of another user could drive the
// machine, or swap a record or the socket), never quietly used. Made 0700 when absent.
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>

namespace pvhv::daemon {

// Makes `path` (0700) if it does not exist, then checks it: nullopt if the daemon may use it,
// else why not, as the daemon says it ("state directory DIR is open to others (mode 0755):
// chmod 700 it"). `user`: the uid that must own it (the daemon's effective uid).
std::optional<std::string> prepare_state_dir(const std::string& path, uid_t user);

}  // namespace pvhv::daemon
