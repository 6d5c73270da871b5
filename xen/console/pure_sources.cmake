# The console ring (XEN_SYSCTL_readconsole), the reader of guests' PV console rings, the filter
# and rate limit of guest console text: compiled freestanding into the hypervisor and for the
# host unit tests (the serial transmit ring is header-only).
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/console_ring.cpp ${CMAKE_CURRENT_LIST_DIR}/guest_ring_reader.cpp
     ${CMAKE_CURRENT_LIST_DIR}/guest_text_filter.cpp ${CMAKE_CURRENT_LIST_DIR}/output_limit.cpp)
