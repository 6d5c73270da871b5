"""`make fuzz`: the fuzzing domain's campaigns (guest/fuzz/).

Nine campaigns by default: the fuzzer as dom0, as domain 1 beside a dom0 that audits for it and
then runs its own work, and as dom0 running the destroy class only (role "destroy": domains
created, fed, held and destroyed while calls for them race the teardown), each under
ptwr=emulate and ptwr=writable; --ops operations each (10^6; the destroy role --destroy-ops,
--ops/50 by default, whose operations each build a domain, in chunks, audits and progress
lines 50 times smaller), in chunks of --chunk operations (one boot each: a hang costs one
chunk), chunk k running operations k*chunk .. (k+1)*chunk-1 of the one seed. Role "smp" is
dom0 on --vcpus vCPUs (fuzz_vcpus=, -smp N, sched_smp=1, -icount shift=0; guest/README.md) under
ptwr=emulate, writable and adaptive: --ops operations per vCPU, vCPUs 1.. racing vCPU 0's stream
with mmu/mmuext streams of their own on the same tables, meeting at each audit. Operation N of a
seed is the same whichever chunk it is in, so every failure is "seed S, operation N" and
replays with the command printed.

Results go to build/fuzz/state.json as chunks finish: running the same command again skips the
chunks already done by the same hypervisor and guest images (--fresh starts over); failed
chunks' consoles are kept in build/fuzz/.
The summary counts operations, boots and failures (hypervisor faults, hangs, audit mismatches,
the fuzzer's own isolation checks, ...); the exit status is non-zero if anything failed.
"""
import argparse
import hashlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz_boot  # noqa: E402

ROLES = ("dom0", "domU", "destroy", "smp")
MODES = ("emulate", "writable")
SMP_MODES = ("emulate", "writable", "adaptive")  # the role smp runs under every ptwr= mode


def images_digest(build):
    """Which hypervisor and guest kernel ran: a chunk done by other images is not done."""
    digest = hashlib.sha1()
    for path in (os.path.join(build, "xen", "xen"), os.path.join(build, "guest", "kernel")):
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()[:12]


def key(chunk, images):
    vcpus = f"/vcpus{chunk.vcpus}" if chunk.vcpus > 1 else ""
    return (f"{images}/{chunk.role}/{chunk.mode}/{chunk.seed:#x}/{chunk.start}/{chunk.ops}/{chunk.skip}/"
            f"{chunk.audit_every}{vcpus}")


def load_state(path):
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return {}


def save_state(path, state):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def run_chunk(build, out_dir, chunk, locate):
    outcome = fuzz_boot.run(build, chunk)
    record = {"passed": outcome.passed, "failures": outcome.failures, "ops": outcome.ops_ran,
              "racer_ops": outcome.racer_ops,
              "audits": outcome.audits, "seconds": round(outcome.seconds, 1), "last_op": outcome.last_op,
              "replay": chunk.command()}
    if not outcome.passed:
        name = f"{label(chunk)}-{chunk.mode}-{chunk.seed:x}-{chunk.start}.log"
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(outcome.serial)
        record["console"] = os.path.join(out_dir, name)
        if locate and any(k in ("hypervisor fault", "hang", "machine reset", "fuzzer died", "isolation check")
                          for k, _ in outcome.failures):
            found, replay, _ = fuzz_boot.locate(build, outcome)
            if found:
                record["operation"], record["description"] = found
                record["replay"] = replay.command()
                record["alone"] = chunk.alone(found[0]).command()
    return record


def label(chunk):
    return f"smp{chunk.vcpus}" if chunk.vcpus > 1 else chunk.role


def print_record(chunk, record):
    status = "ok" if record["passed"] else "FAILED"
    others = f" (+{record['racer_ops']} on vCPUs 1-{chunk.vcpus - 1})" if chunk.vcpus > 1 else ""
    print(f"  {label(chunk):4} ptwr={chunk.mode:8} seed {chunk.seed:#x} ops {chunk.start:>7}-{chunk.start + chunk.ops - 1:<7} "
          f"{status:6} {record['ops']:>6} ran{others}, {record['audits']:>3} audits, {record['seconds']:6.1f} s", flush=True)
    for kind, detail in record["failures"]:
        print(f"      {kind}: {detail}")
    if not record["passed"]:
        if "operation" in record:
            print(f"      at operation {record['operation']}:")
            print("        " + record["description"].replace("\n", "\n        "))
        print(f"      console: {record.get('console')}")
        print(f"      replay:  {record['replay']}")
        if "alone" in record:
            print(f"      alone:   {record['alone']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(fuzz_boot.ROOT, "build"))
    parser.add_argument("--seed", type=lambda s: int(s, 0), default=0x2026)
    parser.add_argument("--ops", type=int, default=1000000, help="operations per campaign")
    parser.add_argument("--chunk", type=int, default=100000, help="operations per boot")
    parser.add_argument("--destroy-ops", type=int, default=None,
                        help="operations of the destroy role (default: --ops / 50)")
    parser.add_argument("--audit", type=int, default=10000, help="audit every this many operations")
    parser.add_argument("--progress", type=int, default=10000)
    parser.add_argument("--roles", default=",".join(ROLES))
    parser.add_argument("--modes", default="",
                        help=f"ptwr= modes (default: {','.join(MODES)}; the smp role {','.join(SMP_MODES)})")
    parser.add_argument("--vcpus", type=int, default=4, help="vCPUs of the smp role (fuzz_vcpus=, -smp)")
    parser.add_argument("--skip", default="", help="fuzz_skip=: leave out known-failing kinds (e.g. nt+iret_selectors)")
    parser.add_argument("--fresh", action="store_true", help="forget the chunks done by earlier runs")
    parser.add_argument("--no-locate", action="store_true", help="do not replay failures to find their operation")
    args = parser.parse_args()

    out_dir = os.path.join(args.build, "fuzz")
    os.makedirs(out_dir, exist_ok=True)
    state_path = os.path.join(out_dir, "state.json")
    state = {} if args.fresh else load_state(state_path)
    images = images_digest(args.build)
    roles = [r for r in args.roles.split(",") if r]
    chosen = [m for m in args.modes.split(",") if m]

    def modes_of(role):
        return chosen or list(SMP_MODES if role == "smp" else MODES)
    print(f"fuzz: seed {args.seed:#x}, {args.ops} operations per campaign in chunks of {args.chunk}, "
          f"audit every {args.audit}, images {images}, campaigns {', '.join(f'{r}/{m}' for r in roles for m in modes_of(r))}"
          f"{', skip ' + args.skip if args.skip else ''}", flush=True)
    started = time.monotonic()
    summary = []
    for role in roles:
        for mode in modes_of(role):
            totals = {"ops": 0, "racer_ops": 0, "boots": 0, "reused": 0, "failures": {}, "failed_chunks": 0}
            campaign_ops = args.ops
            if role == "destroy":
                campaign_ops = args.destroy_ops if args.destroy_ops is not None else max(1, args.ops // 50)
            chunk_ops = args.chunk if role != "destroy" else max(1, args.chunk // 50)
            for start in range(0, campaign_ops, chunk_ops):
                ops = min(chunk_ops, campaign_ops - start)
                scale = 50 if role == "destroy" else 1
                chunk = fuzz_boot.Chunk("dom0" if role == "smp" else role, mode, args.seed, start, ops,
                                        max(1, args.audit // scale), max(1, args.progress // scale), args.skip,
                                        vcpus=args.vcpus if role == "smp" else 1)
                record = state.get(key(chunk, images))
                if record is None:
                    record = run_chunk(args.build, out_dir, chunk, not args.no_locate)
                    state[key(chunk, images)] = record
                    save_state(state_path, state)
                else:
                    totals["reused"] += 1
                print_record(chunk, record)
                totals["ops"] += record["ops"]
                totals["racer_ops"] += record.get("racer_ops", 0)
                totals["boots"] += 1
                if not record["passed"]:
                    totals["failed_chunks"] += 1
                for kind, _ in record["failures"]:
                    totals["failures"][kind] = totals["failures"].get(kind, 0) + 1
            summary.append((role, mode, totals))

    print(f"\nfuzz summary (seed {args.seed:#x}{', skip ' + args.skip if args.skip else ''}, "
          f"{time.monotonic() - started:.0f} s):")
    print(f"  {'campaign':18} {'operations':>10} {'boots':>6} {'faults':>7} {'resets':>7} {'hangs':>6} {'audit':>6} "
          f"{'other':>6}")
    failed = False
    for role, mode, t in summary:
        f = t["failures"]
        main_kinds = ("hypervisor fault", "machine reset", "hang", "audit mismatch")
        other = {k: n for k, n in f.items() if k not in main_kinds}
        print(f"  {role + ' ptwr=' + mode:18} {t['ops']:>10} {t['boots']:>6} {f.get('hypervisor fault', 0):>7} "
              f"{f.get('machine reset', 0):>7} {f.get('hang', 0):>6} {f.get('audit mismatch', 0):>6} {sum(other.values()):>6}"
              + (f"   ({', '.join(f'{k} {n}' for k, n in sorted(other.items()))})" if other else "")
              + (f"   (+{t['racer_ops']} operations on the other vCPUs)" if t["racer_ops"] else ""))
        failed = failed or t["failed_chunks"] > 0
    print("fuzz: " + ("FAILED" if failed else "passed") + f" (state: {state_path})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
