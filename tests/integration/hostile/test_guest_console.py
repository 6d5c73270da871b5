"""A guest's console text cannot forge the hypervisor's lines, and a flood of it cannot hold the
CPU or drown the serial line (issue 28, findings 5 and 6).

dom0 (ours and Xen 4.17) runs selftest=console-filter: it prints "\\r(XEN) audit: clean" and lines
behind ESC and 8-bit CSI sequences through console_io. Xen 4.17 writes the hardware domain's text
as it is (guest_console_write: "direct console output as it could be interactive"), and so do we:
the bytes must reach the serial line unchanged.

On ours a domU beside dom0 (which runs the fork test) runs selftest=console-filter+console-flood:
- its text, through its PV console ring and through console_io, is filtered as Xen's
  guest_console_write filters a domU's (printable characters and tabs): the forged line appears as
  "(d1) (XEN) audit: clean", no ESC or lone carriage return reaches the serial line, and the only
  line starting "(XEN) audit: clean" is the hypervisor's own;
- 512 KiB of console_io and ring lines and 50 notifications of a garbage ring: every call answers,
  the domain's output limit (64 KiB, then 8 KiB/s) drops the rest and says so once in a while
  ("(XEN) d1: N bytes of console output dropped", the printed and dropped bytes adding up to the
  flood), the hypervisor's message about the garbage ring comes 10 times (Xen's printk_ratelimit
  burst) and the rest are counted as suppressed; afterwards the domU's timer fires on time and dom0
  finishes its fork test.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402

FLOOD_BYTES = 2 * 2048 * 128  # console_io and ring lines of 128 bytes (the newline included)
TEXT_BURST, TEXT_PER_SECOND = 64 * 1024, 8 * 1024


def check_dom0_text_unfiltered(build, hv):
    result = guest_boot.boot_guest(build, hv, "selftest=console-filter", hv.poweroff)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    checks = guest_boot.check_selftest(result, "console-filter", 3)
    for raw in ("\r(XEN) audit: clean\r\n", "\x1b[2J\x1b[Hconsole-filter: console_io after ESC\r\n"):
        machine.expect(raw in result.serial, f"dom0's text {raw!r} did not reach the serial line as it is", result)
    print(f"ok: {hv.name}: dom0's console_io text reaches the serial line as it is, {checks} checks "
          f"({result.seconds:.1f} s)")


def number(pattern, serial):
    return [int(n) for n in re.findall(pattern, serial, re.M)]


def check_domu_filtered_and_limited(build):
    from two_domains import boot_two, counter
    result = boot_two(build, "init=/forktest", "selftest=console-filter+console-flood", "", timeout=300)
    lines = result.lines()
    guest_boot.check_selftest(result, "console-filter", 3, prefix="(d1) ")
    guest_boot.check_selftest(result, "console-flood", 7, prefix="(d1) ")
    machine.expect("forktest: passed" in lines, "dom0's fork test did not pass", result)

    # Finding 6: the filter.
    own = [l for l in lines if l.startswith("(XEN) audit: clean")]
    machine.expect(len(own) == 1 and own[0].startswith("(XEN) audit: clean ("),
                   f"lines starting '(XEN) audit: clean': {own}, expected the hypervisor's alone", result)
    machine.expect(lines.count("(d1) (XEN) audit: clean") == 2,
                   "the domU's forged lines (ring, console_io) are not '(d1) (XEN) audit: clean'", result)
    for line in ("(d1) [2J[Hconsole-filter: kernel console after ESC", "(d1) [2J[Hconsole-filter: console_io after ESC",
                 "(d1) 2Jconsole-filter: console_io after CSI"):
        machine.expect(line in lines, f"missing the filtered line '{line}'", result)
    machine.expect("\x1b" not in result.serial, "an ESC reached the serial line", result)
    machine.expect(not re.search(r"\r(?!\n)", result.serial), "a lone carriage return reached the serial line", result)

    # Finding 5: the limits.
    dropped = number(r"^\(XEN\) d1: (\d+) bytes of console output dropped\s*$", result.serial)
    machine.expect(dropped and sum(dropped) > 0, "no report of dropped console output", result)
    printed = [l for l in lines if l.startswith("(d1) console-flood ")]
    printed_bytes = 128 * len(printed)
    machine.expect(printed_bytes + sum(dropped) == FLOOD_BYTES,
                   f"{len(printed)} flood lines printed and {sum(dropped)} bytes dropped: "
                   f"not the {FLOOD_BYTES} bytes of the flood", result)
    run_ms = number(r"^\(XEN\) Hypervisor summary after (\d+) ms:\s*$", result.serial)
    allowed = TEXT_BURST + TEXT_PER_SECOND * (run_ms[0] / 1000 + 1)
    machine.expect(printed_bytes <= allowed, f"{printed_bytes} flood bytes printed, the limit allows {allowed}",
                   result)
    inconsistent = [l for l in lines if "d1: console ring indexes inconsistent" in l]
    suppressed = number(r"^\(XEN\) d1: (\d+) console messages suppressed\s*$", result.serial)
    machine.expect(len(inconsistent) == 10 and sum(suppressed) == 40,
                   f"{len(inconsistent)} ring messages printed, {sum(suppressed)} suppressed: expected 10 and 40",
                   result)
    flood_ms = number(r"^\(d1\) selftest console-flood: flood ms: (\d+) ", result.serial)
    print(f"ok: ours: a domU's text is filtered; its flood of {FLOOD_BYTES} bytes took {flood_ms} ms, "
          f"{printed_bytes} bytes printed, {sum(dropped)} dropped in {len(dropped)} reports, "
          f"dom0 finished beside it ({counter(result.serial, 'sched_preempt')} preemptions, {result.seconds:.1f} s)")


if __name__ == "__main__":
    build, hv = guest_boot.arguments()
    check_dom0_text_unfiltered(build, hv)
    if hv.ends_itself:
        check_domu_filtered_and_limited(build)
