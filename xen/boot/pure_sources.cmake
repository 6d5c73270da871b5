# Pure boot logic: compiled freestanding into the hypervisor and for the host unit tests.
list(APPEND PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/dom0_layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/command_line.cpp
  ${CMAKE_CURRENT_LIST_DIR}/boot_domains.cpp)
