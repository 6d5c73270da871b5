#pragma once
// The writable_pagetables VM assist's check, shared by selftest=mmu and selftest=unprivileged.
#include "selftest/selftest.h"

namespace kernel {
void check_ptwr_assist(SelfTest& test);
}
