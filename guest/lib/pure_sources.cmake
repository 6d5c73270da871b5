# Pure guest sources: no hardware access, compiled freestanding into the kernel and for the host
# unit tests (tests/unit/guest_*_test.cpp). lib/: what every floor of the kernel uses.
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cmdline.cpp)
