"""`make run`: boots our hypervisor under QEMU with dom0 = the reference guest kernel and its
initrd, prints everything the machine said, and a one-line verdict."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402


def dom0_modules(build, kernel_args=""):
    return [(os.path.join(build, "guest", "kernel"), kernel_args),
            (os.path.join(build, "guest", "initrd.cpio"), "")]


def boot_ours(build, kernel_args="", hypervisor_args="loglvl=info dom0_mem=64M", timeout=120, smp=1):
    return machine.boot(machine.ours(build), hypervisor_args, dom0_modules(build, kernel_args), timeout=timeout,
                        smp=smp)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None)
    parser.add_argument("--show", action="store_true", help="print the serial console")
    parser.add_argument("--kernel-args", default="")
    parser.add_argument("--smp", type=int, default=1, help="the machine's CPU count (-smp N)")
    args = parser.parse_args()
    build = machine.build_dir(args.build)
    boot = boot_ours(build, args.kernel_args, smp=args.smp)
    if args.show:
        print(boot.serial)
    verdict = "timed out" if boot.timed_out else f"exit value {boot.debug_exit_value()}"
    print(f"--- machine ended after {boot.seconds:.1f} s: {verdict}")
    return 0 if boot.debug_exit_value() == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
