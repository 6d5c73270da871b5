"""A domU asked to shut down through the xenstore: tests/xenctrl/xs_domu_shutdown builds a domU
from build/guest/kernel with `xenbus=wait` (no init: a control/shutdown request is its only way
out), serves its xenstore ring from the host with tools/xenstore through the relay (foreign
reads and writes of the store page, the store port bound in dom0), writes control/shutdown once
the guest's xenbus has registered its watch, and sees the domain shut down with the reason asked
for, the node cleared first, as Linux's xenbus does. Once with `poweroff`, once with `reboot`;
the same binary on Xen 4.17 and on ours."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import relay_run  # noqa: E402


def main():
    build, hv = guest_boot.arguments()
    program = relay_run.program(build, "xs_domu_shutdown")
    kernel = os.path.join(build, "guest", "kernel")

    def client(socket_path, serial, window_path):
        runs = []
        for request, last in (("poweroff", False), ("reboot", True)):
            args = [program, "--kernel", kernel, "--request", request, "--timeout-s", "240"]
            runs.append(relay_run.run_program(build, socket_path, args + (["--shutdown", "1"] if last else []),
                                              timeout=300, window_path=window_path))
            machine.expect(last or runs[-1].returncode == 0,
                           f"xs_domu_shutdown {request} failed: {runs[-1].stdout}\n{runs[-1].stderr}")
        return runs

    # Through the relay's bulk window (tools/PROTOCOL.md): the harness polls the store ring, and
    # the serial link's tens of KB/s would make each round of it cost seconds.
    boot, runs = relay_run.boot_relay(build, hv, "relay=com2", client, timeout=700, window=True)
    for run in runs:
        print(run.stdout)
        machine.expect(run.returncode == 0 and "xs_domu: passed" in run.stdout,
                       f"{hv.name}: xs_domu_shutdown failed (status {run.returncode}): {run.stdout}\n{run.stderr}",
                       boot)
    machine.expect(len(runs) == 2, "both requests ran", boot)
    print(f"ok: {hv.name}: a domU obeyed control/shutdown = poweroff and = reboot through the host's xenstore")


if __name__ == "__main__":
    main()
