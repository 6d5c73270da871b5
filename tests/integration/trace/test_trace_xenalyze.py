#!/usr/bin/env python3
"""xenalyze on the Xen 4.17 reference trace must print what Xen's own xenalyze printed for it
(counts, seconds, averages; see trace/README.md for the documented differences), and its
--json / --svg outputs must be valid. Where Xen's own xenalyze is built
(build/deps/xen-4.17/xenalyze, scripts/install-deps.sh), it reads the traces our hypervisor
wrote (trace/fixtures/pvhv-*.trace) too: the same summary as ours at the same --cpu-hz, and as
many records. Fast: no QEMU."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# shared/ sits beside the checkout (developers' machines and CI alike).
FIXTURES = os.environ.get("TRACE_FIXTURES", os.path.join(os.path.dirname(ROOT), "shared", "fixtures"))
if not os.path.isdir(FIXTURES):
    FIXTURES = "/work/shared/fixtures"  # the same fallback as trace/CMakeLists.txt
NAME = "xen-4.17-linux-6.1-dom0-sh-loop"


def comparable_lines(text):
    """Summary lines without xenalyze's stderr chatter and without the weighted percentiles,
    which xenalyze computes with a partial quickselect that we do not reproduce."""
    lines = []
    for line in text.splitlines():
        if re.match(r"^(Using|scan_for|Creating|init_pcpus|read_record|deactivate)", line):
            continue
        lines.append(re.sub(r"\s*\{[^}]*\}$", "", line).rstrip())
    return lines


def run(xenalyze, *args):
    result = subprocess.run([xenalyze, *args], capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        sys.exit(f"FAIL: xenalyze {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result.stdout


def check_summary(xenalyze, trace, reference):
    ours = comparable_lines(run(xenalyze, "--summary", trace))
    theirs = comparable_lines(open(reference).read())
    # Affinity lines carry plain percentiles: those we reproduce exactly, compare them whole.
    affinity = [l for l in open(reference).read().splitlines() if "affinity" in l or re.match(r"^\s+\[\d+\]:", l)]
    ours_full = run(xenalyze, "--summary", trace).splitlines()
    for line in affinity:
        if line not in ours_full:
            sys.exit(f"FAIL: affinity line differs: {line!r}")
    if ours != theirs:
        import difflib
        diff = "\n".join(difflib.unified_diff(theirs, ours, "xen xenalyze", "ours", lineterm=""))
        sys.exit("FAIL: summary differs from Xen's xenalyze:\n" + diff)
    print(f"summary: {len(ours)} lines agree with Xen's xenalyze (percentiles aside)")


def check_json(xenalyze, trace):
    doc = json.loads(run(xenalyze, "--json", trace))
    dom0 = next(d for d in doc["domains"] if d["domain"] == 0)["vcpus"][0]
    assert dom0["pv_events"]["page_fault"] == 3341, dom0["pv_events"]
    assert dom0["pv_events"]["ptwr"] == 780
    assert dom0["hypercalls"]["mmu_update"] == 29583
    assert doc["pvmmu"]["lost_records"] == 90411
    assert doc["cpu_hz"] == {"hz": 2400000000, "source": "default"}
    assert doc["diagnostics"]["errors"] == 0
    # Xen records a page fault only when it bounces it to the guest: all 3341 are bounced, and
    # with no fault record of ours none is paired with the 780 emulations.
    assert doc["pvmmu"]["faults_bounced"] == 3341, doc["pvmmu"]["faults_bounced"]
    assert doc["pvmmu"]["pte_write_faults"]["count"] == 0
    emulation = doc["pvmmu"]["pairs"]["fault_to_emulation"]
    assert emulation["cost"]["events"] == 0 and emulation["unmatched"] == 780, emulation
    doc = json.loads(run(xenalyze, "--json", "--cpu-hz=1G", trace))
    assert abs(doc["total_seconds"] - 7.76 * 2.4) < 0.02, doc["total_seconds"]
    print("json: valid, counts agree")


def check_svg(xenalyze, trace):
    with tempfile.TemporaryDirectory() as out:
        run(xenalyze, "--svg", out, trace)
        names = sorted(os.listdir(out))
        assert "ptes-per-table.svg" in names and "cost-by-mode.svg" in names, names
        for name in names:
            root = ET.parse(os.path.join(out, name)).getroot()
            assert root.tag.endswith("svg"), (name, root.tag)
    print("svg: well-formed")


def check_bad_input(xenalyze):
    with tempfile.NamedTemporaryFile(suffix=".trace") as f:
        f.write(b"\x7fELF" + bytes(60))
        f.flush()
        result = subprocess.run([xenalyze, "--summary", f.name], capture_output=True, text=True, timeout=30)
        assert result.returncode == 2 and "not a xentrace file" in result.stderr, result
    result = subprocess.run([xenalyze, "--cpu-hz=fast", "x"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and "invalid --cpu-hz" in result.stderr, result
    print("bad input: clear errors")


PVHV_FIXTURES = os.path.join(ROOT, "trace", "fixtures")
XEN_RECORD = re.compile(r"^(\]|\s+\d+\.\d+ )")  # Xen's --dump-all: a record ("]": one it does not decode)
OUR_RECORD = re.compile(r"^\s+\d+\.\d+ ")


def check_xen_reads_ours(xenalyze, theirs):
    """Xen 4.17's xenalyze on our hypervisor's traces: the summary agrees with ours at the same
    --cpu-hz (by default ours takes the trace's TSC frequency record, Xen's assumes 2.4 GHz), and
    both dump as many records."""
    traces = sorted(f for f in os.listdir(PVHV_FIXTURES) if f.startswith("pvhv-") and f.endswith(".trace"))
    assert traces, f"no pvhv-*.trace in {PVHV_FIXTURES}"
    for name in traces:
        trace = os.path.join(PVHV_FIXTURES, name)
        ours = comparable_lines(run(xenalyze, "--cpu-hz=2.4G", "--summary", trace))
        xen = comparable_lines(run(theirs, "--cpu-hz=2.4G", "--summary", trace))
        if ours != xen:
            import difflib
            diff = "\n".join(difflib.unified_diff(xen, ours, "xen xenalyze", "ours", lineterm=""))
            sys.exit(f"FAIL: {name}: our summary differs from Xen's xenalyze on our trace:\n" + diff)
        our_records = sum(1 for l in run(xenalyze, "--dump-all", trace).splitlines() if OUR_RECORD.match(l))
        xen_records = sum(1 for l in run(theirs, "--dump-all", trace).splitlines() if XEN_RECORD.match(l))
        if our_records != xen_records or our_records == 0:
            sys.exit(f"FAIL: {name}: --dump-all shows {our_records} records, Xen's xenalyze {xen_records}")
        print(f"{name}: Xen's xenalyze agrees ({len(ours)} summary lines, {our_records} records)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    args = parser.parse_args()
    xenalyze = os.path.join(args.build, "bin", "xenalyze")
    if not os.access(xenalyze, os.X_OK):
        sys.exit(f"FAIL: {xenalyze} not built (add_subdirectory(trace) in CMakeLists.txt)")
    trace = os.path.join(FIXTURES, NAME + ".trace")
    check_summary(xenalyze, trace, os.path.join(FIXTURES, NAME + ".summary.txt"))
    check_json(xenalyze, trace)
    check_svg(xenalyze, trace)
    check_bad_input(xenalyze)
    theirs = os.path.join(args.build, "deps", "xen-4.17", "xenalyze")
    if os.access(theirs, os.X_OK):
        check_xen_reads_ours(xenalyze, theirs)
    else:
        print(f"{theirs} not built (scripts/install-deps.sh): Xen's xenalyze not run")
    print("PASS")


if __name__ == "__main__":
    main()
