# Flags and include paths for code that runs without a host OS: the hypervisor and the guest
# kernel. Only a curated include directory is visible (the Xen public headers and Zycore), so
# nothing from the host libc can leak into a freestanding object.
set(FREESTANDING_INCLUDE ${CMAKE_BINARY_DIR}/include-freestanding)
file(MAKE_DIRECTORY ${FREESTANDING_INCLUDE})
foreach(dir xen Zycore)
  if(NOT EXISTS ${FREESTANDING_INCLUDE}/${dir})
    file(CREATE_LINK /usr/include/${dir} ${FREESTANDING_INCLUDE}/${dir} SYMBOLIC)
  endif()
endforeach()

set(FREESTANDING_COMMON_FLAGS
  -ffreestanding -fno-builtin -nostdinc -fno-stack-protector
  -mno-red-zone -mno-sse -mno-sse2 -mno-mmx -mno-80387 -fno-asynchronous-unwind-tables
  -fno-omit-frame-pointer -O2 -g -Wall -Wextra -Wno-unused-parameter)
set(FREESTANDING_CXX_FLAGS -fno-exceptions -fno-rtti -fno-threadsafe-statics
  -fno-use-cxa-atexit)

# The compiler's own freestanding headers (stdint.h, stddef.h, stdarg.h) stay available;
# libstdc++'s headers do not (its configuration needs glibc's), so there is no <new> etc.
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=include
  OUTPUT_VARIABLE GCC_BUILTIN_INCLUDE OUTPUT_STRIP_TRAILING_WHITESPACE)


# Adds the freestanding flags to a target. model:
#   kernel   code linked in the top 2 GiB of the address space (the guest kernel);
#   anywhere code linked anywhere in the 64-bit space (the hypervisor lives in Xen's slots at
#            0xffff82d0..., beyond the reach of -mcmodel=kernel): position-independent code
#            addressing everything RIP-relative, linked statically at its fixed address.
function(make_freestanding target model)
  if(model STREQUAL "anywhere")
    set(model_flags -fpie -mcmodel=small -fvisibility=hidden)
  else()
    set(model_flags -fno-pic -fno-pie -mcmodel=${model})
  endif()
  target_compile_options(${target} PRIVATE ${FREESTANDING_COMMON_FLAGS} ${model_flags}
    $<$<COMPILE_LANGUAGE:CXX>:${FREESTANDING_CXX_FLAGS}>)
  # As compile options, because CMake drops the compiler's implicit include directories
  # from include lists, and -nostdinc removed them.
  target_include_directories(${target} SYSTEM PRIVATE ${FREESTANDING_INCLUDE})
  target_compile_options(${target} PRIVATE -isystem${GCC_BUILTIN_INCLUDE})
  target_compile_definitions(${target} PRIVATE
    __XEN_INTERFACE_VERSION__=0x00040e00 FREESTANDING=1)
endfunction()
