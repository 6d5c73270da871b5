# The xenstore library's sources (host C++, no I/O), shared by the library below and the unit
# tests (tests/unit/xenstore_*_test.cpp, built sanitized with them).
set(XENSTORE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/wire.cpp
  ${CMAKE_CURRENT_LIST_DIR}/store.cpp
  ${CMAKE_CURRENT_LIST_DIR}/store_view.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ring.cpp
  ${CMAKE_CURRENT_LIST_DIR}/domain_nodes.cpp)
