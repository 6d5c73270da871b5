#pragma once
// The Xen public headers use the fixed-width integer types without including <stdint.h>
// themselves, so every file of the MMU model reaches them through this one header.
#include <stdint.h>
#include <stddef.h>
#include <xen/xen.h>
#include <xen/errno.h>

namespace mm {

// Hypercalls return negative Xen errno values; naming the sign once keeps call sites readable.
constexpr int error(xen_errno value) { return -static_cast<int>(value); }

}  // namespace mm
