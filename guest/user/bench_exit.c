/* The smallest useful program for the fork benchmarks: what fork+execve and
 * fork+/bin/sh -c run in the child. It prints nothing, so the cost measured is the cost
 * of creating and tearing down an address space, not of the console. */
int main(void) { return 0; }
