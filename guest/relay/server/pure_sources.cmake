# The dom0 relay's request handling, policy, buffer table and table of lasting mappings: pure,
# compiled freestanding into the kernel and for the host unit tests (tests/unit/relay_*_test.cpp).
list(APPEND PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/relay_buffer_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/relay_mapping_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/relay_policy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/relay_server.cpp)
