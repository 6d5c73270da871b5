// The MMU rules answer 0 or a negative Xen errno, as the hypercalls they serve return it.
#pragma once
#include "abi/xen_abi.h"

namespace mm {
// Naming the sign once keeps the rules' refusals readable.
constexpr int error(xen_errno value) { return -static_cast<int>(value); }
}  // namespace mm
