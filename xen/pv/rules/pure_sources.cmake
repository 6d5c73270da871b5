# The PV CPU's pure rules (what CPUID, the MSRs, the control and debug registers, the LDT, the
# hypercall page and the page walk give a PV guest): compiled freestanding into the hypervisor
# and for the host unit tests.
list(APPEND PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/control_registers.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpuid_policy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/debug_register_moves.cpp
  ${CMAKE_CURRENT_LIST_DIR}/debug_registers.cpp
  ${CMAKE_CURRENT_LIST_DIR}/forced_emulation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/guest_page_walk.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hypercall_page.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ldt_rules.cpp
  ${CMAKE_CURRENT_LIST_DIR}/msr_emulation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/unemulated_report.cpp)
