#include "event/event_channels.h"
#include "hypercall/dispatch.h"

namespace hypercall {
long event_channel_op(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  return event_channels::hypercall(vcpu, int(args.a[0]), args.a[1]);
}
}  // namespace hypercall
