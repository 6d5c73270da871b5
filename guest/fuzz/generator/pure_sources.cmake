# The fuzzer's generator: options, operation generators, rules and descriptions. Pure, compiled
# freestanding into the kernel and for the host unit tests (tests/unit/guest_fuzz_test.cpp).
list(APPEND PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_options.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_generate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_generate_mmu.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_generate_calls.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_generate_cpu.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_generate_hv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_rules.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_rules_hv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_describe.cpp)
