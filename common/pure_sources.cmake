# Freestanding code shared by the hypervisor, the guest kernel, the host tools and the unit tests.
# elf/: the one ELF64 and Xen-notes reader (the hypervisor's boot builder, the host's domain
# builder in tools/libxenguest).
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/format.cpp
  ${CMAKE_CURRENT_LIST_DIR}/elf/elf_image.cpp
  ${CMAKE_CURRENT_LIST_DIR}/elf/xen_elf_notes.cpp)
