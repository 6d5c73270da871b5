/* The first user process: proves that printf (stdio over writev/ioctl), malloc (brk and
 * mmap), getpid and clock_gettime work through the kernel's Linux system calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

static int check_heap(void) {
  /* Small blocks come from brk, a large one from mmap: both are demand-paged. */
  char* small = malloc(100);
  char* large = malloc(1 << 20);
  if (small == NULL || large == NULL) return -1;
  memset(small, 'a', 100);
  memset(large, 'b', 1 << 20);
  int ok = small[99] == 'a' && large[(1 << 20) - 1] == 'b';
  free(large);
  free(small);
  /* musl's sbrk() only reports the break, so grow it with the raw system call. */
  char* before = (char*)syscall(SYS_brk, 0);
  char* after = (char*)syscall(SYS_brk, before + 65536);
  if (after != before + 65536) return -1;
  memset(before, 'c', 65536);
  return ok ? 0 : -1;
}

int main(void) {
  printf("hello from init (pid %d)\n", (int)getpid());
  struct timespec mono, wall;
  if (clock_gettime(CLOCK_MONOTONIC, &mono) != 0 || clock_gettime(CLOCK_REALTIME, &wall) != 0) {
    printf("init: clock_gettime failed\n");
    return 1;
  }
  printf("init: monotonic %lld.%09ld s, realtime %lld s\n", (long long)mono.tv_sec, mono.tv_nsec,
         (long long)wall.tv_sec);
  if (check_heap() != 0) {
    printf("init: heap check failed\n");
    return 2;
  }
  printf("init: heap ok\n");
  return 0;
}
