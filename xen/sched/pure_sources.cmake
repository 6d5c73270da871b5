# The round robin's choice of the next vCPU: compiled freestanding into the hypervisor and for
# the host unit tests.
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/run_queue.cpp)
