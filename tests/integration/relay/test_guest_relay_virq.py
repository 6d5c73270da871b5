"""VIRQ_DOM_EXC for the host (tests/xenctrl/xc_virq_check.c: Debian's xenctrl.h and xenevtchn.h,
our build/lib/libxenctrl.so): bad VIRQ numbers and a second bind get Xen's EINVAL and EEXIST,
unbind frees the VIRQ, and the event arrives for a domain's shutdown and for its destruction,
and for a burst of shutdowns and destructions with none lost. The same binary on our hypervisor
and on Xen 4.17 with the same relay dom0; then dom0 shuts down (ours: a clean audit)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import relay_run  # noqa: E402


def main():
    build, hv = guest_boot.arguments()
    checker = relay_run.program(build, "xc_virq_check")

    def client(socket_path, serial):
        return relay_run.run_program(build, socket_path, [checker, "--shutdown"], timeout=240)

    boot, run = relay_run.boot_relay(build, hv, "relay=com2", client, timeout=180)
    print(run.stdout)
    machine.expect(run.returncode == 0 and "xc_virq_check: passed" in run.stdout,
                   f"{hv.name}: xc_virq_check failed (status {run.returncode}): {run.stdout}\n{run.stderr}", boot)
    guest_boot.expect_ended(boot, hv, hv.poweroff, 0)
    print(f"ok: {hv.name}: VIRQ_DOM_EXC for the host")


if __name__ == "__main__":
    main()
