list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/table_reachability.cpp
  ${CMAKE_CURRENT_LIST_DIR}/table_snapshot.cpp ${CMAKE_CURRENT_LIST_DIR}/writable_pagetables.cpp)
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/adaptive_policy.cpp)
