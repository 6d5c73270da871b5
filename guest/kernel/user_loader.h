#pragma once
// Loads a static ELF executable from the initrd into a process and prepares the initial
// user stack (argc, argv, envp, auxv) and registers as the Linux x86-64 ABI describes.

namespace kernel {

struct Process;
struct TrapFrame;

bool user_load(Process& process, const char* path, TrapFrame& frame);

}  // namespace kernel
