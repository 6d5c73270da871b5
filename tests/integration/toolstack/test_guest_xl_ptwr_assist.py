"""The writable_pagetables VM assist for a domU, on ours and on Xen 4.17 (the reference).

Xen takes over a domU kernel's plain store to its own L1 table (emulates it) only once the
domain enabled VMASST_TYPE_writable_pagetables, as Linux does at boot; without it the store is
bounced as a page fault. Our guest kernel enables the assist; selftest=ptwr-assist switches it
off for one store (which must fault, the entry unchanged) and on again (the store taken over).
The domU comes from `xl create` (Xen 4.17 builds no domU at boot); dom0's side, served without
the assist on both, is in selftest=mmu (test_guest_selftest.py).
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402


def main():
    build, hv = guest_boot.arguments()
    with pvhvd_client.TestDaemon(build, ["--hypervisor", hv.name], prefix="pvhv-assist") as run:
        run.xl_ok("create", "-q", "examples/hello.cfg", 'extra="selftest=ptwr-assist pte=direct init=/hello"')
        log_path = os.path.join(run.state, "console-hello.log")
        read = lambda: open(log_path, errors="replace").read() if os.path.exists(log_path) else ""  # noqa: E731
        pvhvd_client.wait_for("the domU's selftest", lambda: "selftest ptwr-assist: passed" in read()
                              or "selftest ptwr-assist: failed" in read() or "panic" in read(), 240, run.daemon)
        log = read()
        lines = [l for l in log.splitlines() if l.startswith("selftest ptwr-assist: ")]
        machine.expect("selftest ptwr-assist: passed" in log and not any(": FAIL" in l for l in lines),
                       f"selftest=ptwr-assist as a domU:\n{log[-3000:]}")
        machine.expect(any("a domU's plain store to its L1 faults: ok" in l for l in lines), f"no domU check: {lines}")
        deadline = time.monotonic() + 120
        while "hello" in run.xl_ok("list") and time.monotonic() < deadline:
            time.sleep(0.5)
        pvhvd_client.stop_and_check(run.daemon, hv)
    print(f"ok: {hv.name}: a domU's store to its L1 faults without the writable_pagetables assist, "
          f"is emulated with it ({len(lines)} checks)")


if __name__ == "__main__":
    main()
