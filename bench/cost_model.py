"""The hardware cost model: a secondary estimate beside the instruction counts.

Under -icount shift=0 a benchmark's figure counts instructions, and a trap, a full TLB flush
and a `mov` all count one. On hardware they do not. The model adds what the events cost:

    modelled cycles = instructions + c_trap x traps + c_flush x full flushes + c_invlpg x invlpg

per operation, with the events from our hypervisor's counters (traps: page faults, hypercalls
and guest user system calls, each one entry into the hypervisor; full flushes: CR3 writes,
every one of which flushes the TLB here (no PCIDs, PGE off); invlpg). The constants are a
range read from published measurements (bench/README.md, "The hardware cost model"): `low`
and `high` bound the answer, `typical` is the model's point estimate. Columns without counters
(real Xen 4.17) get no modelled figure here: `make profile` counts their events.
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


def modelled_cycles(instructions, events, constants):
    return (instructions + constants["trap"] * events["traps"]
            + constants["flush"] * events["flushes"] + constants["invlpg"] * events["invlpg"])


def model(document):
    """Per benchmark and mode of a results.json document: instructions, events and modelled
    cycles per operation for each setting of the constants. Empty unless the run was
    deterministic (only then is a nanosecond an instruction)."""
    if not document.get("metadata", {}).get("deterministic"):
        return []
    rows = []
    for record in document.get("results", []):
        if record.get("status") != "ok":
            continue
        # 1 ns per instruction under -icount shift=0 (the total, not /bench's rounded figure).
        instructions = record["total_ns"] / record["iterations"]
        events = events_per_op(record.get("counters_per_op"))
        row = {"benchmark": record["benchmark"], "label": record["label"], "mode": record["mode"],
               "instructions": instructions, "events": events,
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
