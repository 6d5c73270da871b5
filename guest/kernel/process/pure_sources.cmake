# Pure guest sources of processes and their memory: no hardware access, compiled freestanding
# into the kernel and for the host unit tests (tests/unit/guest_*_test.cpp).
list(APPEND PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/cpio.cpp
  ${CMAKE_CURRENT_LIST_DIR}/elf.cpp
  ${CMAKE_CURRENT_LIST_DIR}/region_set.cpp)
list(APPEND PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/process_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/user_stack.cpp
  ${CMAKE_CURRENT_LIST_DIR}/copy_on_write.cpp)
