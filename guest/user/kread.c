/* Reads the guest kernel's first page from user mode. The user L4 holds no kernel entries,
 * so this must fault and the kernel must kill this process. */
#include <stdio.h>

int main(void) {
  printf("kread: reading kernel memory at 0xffffffff80000000\n");
  fflush(stdout);
  volatile unsigned long* kernel = (volatile unsigned long*)0xffffffff80000000ul;
  unsigned long value = *kernel;
  printf("kread: read %lx: kernel memory is reachable from user mode\n", value);
  return 0;
}
