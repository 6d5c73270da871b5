# Pure instruction-emulation logic (decoding with Zydis, executing page-table writes, the
# decode cache): compiled freestanding into the hypervisor and for the host unit tests.
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/arithmetic_flags.cpp)
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/decode_cache.cpp)
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/pte_write.cpp)
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/pte_write_decode.cpp)
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/register_operand.cpp)
