// The machine the daemon owns: QEMU with the hypervisor and dom0 = the reference kernel as the
// relay, started from the one QEMU command line (tests/integration/lib/machine.py --print-command),
// or a running one attached to through its relay socket. machine.json in the state directory
// says which QEMU it is, so a daemon restarted with --attach can still stop it.
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>

namespace pvhv::daemon {

struct MachineOptions {
  std::string state_dir;
  std::string build_dir;
  std::string source_dir;
  std::string hypervisor = "ours";  // or xen417 (build/deps/xen-4.17)
  std::string ptwr_mode;            // ours: the hypervisor's ptwr= option; empty: its default
  std::string memory = "512M";
  unsigned smp = 1;  // QEMU's -smp: the machine's CPUs (pvhvd --smp)
};

struct Machine {
  pid_t qemu_pid = -1;  // -1: not known (attached to a machine started elsewhere)
  bool our_child = false;
  std::string relay_socket;
  std::string window;  // the relay's bulk window (a file QEMU shares), or empty: the serial link only
  std::string serial_log;
  std::string hypervisor;
};

// Starts QEMU (its own session: a daemon killed by a signal leaves the machine running).
std::optional<Machine> start_machine(const MachineOptions& options, std::string& why);
// The machine behind `relay_socket`, as machine.json describes it when it matches.
Machine attached_machine(const std::string& state_dir, const std::string& relay_socket);
void save_machine(const std::string& state_dir, const Machine& machine);
// After dom0's SHUTDOWN: waits for QEMU to end (ours ends the machine; Xen 4.17 halts it, so
// after `grace_s` QEMU is terminated). True when it is gone.
bool stop_machine(Machine& machine, int grace_s);

}  // namespace pvhv::daemon
