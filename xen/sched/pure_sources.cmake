# The scheduler's pure decisions, compiled freestanding into the hypervisor and for the host unit
# tests: the round robin's choice of the next vCPU on a CPU, and which CPU a vCPU runs on.
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/run_queue.cpp ${CMAKE_CURRENT_LIST_DIR}/placement.cpp)
