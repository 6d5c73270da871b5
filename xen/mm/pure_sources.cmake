# Pure PV MMU logic (type/reference counting, entry validation, MMU hypercall cores, audit):
# compiled freestanding into the hypervisor and for the host unit tests.
list(APPEND PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/audit.cpp
  ${CMAKE_CURRENT_LIST_DIR}/descriptor_rules.cpp
  ${CMAKE_CURRENT_LIST_DIR}/entry_refs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/entry_rules.cpp
  ${CMAKE_CURRENT_LIST_DIR}/entry_update.cpp
  ${CMAKE_CURRENT_LIST_DIR}/frame_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/guest_frame_write_ref.cpp
  ${CMAKE_CURRENT_LIST_DIR}/linear_tables.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mm_locks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mmu_update.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mmuext_op.cpp
  ${CMAKE_CURRENT_LIST_DIR}/page_owner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/page_refs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/table_validation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/va_mapping.cpp
)
