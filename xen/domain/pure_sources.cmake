# Pure scheduling and event-channel logic: compiled freestanding into the hypervisor and for
# the host unit tests.
list(APPEND PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/event_channel_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/event_fifo.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run_queue.cpp)
