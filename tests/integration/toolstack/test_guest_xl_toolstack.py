"""The toolstack end to end (toolstack_scenario.py): pvhvd, two domUs from examples/*.cfg through
`xl create`, `xl list` in Xen's format, forktest's console to `init exited: status 0`,
`xl shutdown -w`, `xl destroy`, free memory back at baseline, the daemon killed with -9 and
restarted with the list unchanged. On ours and on Xen 4.17 with our relay dom0."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import toolstack_scenario  # noqa: E402


def main():
    build, hv = guest_boot.arguments()
    toolstack_scenario.run(build, hv)
    print(f"ok: {hv.name}: pvhvd and xl created, listed, shut down and destroyed two domUs; "
          "the list survived kill -9 of the daemon")


if __name__ == "__main__":
    main()
