// The arithmetic RFLAGS bits an emulated instruction produces, computed as the SDM defines
// them for a result of a given width. Bits the SDM leaves undefined are left as they were.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/rflags.h"

namespace emulate::rflags {

using namespace ::rflags;
inline constexpr uint64_t arithmetic = carry | parity | adjust | zero | sign | overflow;

// AND, OR, XOR: CF = OF = 0; SF, ZF, PF from the result; AF undefined (kept).
uint64_t after_logical(uint64_t flags, uint64_t result, unsigned bytes);
// CMP (and CMPXCHG's comparison): the flags of `left - right`, all six defined.
uint64_t after_compare(uint64_t flags, uint64_t left, uint64_t right, unsigned bytes);
// BT, BTS, BTR: CF = the tested bit; ZF kept; OF, SF, AF, PF undefined (kept).
uint64_t after_bit_test(uint64_t flags, bool bit_was_set);

}  // namespace emulate::rflags
