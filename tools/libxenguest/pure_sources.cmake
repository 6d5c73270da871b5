# The builder's pure parts (layout, start_info, vCPU context, the bzImage setup header), unit-tested on the host
# (tests/unit/libxenguest_*_test.cpp) and compiled into build/lib/libpvhv_xenguest.so.
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/pv_layout.cpp ${CMAKE_CURRENT_LIST_DIR}/pv_start.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bzimage_header.cpp)
