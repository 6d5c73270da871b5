"""Our hypervisor boots dom0 = the reference guest kernel, which runs /init from its initrd in
ring 3; init exits 0, dom0 powers off and the hypervisor ends the machine with exit value 0."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import boot as run  # noqa: E402
import machine  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None)
    build = machine.build_dir(parser.parse_args().build)
    boot = run.boot_ours(build)
    machine.expect(not boot.timed_out, "machine hung", boot)
    machine.expect("Starting dom0" in boot.serial, "dom0 did not start", boot)
    machine.expect("hello from init" in boot.serial, "init did not print", boot)
    machine.expect("init exited: status 0" in boot.serial, "init did not exit 0", boot)
    machine.expect("Domain 0 shut down: reason poweroff" in boot.serial, "no poweroff report", boot)
    machine.expect("Hypervisor summary" in boot.serial, "no hypervisor summary", boot)
    machine.expect(boot.debug_exit_value() == 0, f"exit value {boot.debug_exit_value()}", boot)
    print("ok: dom0 booted, ran init in ring 3 and powered off")


if __name__ == "__main__":
    main()
