"""Boots dom0 and one unprivileged domain built at boot (docs/architecture.md, "Domains built
at boot") on our hypervisor, for tests where a domU acts beside a working dom0."""
import os
import re

import guest_boot
import machine

HYPERVISOR_ARGS = "loglvl=info dom0_mem=64M domU_mem=64M"


def boot_two(build, dom0_args, domu_args, hypervisor_args, extra=(),
             domu_ending="Domain 1 shut down: reason poweroff", timeout=240, smp=1):
    """Both domains from the reference kernel and initrd; the machine must end by itself with
    dom0's poweroff, a clean audit, and the domU's `domu_ending` line. smp: -smp N."""
    hv = guest_boot.hypervisor(build, "ours")
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    modules = [(kernel, dom0_args), (initrd, ""), (kernel, domu_args), (initrd, "")]
    result = machine.boot(hv.image, f"{HYPERVISOR_ARGS} {hypervisor_args}".strip(), modules, timeout=timeout,
                          memory="512M", extra=extra, smp=smp)
    guest_boot.expect_ended(result, hv, "Domain 0 shut down: reason poweroff", 0)
    machine.expect(domu_ending in result.serial, f"missing '{domu_ending}'", result)
    return result


def counter(serial, name):
    """A performance counter from the hypervisor's end-of-run summary (-1 if absent)."""
    m = re.search(rf"^\(XEN\)\s+{name}\s+(\d+)\s*$", serial, re.M)
    return int(m.group(1)) if m else -1
