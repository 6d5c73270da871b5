"""The start of day of a domU built by our host builder, as the guest will see it: its
start_info page, its page-table tree and vCPU 0's context, read back from its memory before it
runs, machine frames turned into its own pfns (xc_domu_lifecycle --layout). On Xen 4.17 the
read-back must be what the builder planned (checked by the program). With --hypervisor ours the
same domU is built on Xen 4.17 first and on ours next: every layout line must be the same."""
import difflib
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import xenctrl_domu  # noqa: E402

ARGS = ["--layout", "--skip-run"]


def layout_on(build, hv):
    boot, run = xenctrl_domu.run(build, hv, ARGS, timeout=560)
    print(run.stdout)
    machine.expect(run.returncode == 0 and "xc_domu: passed" in run.stdout,
                   f"{hv.name}: xc_domu_lifecycle --layout failed (status {run.returncode}): {run.stdout}\n{run.stderr}",
                   boot)
    guest_boot.expect_ended(boot, hv, hv.poweroff, 0)
    lines = xenctrl_domu.layout_lines(run.stdout)
    machine.expect(any(" L1 pfn " in line for line in lines) and any("start_info magic" in line for line in lines),
                   f"{hv.name}: no layout printed", boot)
    check_mapping(lines, run.stdout, hv.name)
    return lines


def check_mapping(lines, stdout, name):
    """The L1s as the guest sees them map pfn 0 up to the end of the initial mapping, each pfn
    once, in order; the page-table frames read-only, every other frame writable."""
    built = re.search(r"xc_domu: built: (\d+) pages, .* (\d+) page-table frames at (0x[0-9a-f]+), "
                      r"boot stack pfn (\d+), mapping ends (0x[0-9a-f]+)", stdout)
    machine.expect(built is not None, f"{name}: no built line")
    base = 0xffffffff80000000
    pt_frames, pt_base, mapping_end = int(built.group(2)), int(built.group(3), 16), int(built.group(5), 16)
    first_pt = (pt_base - base) // 4096
    mapped = []
    for line in lines:
        m = re.match(r"xc_domu: layout: L1 pfn \d+ \[(\d+)\.\.(\d+)\] -> pfn (\d+)\.\.(\d+) flags (0x[0-9a-f]+)", line)
        if not m:
            continue
        first, last, flags = int(m.group(3)), int(m.group(4)), int(m.group(5), 16)
        for pfn in range(first, last + 1):
            writable = bool(flags & 2)
            in_tables = first_pt <= pfn < first_pt + pt_frames
            machine.expect(writable != in_tables, f"{name}: pfn {pfn} flags {flags:#x}")
            mapped.append(pfn)
    machine.expect(mapped == list(range((mapping_end - base) // 4096)),
                   f"{name}: the L1s map {len(mapped)} pfns, not 0..{(mapping_end - base) // 4096 - 1} in order")


def main():
    build, hv = guest_boot.arguments()
    if hv.name == "xen417":
        lines = layout_on(build, hv)
        print(f"ok: xen417: {len(lines)} layout lines, as the builder planned")
        return
    reference = layout_on(build, guest_boot.hypervisor(build, "xen417"))
    ours = layout_on(build, hv)
    diff = list(difflib.unified_diff(reference, ours, "xen417", "ours", lineterm=""))
    machine.expect(not diff, "the layouts differ:\n" + "\n".join(diff))
    print(f"ok: ours: the same {len(ours)} layout lines as Xen 4.17")


if __name__ == "__main__":
    main()
