# The daemon's pure parts (protocol parsing and validation, records, console ring arithmetic, a guest's
# part of the store):
# compiled into build/bin/pvhvd and unit-tested on the host (tests/unit/daemon_*_test.cpp).
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/protocol.cpp ${CMAKE_CURRENT_LIST_DIR}/record.cpp
  ${CMAKE_CURRENT_LIST_DIR}/console_ring.cpp ${CMAKE_CURRENT_LIST_DIR}/relay_rules.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ptwr_mode.cpp ${CMAKE_CURRENT_LIST_DIR}/trace_window.cpp
  ${CMAKE_CURRENT_LIST_DIR}/store_state.cpp ${CMAKE_CURRENT_LIST_DIR}/domain_view.cpp
  ${CMAKE_CURRENT_LIST_DIR}/state_dir.cpp ${CMAKE_CURRENT_LIST_DIR}/output_queue.cpp)
