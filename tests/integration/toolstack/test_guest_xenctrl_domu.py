"""A domU built and run from the host: tests/xenctrl/xc_domu_lifecycle, written against
Debian's xenctrl.h and linked with our libxenctrl and PV builder, talks to the hypervisor
through dom0 in relay mode. It refuses a truncated, a non-ELF and a too-large kernel, populating
beyond max_mem, destroying dom0 and its max_mem (refused by the relay: EPERM), a domctl whose buffer does not exist and max_vcpus other than
createdomain's, each with Xen 4.17's errno and free memory back at its baseline; lasting
mappings of a domain's frames in dom0 (the relay's refusals and limits, bad handles, a held frame
that cannot be pinned, a domain destroyed while one of its frames is held: dying until dom0 lets
go, then gone), the same answers on both; then creates a
domU from build/guest/kernel with an initrd running /forktest, unpauses it, reads its console
ring while it runs, sees it shut down with reason poweroff (the guest's init exited with status
0), destroys it, finds free memory back at baseline, and runs 5 create/destroy cycles (each with an
event channel bound from dom0), each ending with free pages, dom0's event channels in use and
the number of domains at their baseline (`make bench` runs 100). The same
binary runs on Xen 4.17 and on ours (tools/README.md says which hypervisor calls ours needs)."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import xenctrl_domu  # noqa: E402

# Our guest kernel as a domU writes its console to start_info->console.domU's ring and notifies
# its port, as Linux's hvc_xen does (console_io is refused to domUs by Xen 4.17, debug=n): the
# host reads the ring through the relay, and it must show init's end.
CONSOLE_RING_WRITTEN = True
CONSOLE_END = "init exited: status 0"

def main():
    build, hv = guest_boot.arguments()
    args = ["--cycles", "5", "--timeout-s", "200"]
    if CONSOLE_RING_WRITTEN:
        args += ["--require-console", CONSOLE_END]
    boot, run = xenctrl_domu.run(build, hv, args, timeout=900)
    print(run.stdout)
    machine.expect(run.returncode == 0 and "xc_domu: passed" in run.stdout,
                   f"{hv.name}: xc_domu_lifecycle failed (status {run.returncode}): {run.stdout}\n{run.stderr}", boot)
    built = re.search(r"xc_domu: built d(\d+) .* in ([\d.]+) s: (\d+) pages written", run.stdout)
    machine.expect(built is not None, "no build line", boot)
    guest_boot.expect_ended(boot, hv, hv.poweroff, 0)
    print(f"ok: {hv.name}: domU d{built.group(1)} built in {built.group(2)} s ({built.group(3)} pages written), "
          "ran /forktest to its poweroff, destroyed; 5 cycles at baseline")


if __name__ == "__main__":
    main()
