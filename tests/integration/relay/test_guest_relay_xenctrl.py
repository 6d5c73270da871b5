"""A C program written against Debian's own xenctrl.h (tests/xenctrl/xc_relay_check.c), linked
with our build/lib/libxenctrl.so, talks to the hypervisor through dom0 in relay mode
(relay=com2, tools/PROTOCOL.md): xc_version in every form, the trace-buffer calls, the
information sysctls (served or refused as Xen refuses what it does not have), our explicit
foreign-frame reads (the t_info page) and the relay's refusals. The same binary runs against
our hypervisor and against real Xen 4.17 with the same dom0: that is how we know the calls are
Xen's. Then it asks dom0 to shut down; the machine ends normally (ours: with a clean audit)."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import relay_run  # noqa: E402


def main():
    build, hv = guest_boot.arguments()
    checker = relay_run.program(build, "xc_relay_check")
    append = hv.append

    def client(socket_path, serial):
        return relay_run.run_program(build, socket_path, [checker, "--commandline", append, "--shutdown"])

    boot, run = relay_run.boot_relay(build, hv, "relay=com2", client)
    print(run.stdout)
    machine.expect(run.returncode == 0 and "xc_relay_check: passed" in run.stdout,
                   f"{hv.name}: xc_relay_check failed (status {run.returncode}): {run.stdout}\n{run.stderr}", boot)
    # The version the library read is the one the hypervisor announces on its console.
    m = re.search(r"xc_relay_check: hypervisor (\d+)\.(\d+)(\S*)", run.stdout)
    machine.expect(m is not None, "no version line", boot)
    if hv.name == "xen417":
        machine.expect(f"Xen version {m.group(1)}.{m.group(2)}{m.group(3)} " in boot.serial,
                       f"Xen's banner does not say {m.group(0)}", boot)
    else:
        machine.expect(m.groups() == ("4", "17", "-pvhv"), f"ours says {m.group(0)}", boot)
    # The relay refused the three foreign accesses the program tries on purpose, and kept serving.
    s = re.search(r"relay: shutdown requested \(reason 0\): (\d+) requests, (\d+) errors", boot.serial)
    machine.expect(s is not None, "the relay did not report its shutdown", boot)
    machine.expect(int(s.group(2)) == 3, f"{s.group(2)} relay errors, expected the 3 deliberate ones", boot)
    guest_boot.expect_ended(boot, hv, hv.poweroff, 0)
    print(f"ok: {hv.name}: {s.group(1)} relay requests, xc_relay_check passed")


if __name__ == "__main__":
    main()
