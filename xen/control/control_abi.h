// The tools' interface of Xen 4.17 (domctl.h, sysctl.h: interface version 0x15), which the
// control hypercalls implement. Those headers exist only for __XEN__ or __XEN_TOOLS__, and
// their 64-bit aligned types and guest handles come from xen.h under the same condition, so
// this header must be the first Xen header a file includes (it says so at compile time).
#pragma once
#ifndef __XEN_TOOLS__
#define __XEN_TOOLS__ 1
#endif
#include "abi/xen_abi.h"
#include <xen/domctl.h>
#include <xen/sysctl.h>

#ifndef uint64_aligned_t
#error "control/control_abi.h must come before any other Xen header in this file"
#endif
