/* Touches an address no region covers: the kernel must kill this process, not itself. */
#include <stdio.h>

int main(void) {
  printf("segv: touching 0xdead000\n");
  fflush(stdout);
  volatile int* bad = (volatile int*)0xdead000;
  *bad = 1;
  printf("segv: still alive\n");
  return 0;
}
