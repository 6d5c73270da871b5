"""The toolstack bench's harness, small (bench/run_toolstack_bench.py): pvhvd on ours without
-icount; the counted phase (the profiler plugin in control mode, a quiet daemon: a warm-up cycle
and one counted create to the domU's first console write and destroy), then the host-paced one
(one create to the first console lines, one destroy, a few `list` requests and `xl list`
commands). Checks that every figure is measured and positive, that the counted windows left the
waiting out and that the report, the JSON and the kept windows are written; asserts no figure's
value (`make bench` measures)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import machine  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None)
    parser.add_argument("--hypervisor", default="ours")  # accepted, ours only
    args = parser.parse_args()
    build = os.path.abspath(machine.build_dir(args.build))
    with tempfile.TemporaryDirectory(prefix="tsbench") as tmp:
        output = os.path.join(tmp, "toolstack.json")
        run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run_toolstack_bench.py"), "--build", build,
                              "--hypervisors", "ours", "--repeat", "1", "--list-requests", "20", "--no-icount",
                              "--output", output, "--keep-windows", os.path.join(tmp, "windows")],
                             capture_output=True, text=True, timeout=600)
        print(run.stdout, end="")
        machine.expect(run.returncode == 0, f"the bench failed ({run.returncode}):\n{run.stdout}{run.stderr}")
        with open(output) as f:
            row = json.load(f)["hypervisors"]["ours"]
        for key in ("create_to_console_ns", "destroy_dom0_cpu_ns"):
            machine.expect(row[key]["runs"] == 1 and row[key]["median"] > 0, f"{key}: {row[key]}")
        for key in ("create_instructions", "destroy_instructions"):
            cell = row[key]
            machine.expect(cell["runs"] == 1 and len(cell["values"]) == 1 and cell["values"][0] > 0, f"{key}: {cell}")
            # The relay waited for the host between (and after) the requests: left out, apart.
            machine.expect(cell["waiting"][0] > 0 and cell["passes"][0] > 0, f"{key}: nothing waited: {cell}")
        machine.expect(row["cold_create_instructions"] > 0, f"cold create: {row['cold_create_instructions']}")
        for cycle in ("cold", "1"):
            for command in ("create", "destroy"):
                kept = os.path.join(tmp, "windows", f"ours-{cycle}-{command}.txt")
                machine.expect(os.path.exists(kept), f"no {kept}")
        for key in ("list_requests_per_s", "xl_list_commands_per_s"):
            machine.expect(row[key] > 0, f"{key}: {row[key]}")
        machine.expect(os.path.exists(os.path.join(tmp, "toolstack.md")), "no toolstack.md")
        for label in ("xl create -> first console write", "xl destroy, first to last request",
                      "first create of the session", "host-paced", "xl create -> first console lines",
                      "xl destroy (dom0 CPU time)", "host figures", "daemon list requests/s"):
            machine.expect(label in run.stdout, f"the report lacks {label!r}:\n{run.stdout}")
    print("ok: the toolstack bench measured every figure once")


if __name__ == "__main__":
    main()
