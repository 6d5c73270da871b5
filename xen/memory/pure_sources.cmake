# Pure memory logic (the boot frame allocator's bitmaps, the memory-reservation arithmetic):
# compiled freestanding into the hypervisor and for the host unit tests.
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/frame_allocator.cpp ${CMAKE_CURRENT_LIST_DIR}/reservation_rules.cpp)
