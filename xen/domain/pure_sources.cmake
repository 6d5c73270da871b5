# The pure rules of the event-channel tables a Domain holds (2-level ports, FIFO queues):
# compiled freestanding into the hypervisor and for the host unit tests.
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/event_channel_table.cpp ${CMAKE_CURRENT_LIST_DIR}/event_fifo.cpp)
