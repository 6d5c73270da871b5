# The console ring (XEN_SYSCTL_readconsole) and the reader of guests' PV console rings:
# compiled freestanding into the hypervisor and for the host unit tests.
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/console_ring.cpp ${CMAKE_CURRENT_LIST_DIR}/guest_ring_reader.cpp)
