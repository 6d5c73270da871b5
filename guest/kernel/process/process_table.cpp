#include "kernel/process/process_table.h"

namespace lib {

int ProcessTable::find(int pid) const {
  if (pid <= 0) return -1;
  for (int slot = 0; slot < kCapacity; ++slot) {
    if (records_[slot].state != ProcessState::free && records_[slot].pid == pid) return slot;
  }
  return -1;
}

int ProcessTable::create(int parent_pid) {
  int slot = 0;
  while (slot < kCapacity && records_[slot].state != ProcessState::free) ++slot;
  if (slot == kCapacity) return -1;
  // Pids grow and wrap like Linux's (skipping those still in use), so a reaped pid is not
  // handed out again at once.
  constexpr int kPidMax = 32768;
  do {
    if (next_pid_ >= kPidMax) next_pid_ = 2;
  } while (find(next_pid_++) >= 0);
  records_[slot] = ProcessRecord{next_pid_ - 1, parent_pid, ProcessState::runnable, 0};
  return slot;
}

int ProcessTable::exit(int slot, int wait_status) {
  ProcessRecord& record = records_[slot];
  record.state = ProcessState::zombie;
  record.wait_status = wait_status;
  for (ProcessRecord& other : records_) {
    if (other.state != ProcessState::free && other.parent == record.pid) other.parent = kInitPid;
  }
  return find(record.parent);
}

WaitResult ProcessTable::wait(int slot, int pid) const {
  int parent = records_[slot].pid;
  bool has_children = false;
  for (int child = 0; child < kCapacity; ++child) {
    const ProcessRecord& record = records_[child];
    if (record.state == ProcessState::free || record.parent != parent) continue;
    if (pid > 0 && record.pid != pid) continue;
    has_children = true;
    if (record.state == ProcessState::zombie) return WaitResult{WaitResult::reaped, child};
  }
  return WaitResult{has_children ? WaitResult::would_block : WaitResult::no_children, -1};
}

int ProcessTable::next_runnable(int after) const {
  for (int step = 1; step <= kCapacity; ++step) {
    int slot = (after + step) % kCapacity;
    if (records_[slot].state == ProcessState::runnable) return slot;
  }
  return -1;
}

int ProcessTable::live_count() const {
  int count = 0;
  for (const ProcessRecord& record : records_) {
    if (record.state != ProcessState::free) ++count;
  }
  return count;
}

}  // namespace lib
