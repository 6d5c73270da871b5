# The control hypercalls' rules (domctl, sysctl): compiled freestanding into the hypervisor
# and for the host unit tests.
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/domain_info.cpp ${CMAKE_CURRENT_LIST_DIR}/domctl_rules.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pause_count.cpp ${CMAKE_CURRENT_LIST_DIR}/physinfo.cpp
  ${CMAKE_CURRENT_LIST_DIR}/domid_allocation.cpp ${CMAKE_CURRENT_LIST_DIR}/create_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/domain_teardown.cpp ${CMAKE_CURRENT_LIST_DIR}/vcpu_context.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ptwr_mode_rules.cpp ${CMAKE_CURRENT_LIST_DIR}/cpu_topology.cpp
  ${CMAKE_CURRENT_LIST_DIR}/vcpu_affinity.cpp)
