// The hypercall page of a 64-bit PV guest kernel: 128 stubs of 32 bytes, stub n entering the
// hypervisor with `syscall` and rax = n. The guest calls hypercall_page + n * 32 and keeps
// rcx/r11 (which syscall clobbers) because the stub saves them; iret's stub leaves them
// (and rax) on the stack for the hypervisor to read as part of struct iret_context.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace hypercall_page {
constexpr size_t stub_size = 32;
void fill(uint8_t* page);  // page: 4096 bytes
}  // namespace hypercall_page
