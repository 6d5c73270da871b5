// Placement new without <new> (libstdc++'s headers need glibc, which freestanding code lacks).
#pragma once
#include <stddef.h>

#if defined(HOST_TEST)
#include <new>
#else
inline void* operator new(size_t, void* where) noexcept { return where; }
#endif
