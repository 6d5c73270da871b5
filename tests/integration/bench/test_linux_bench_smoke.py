"""The Linux table's harness (bench/run_linux_bench.py, `make bench`) once, small: 3 iterations
of each loop, Linux native under QEMU and as a boot-module domU on ours (ptwr=emulate), under
-icount shift=0; every figure there and positive, ours' hypervisor counters read from its
summary (not their values). The Xen 4.17 domU column is test_guest_xl_linux's path."""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "bench"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import run_linux_bench  # noqa: E402


def main():
    build, _ = guest_boot.arguments()
    with tempfile.TemporaryDirectory() as tmp:
        output = os.path.join(tmp, "linux.json")
        status = run_linux_bench.main(["--build", build, "--scale", "0.003", "--columns", "native,ours-emulate",
                                       "--timeout", "240", "--output", output])
        with open(output) as f:
            results = json.load(f)
    machine.expect(status == 0, f"run_linux_bench failed: {results}")
    machine.expect(results["iterations"] == 3, f"iterations {results['iterations']}")
    for name in ("native", "ours-emulate"):
        column = results["columns"][name]
        for key, _ in run_linux_bench.BENCHMARKS:
            machine.expect(column["per_op_us"].get(key, 0) > 0, f"{name}: no {key} figure: {column}")
    counters = results["columns"]["ours-emulate"]["counters"]
    machine.expect(counters.get("mmu_hypercalls", 0) > 0 and counters.get("ptwr_emulations", 0) > 0,
                   f"ours' counters missing: {counters}")
    print("ok: the Linux bench harness gives native and ours-emulate figures and ours' counters")


if __name__ == "__main__":
    main()
