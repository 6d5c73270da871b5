#include "domain/guest_mode.h"

namespace guest_mode {
void load(const Vcpu& vcpu) { detail::load(vcpu); }
void toggle(Vcpu& vcpu) { toggle_inline(vcpu); }
}  // namespace guest_mode
