// Debian's own xenctrl.h, included as the library's interface: every function this library
// defines is declared there, so the compiler checks each definition against Xen's signature.
// Declarations made here are exported; everything else in the library is hidden.
#pragma once
#pragma GCC visibility push(default)
extern "C" {
#include <xenctrl.h>
#include <xenevtchn.h>
#include "xenctrl_pvhv.h"
}
#pragma GCC visibility pop
