/* lmbench's lat_proc "hello": print and exit. write(2) directly, as lmbench's does. */
#include <unistd.h>

int main(void) {
  write(1, "Hello world\n", 12);
  return 0;
}
