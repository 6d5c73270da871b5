#pragma once
// The bookkeeping half of processes, free of hardware: pids, parents, run state, exit
// status, and the rules of wait4 and of orphans (reparented to init, as on Linux). The
// kernel keeps the machine half (address space, saved registers) in a parallel array with
// the same slot numbers.
#include <stddef.h>
#include <stdint.h>

namespace lib {

enum class ProcessState : uint8_t { free, runnable, blocked, zombie };

struct ProcessRecord {
  int pid = 0;
  int parent = 0;  // pid of the parent; 0 for init
  ProcessState state = ProcessState::free;
  int wait_status = 0;  // Linux encoding, valid once a zombie
};

// Linux wait status: exit code in bits 8-15, or the terminating signal in bits 0-6.
constexpr int wait_status_exited(int code) { return (code & 0xff) << 8; }
constexpr int wait_status_signaled(int signal) { return signal & 0x7f; }
// What a shell reports for a wait status: the exit code, or 128 + signal.
constexpr int shell_status(int wait_status) {
  return (wait_status & 0x7f) != 0 ? 128 + (wait_status & 0x7f) : (wait_status >> 8) & 0xff;
}

constexpr int kInitPid = 1;

struct WaitResult {
  enum Kind { reaped, would_block, no_children } kind;
  int slot;  // the zombie found (reaped)
};

class ProcessTable {
 public:
  static constexpr int kCapacity = 64;

  // A new process with a fresh pid, runnable; -1 if the table is full.
  int create(int parent_pid);
  int find(int pid) const;  // slot of a live or zombie process, -1 if none
  ProcessRecord& operator[](int slot) { return records_[slot]; }
  const ProcessRecord& operator[](int slot) const { return records_[slot]; }

  // The process becomes a zombie with `wait_status`; its children go to init. Returns the
  // parent's slot (or -1) so the caller can wake it if it waits.
  int exit(int slot, int wait_status);
  // wait4's search among the children of the process in `slot`: pid > 0 is that child,
  // anything else (-1, 0, < -1: no process groups here) any child. A zombie found is not
  // freed yet: release() does that once its status is delivered.
  WaitResult wait(int slot, int pid) const;
  void release(int slot) { records_[slot] = ProcessRecord{}; }
  // The next runnable slot after `after` in round-robin order (may be `after` itself); -1.
  int next_runnable(int after) const;
  int live_count() const;

 private:
  ProcessRecord records_[kCapacity];
  int next_pid_ = kInitPid;
};

}  // namespace lib
