#pragma once
// Loads a static ELF executable from the initrd into an address space (active or not) and
// prepares the initial user stack (argc, argv, envp, auxv: kernel/process/user_stack.h) and registers
// as the Linux x86-64 ABI describes.
#include <stddef.h>
#include <stdint.h>

#include "kernel/process/cpio.h"
#include "kernel/process/elf.h"

namespace kernel {

struct Process;
struct TrapFrame;

struct UserImage {
  lib::CpioEntry file;
  lib::ElfImage elf;
};

struct UserArguments {
  const char* const* argv;
  size_t argc;
  const char* const* envp;
  size_t envc;
};

// Finds and checks the program: 0, -ENOENT or -ENOEXEC (a message says why).
long user_find(const char* path, UserImage& image);
// Lays out the stack in a kernel buffer first: -E2BIG if the arguments do not fit.
long user_prepare_stack(const UserImage& image, const UserArguments& arguments);
// Maps the image and the prepared stack into process.space (created, empty) and sets the
// heap and the user registers in frame.
void user_load(Process& process, const UserImage& image, TrapFrame& frame);

}  // namespace kernel
