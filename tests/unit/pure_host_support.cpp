// Intentionally small: what pure code needs from its environment on the host is libc itself.
