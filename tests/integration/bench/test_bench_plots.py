"""make bench's pictures (bench/plot_bench.py, under Debian's Python and matplotlib) drawn from a
results.json the real bench wrote (tests/integration/bench/data/bench_results.json, bench/run_bench.py's
own output at the commit its metadata names), without QEMU: a picture for each benchmark some
column measured and none for the others, each showing every column that measured it with its
figure and its ratios to the Xen columns, in the bench's order (plots.json, checked against the
results), and each a real PNG. Takes --build (and ignores --hypervisor) like every integration
test."""
import argparse
import json
import os
import shutil
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "bench"))
import machine  # noqa: E402
import plot_bench  # noqa: E402

FIXTURE = os.path.join(HERE, "data", "bench_results.json")


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    machine.expect(head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build")
    parser.add_argument("--hypervisor")
    parser.parse_args()
    with open(FIXTURE) as f:
        document = json.load(f)
    order = list(document["metadata"]["modes"])
    measured = {}
    for r in document["results"]:
        if r["status"] == "ok":
            measured.setdefault(r["benchmark"], []).append(r)
    with tempfile.TemporaryDirectory(prefix="pvhv-plots") as tmp:
        results = os.path.join(tmp, "results.json")
        shutil.copy(FIXTURE, results)
        machine.expect(plot_bench.draw(["--results", results]) == 0, "plot_bench failed on a real results.json")
        with open(os.path.join(tmp, "plots.json")) as f:
            index = json.load(f)
        drawn = {figure["benchmark"]: figure for figure in index["benchmarks"]}
        machine.expect(set(drawn) == set(measured), f"pictures for {sorted(drawn)}, measured {sorted(measured)}")
        pictures = sorted(n for n in os.listdir(tmp) if n.endswith(".png"))
        machine.expect(pictures == sorted(f"plot-{b}.png" for b in measured), f"files: {pictures}")
        for benchmark, records in measured.items():
            figure = drawn[benchmark]
            expected = sorted(records, key=lambda r: order.index(r["mode"]))
            machine.expect([(c["mode"], c["value"]) for c in figure["columns"]] ==
                           [(r["mode"], r["per_op"]) for r in expected], f"{benchmark}: columns {figure['columns']}")
            for column in figure["columns"]:
                ratios = [(x["xen"], x["ratio"]) for x in document["xen_ratios"] if x["benchmark"] == benchmark
                          and x["mode"] == column["mode"] and x["ratio"] is not None]
                machine.expect([(x["xen"], x["ratio"]) for x in column["ratios"]] == ratios,
                               f"{benchmark} {column['mode']}: ratios {column['ratios']}, results say {ratios}")
            width, height = png_size(os.path.join(tmp, figure["file"]))
            machine.expect(width >= 600 and height >= 400, f"{figure['file']}: {width}x{height}")
            print(f"ok: {figure['file']} {width}x{height}: " +
                  ", ".join(f"{c['mode']} {c['value']:.1f}" for c in figure["columns"]))
        # Nothing to draw, and a file that is not results.json: one line and a failure, no picture.
        machine.expect(plot_bench.draw([]) != 0, "plot_bench with nothing to draw succeeded")
        bad = os.path.join(tmp, "bad", "results.json")
        os.makedirs(os.path.dirname(bad))
        with open(bad, "w") as f:
            f.write("{\"metadata\": 1")
        machine.expect(plot_bench.draw(["--results", bad]) != 0, "plot_bench drew from a truncated results.json")
        machine.expect(not [n for n in os.listdir(os.path.dirname(bad)) if n.endswith(".png")], "a picture from bad input")
    print("ok: the bench's pictures match its results")


if __name__ == "__main__":
    main()
