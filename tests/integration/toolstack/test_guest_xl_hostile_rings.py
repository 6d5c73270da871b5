"""An xl-created domU turns its console and xenstore rings against their backend (issue 28), on
ours and on Xen 4.17 (the reference), through pvhvd.

pvhvd is the backend of both rings of a domU `xl create` makes, as xenconsoled and xenstored are
on Xen, and like them it keeps each ring mapped writable in dom0 for the domain's life (a lasting
mapping through the relay: tools/daemon/ring_page.h), so the frames hold a writable type. The
domU runs selftest=hostile-console-ring (its console ring cleared so that it would pass any
validation, mapped read-only, pinned as an L1 .. L4 and made its GDT: all -EINVAL),
hostile-store-ring (the same on its untouched xenstore page, with xenbus=off) and, on ours,
hostile-guest-frames (Xen 4.17 crashes a domU that pins it: its L1TF policy), then /hello, and
powers off; on_poweroff=destroy: the daemon destroys it and
lets go of the rings, so the domain is gone (no dying domain left) and every frame is back.

Before the lasting mappings, the daemon mapped a ring for one access at a time: every pin worked.

On ours, one domU per ptwr= mode (xl.cfg's ptwr_mode=), at once. Then, on both hypervisors: a
domU created paused, the daemon killed with -9 and started again (attached: its new relay session
drops what the old one held), and the domU unpaused: the restarted daemon holds the rings again,
and the same selftests pass. The machine ends with a clean frame audit (ours).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402

# Lines of each selftest (its checks and its "passed" line), as guest_boot.check_selftest counts.
RING_LINES = {"hostile-console-ring": 14, "hostile-store-ring": 16}
# hostile-guest-frames pins its registered areas' frame as an L1 whose not-present entries hold
# address bits: Xen 4.17 crashes a domU for such an entry (its L1TF mitigation, pv-l1tf=, on by
# default for domUs on a vulnerable CPU such as QEMU's Westmere), so there it runs as dom0 only
# (test_guest_hostile_frames.py).
FRAMES_LINES = {"hostile-guest-frames": 17}


def expected_lines(hv):
    return {**RING_LINES, **FRAMES_LINES} if hv.ends_itself else dict(RING_LINES)


def extra(hv):
    return f"selftest={'+'.join(expected_lines(hv))} xenbus=off init=/hello"


def console(run, name):
    """The domU's console log. Without NUL bytes: a daemon that reads the ring while the guest
    has it cleared (out_cons 0 under a larger out_prod) drains the zeros as text, in front of the
    guest's next line."""
    path = os.path.join(run.state, f"console-{name}.log")
    return open(path, errors="replace").read().replace("\0", "") if os.path.exists(path) else ""


def finished(log, tests):
    return all(f"selftest {t}: passed" in log or f"selftest {t}: failed" in log for t in tests) or "panic" in log


def check_selftests(run, hv, name):
    tests = expected_lines(hv)
    log = pvhvd_client.wait_for(f"{name}'s selftests",
                                lambda: finished(console(run, name), tests) and console(run, name), 300, run.daemon)
    total = 0
    for test, expected in tests.items():
        lines = [l for l in log.splitlines() if l.startswith(f"selftest {test}: ")]
        failures = [l for l in lines if ": FAIL" in l]
        machine.expect(not failures and f"selftest {test}: passed" in lines and len(lines) >= expected,
                       f"{name}: selftest {test}: {len(lines)} lines, failures {failures}:\n{log[-4000:]}")
        total += len(lines) - 1
    return total


def create(run, hv, name, mode, paused=False):
    args = ["create"] + (["-p"] if paused else []) + ["-q", "examples/hello.cfg", f'name="{name}"',
                                                      f'extra="{extra(hv)}"']
    if mode:
        args.append(f'ptwr_mode="{mode}"')
    run.xl_ok(*args)


def main():
    build, hv = guest_boot.arguments()
    with pvhvd_client.TestDaemon(build, ["--hypervisor", hv.name], prefix="pvhv-rings") as run:
        client = run.daemon.client()
        baseline = client.ok("info")["free_pages"]
        client.close()
        modes = ("emulate", "writable") if hv.ends_itself else ("",)
        for mode in modes:
            create(run, hv, f"rings-{mode or 'xen'}", mode)
        report = []
        for mode in modes:
            name = f"rings-{mode or 'xen'}"
            checks = check_selftests(run, hv, name)
            pvhvd_client.wait_gone(run.daemon, name)
            report.append(f"{mode or hv.name}: {checks} checks")

        # The daemon restarted between the build and the guest's first instruction.
        create(run, hv, "rings-restart", "", paused=True)
        run.daemon.kill9()
        run.daemon.restart_attached()
        log = run.daemon.text()
        machine.expect("read by copies" not in log, f"a ring the restarted daemon could not hold:\n{log[-3000:]}")
        run.xl_ok("unpause", "rings-restart")
        checks = check_selftests(run, hv, "rings-restart")
        pvhvd_client.wait_gone(run.daemon, "rings-restart")
        report.append(f"after a restart: {checks} checks")

        client = run.daemon.client()
        listed = [d["domid"] for d in client.ok("list")["domains"]]
        machine.expect(listed == [0], f"domains left behind (a dying domain the daemon still maps?): {listed}")
        after = pvhvd_client.settle_free(client, baseline)
        client.close()
        machine.expect(after == baseline, f"free pages {after}, {baseline} before the domUs")
        pvhvd_client.stop_and_check(run.daemon, hv)
    print(f"ok: {hv.name}: an xl domU's console and xenstore rings cannot be pinned or made its GDT "
          f"({'; '.join(report)}); every domain gone, every frame back")


if __name__ == "__main__":
    main()
