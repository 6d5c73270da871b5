#pragma once
// The dom0 relay (kernel option relay=com2): dom0 as the host toolstack's hands inside the
// machine, as Linux's privcmd, evtchn and foreign-memory drivers are for Xen's tools. It serves
// the requests of tools/PROTOCOL.md on COM2, beside the trace stream when trace=capture is on:
// hypercalls with their arguments, hypercall buffers in a window of dom0's address space,
// foreign frame reads and writes through a scratch mapping, event channels whose events are
// pushed to the host. It knows no domctl structure; what it refuses is relay/server/relay_policy.h's.

namespace kernel::relay {

// Serves requests until the host sends SHUTDOWN (then dom0 shuts down with that reason); returns
// at once without relay= on the command line, or when the relay cannot start (with a message).
void run_if_requested();

}  // namespace kernel::relay
