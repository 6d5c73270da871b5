# The decoding of a guest's in/out instructions (port_io.h holds it with the glue that performs
# them): compiled freestanding into the hypervisor and for the host unit tests. The PV CPU's
# other pure rules are pv/rules/'s.
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/port_io_decode.cpp)
