# The reader of the Multiboot information: compiled freestanding into the hypervisor and for
# the host unit tests.
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/multiboot_info.cpp)
# The ACPI reader (RSDP, RSDT/XSDT, MADT): the CPUs the firmware lists.
list(APPEND PURE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/acpi_tables.cpp)
