# Pure guest sources: no hardware access, compiled freestanding into the kernel and for the host
# unit tests (tests/unit/guest_*_test.cpp).
list(APPEND PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/cpio.cpp
  ${CMAKE_CURRENT_LIST_DIR}/elf.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cmdline.cpp
  ${CMAKE_CURRENT_LIST_DIR}/region_set.cpp)
list(APPEND PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/process_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/user_stack.cpp
  ${CMAKE_CURRENT_LIST_DIR}/copy_on_write.cpp)
list(APPEND PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/relay_buffer_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/relay_policy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/relay_server.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_options.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_generate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_generate_mmu.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_generate_calls.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_generate_cpu.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_generate_hv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_rules.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_rules_hv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_describe.cpp)
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/xenbus.cpp)
