"""The hardware cost model: a secondary estimate beside the instruction counts.

Under -icount shift=0 a benchmark's figure counts instructions, and a trap, a full TLB flush
and a `mov` all count one. On hardware they do not. The model adds what the events cost:

    modelled cycles = instructions + c_trap x traps + c_flush x full flushes + c_invlpg x invlpg

per operation, with the events from our hypervisor's counters (traps: page faults, hypercalls
and guest user system calls, each one entry into the hypervisor; full flushes: CR3 writes,
every one of which flushes the TLB here (no PCIDs, PGE off); invlpg). The constants are a
range read from published measurements (bench/README.md, "The hardware cost model"): `low`
and `high` bound the answer, `typical` is the model's point estimate. Columns without counters
(real Xen 4.17) take their events from a profile of the same commit (bench/run_profile.py's
profile.json: the QEMU plugin counts traps and interrupts into the hypervisor, the guest kernel's
and user code's syscall instructions, CR3 writes and invlpg inside the same timed window);
without one they get no modelled figure.
"""

# (name, cycles) for each event class, low / typical / high: see bench/README.md.
CONSTANTS = {
    "low": {"trap": 150, "flush": 200, "invlpg": 80},
    "typical": {"trap": 400, "flush": 1000, "invlpg": 150},
    "high": {"trap": 1200, "flush": 4000, "invlpg": 300},
}
SETTINGS = ("low", "typical", "high")


def events_per_op(counters_per_op):
    """Traps, full flushes and invlpg per operation from /bench's counters, or None (no
    counters, or a results file from before /bench counted CR3 writes, invlpg and guest
    system calls)."""
    needed = ("page_faults", "hypercalls", "guest_syscalls", "cr3_writes", "invlpgs")
    if not counters_per_op or any(key not in counters_per_op for key in needed):
        return None
    c = counters_per_op
    return {"traps": c["page_faults"] + c["hypercalls"] + c["guest_syscalls"],
            "flushes": c["cr3_writes"],
            "invlpg": c["invlpgs"]}


def events_from_profile(run):
    """The same three classes from a profiled run: every entry into the hypervisor (a trap or
    interrupt, a hypercall's syscall, a guest user syscall, which a 64-bit PV guest takes
    through the hypervisor), CR3 writes, invlpg."""
    e = run["events_per_op"]
    return {"traps": e["traps"] + e["kernel_syscalls"] + e["user_syscalls"],
            "flushes": e["cr3_writes"],
            "invlpg": e["invlpgs"]}


def profile_events(document, profile):
    """(mode, benchmark) -> events per operation from `profile`, when it profiled the commit the
    results came from (a profile of other code would model other code); else {}."""
    if not profile:
        return {}
    ours = document.get("metadata", {}).get("git", {}).get("commit")
    theirs = profile.get("metadata", {}).get("git", {}).get("commit")
    if not ours or ours != theirs:
        return {}
    return {(run["mode"], run["benchmark"]): events_from_profile(run) for run in profile.get("runs", [])}


def modelled_cycles(instructions, events, constants):
    return (instructions + constants["trap"] * events["traps"]
            + constants["flush"] * events["flushes"] + constants["invlpg"] * events["invlpg"])


def model(document, profile=None):
    """Per benchmark and mode of a results.json document: instructions, events and modelled
    cycles per operation for each setting of the constants, the events from the counters or,
    for a column without them, from `profile` (bench/run_profile.py's profile.json of the same
    commit). Empty unless the run was deterministic (only then is a nanosecond an instruction)."""
    if not document.get("metadata", {}).get("deterministic"):
        return []
    profiled = profile_events(document, profile)
    rows = []
    for record in document.get("results", []):
        if record.get("status") != "ok":
            continue
        # 1 ns per instruction under -icount shift=0 (the total, not /bench's rounded figure).
        instructions = record["total_ns"] / record["iterations"]
        events = events_per_op(record.get("counters_per_op"))
        source = "counters"
        if events is None:
            events = profiled.get((record["mode"], record["benchmark"]))
            source = "profile" if events else None
        row = {"benchmark": record["benchmark"], "label": record["label"], "mode": record["mode"],
               "instructions": instructions, "events": events, "events_from": source,
               "cycles": None if events is None else
               {s: modelled_cycles(instructions, events, CONSTANTS[s]) for s in SETTINGS}}
        rows.append(row)
    return rows


def table_rows(rows):
    """The modelled table: typical (low-high), in thousands of cycles per fork, in cycles per
    PTE write."""
    modes = list(dict.fromkeys(r["mode"] for r in rows if r["cycles"] is not None))
    if not modes:
        return None
    by_key = {(r["benchmark"], r["mode"]): r for r in rows}
    labels = list(dict.fromkeys((r["benchmark"], r["label"]) for r in rows))
    out = [["benchmark", *modes, "unit"]]
    for benchmark, label in labels:
        cells = []
        for mode in modes:
            r = by_key.get((benchmark, mode))
            if r is None or r["cycles"] is None:
                cells.append("-")
                continue
            if benchmark == "pte_write":
                c = r["cycles"]
                cells.append(f"{c['typical']:.0f} ({c['low']:.0f}-{c['high']:.0f})")
            else:
                c = {s: r["cycles"][s] / 1000.0 for s in SETTINGS}
                cells.append(f"{c['typical']:.1f} ({c['low']:.1f}-{c['high']:.1f})")
        unit = "cycles/write" if benchmark == "pte_write" else "k cycles/op"
        out.append([label, *cells, f"{unit}, typical (low-high)"])
    return out
