# The pure half of the xenbus client (xs_wire requests, the ring, answers, the shutdown watcher):
# compiled freestanding into the kernel and for the host unit tests (tests/unit/guest_xenbus_test.cpp).
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/xenbus_protocol.cpp)
