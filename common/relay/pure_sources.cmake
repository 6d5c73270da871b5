# The relay protocol's freestanding code, shared by the dom0 relay (guest/) and the host library
# (tools/libxc/), and unit-tested on the host (tests/unit/relay_*_test.cpp).
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/frame_receiver.cpp)
