#include "pv/rules/hypercall_page.h"
#include "abi/xen_abi.h"
#include <xen/xen.h>

namespace hypercall_page {
namespace {
constexpr uint8_t push_rcx = 0x51, push_rax = 0x50, pop_rcx = 0x59, ret = 0xc3, int3 = 0xcc, mov_imm32_eax = 0xb8;
constexpr uint8_t push_r11[] = {0x41, 0x53}, pop_r11[] = {0x41, 0x5b}, syscall[] = {0x0f, 0x05};

class StubWriter {
 public:
  explicit StubWriter(uint8_t* at) : at_(at) {}
  void byte(uint8_t b) { *at_++ = b; }
  void bytes(const uint8_t* b, size_t n) {
    for (size_t i = 0; i < n; ++i) byte(b[i]);
  }
  void imm32(uint32_t v) {
    for (int i = 0; i < 4; ++i) byte(uint8_t(v >> (8 * i)));
  }

 private:
  uint8_t* at_;
};

void normal_stub(uint8_t* at, uint32_t number) {
  StubWriter w(at);
  w.byte(push_rcx);
  w.bytes(push_r11, 2);
  w.byte(mov_imm32_eax);
  w.imm32(number);
  w.bytes(syscall, 2);
  w.bytes(pop_r11, 2);
  w.byte(pop_rcx);
  w.byte(ret);
}

// iret never returns to its caller: the hypervisor resumes wherever the frame says.
void iret_stub(uint8_t* at) {
  StubWriter w(at);
  w.byte(push_rcx);
  w.bytes(push_r11, 2);
  w.byte(push_rax);
  w.byte(mov_imm32_eax);
  w.imm32(__HYPERVISOR_iret);
  w.bytes(syscall, 2);
}
}  // namespace

void fill(uint8_t* page) {
  for (size_t i = 0; i < 4096; ++i) page[i] = int3;  // padding traps if ever executed
  for (uint32_t n = 0; n < 4096 / stub_size; ++n) {
    if (n == __HYPERVISOR_iret)
      iret_stub(page + n * stub_size);
    else
      normal_stub(page + n * stub_size, n);
  }
}
}  // namespace hypercall_page
