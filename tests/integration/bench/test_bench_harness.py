"""The fork benchmark harness (bench/run_bench.py) without QEMU: parsing /bench's output,
judging a run, and writing results.json / results.md, on synthetic console text.

Takes --build (and ignores --hypervisor) like every integration test.
"""
import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "bench"))
import run_bench  # noqa: E402

COUNTERS = ("page_faults=10 emulations=20 unhooks=0 rehooks=0 revalidated=0 flushes=4 "
            "mmu_hypercalls=0 hypercalls=8 cr3_writes=6 invlpgs=2 guest_syscalls=3 type_change_flushes=1")


def good_output(names=None, prefix=""):
    names = names or run_bench.BENCHMARK_NAMES
    lines = ["(XEN) Xen-compatible hypervisor starting", "pvguest: booting",
             f"{prefix}bench start pid=1 args=0"]
    for name in names:
        lines.append(f"{prefix}bench {name} iterations=4 total_ns=4000000 ns_per_op=1000000.0")
        lines.append(f"{prefix}counters {name} {COUNTERS}")
    lines += [f"{prefix}bench done", "init exited: status 0",
              "(XEN) Domain 0 shut down: reason poweroff (0)",
              "(XEN) audit: clean (131040 frames checked)"]
    return "\n".join(lines) + "\n"


def judge(text, mode="emulate", exit_value=0, timed_out=False, args_passed=False):
    parsed = run_bench.parse_output(text)
    problems, notes = run_bench.judge(run_bench.MODES[mode], parsed, text, exit_value, timed_out,
                                      args_passed=args_passed)
    return parsed, problems, notes


def mode_run(mode, text, exit_value=0):
    parsed, problems, notes = judge(text, mode, exit_value)
    return run_bench.ModeRun(run_bench.MODES[mode], parsed, problems, notes, exit_value, False,
                             1.0, "qemu-system-x86_64 ...", text)


class Parsing(unittest.TestCase):
    def test_only_narrows_what_is_expected(self):
        self.assertEqual(run_bench.expected_benchmarks([]), run_bench.BENCHMARK_NAMES)
        self.assertEqual(run_bench.expected_benchmarks(["--scale", "0.5"]), run_bench.BENCHMARK_NAMES)
        self.assertEqual(run_bench.expected_benchmarks(["--only", "pte_write,mixed_fork"]), ["pte_write", "mixed_fork"])
        self.assertEqual(run_bench.expected_benchmarks(["--only", "fork_exit", "--only", "pte_write"]), ["pte_write"])
        parsed = run_bench.parse_output(good_output(["pte_write", "mixed_fork"]))
        problems, _ = run_bench.judge(run_bench.MODES["adaptive"], parsed, good_output(["pte_write", "mixed_fork"]),
                                      0, False, run_bench.expected_benchmarks(["--only", "pte_write,mixed_fork"]))
        self.assertEqual(problems, [])
        problems, _ = run_bench.judge(run_bench.MODES["adaptive"], parsed, good_output(["pte_write"]), 0, False,
                                      run_bench.expected_benchmarks(["--only", "fork_exit,pte_write"]))
        self.assertIn("fork_exit: not reported", problems)

    def test_complete_run(self):
        parsed, problems, notes = judge(good_output())
        self.assertEqual(problems, [])
        self.assertEqual(notes, [])
        self.assertTrue(parsed.started and parsed.done)
        self.assertEqual(list(parsed.results), run_bench.BENCHMARK_NAMES)
        fork = parsed.results["fork_exit"]
        self.assertEqual((fork.status, fork.iterations, fork.total_ns), ("ok", 4, 4000000))
        self.assertEqual(fork.ns_per_op, 1000000.0)
        self.assertEqual(fork.counters["emulations"], 20)
        self.assertEqual(fork.counters["hypercalls"], 8)

    def test_console_prefixes(self):
        for prefix in ("(d0) ", "(XEN) ", "(XEN) [   12.345678] "):
            parsed, problems, _ = judge(good_output(prefix=prefix))
            self.assertEqual(problems, [], prefix)
            self.assertEqual(len(parsed.results), len(run_bench.BENCHMARK_NAMES))

    def test_unrelated_lines_are_ignored(self):
        text = good_output().replace("bench done", "init: starting /bench (entry 401000)\nbench done")
        _, problems, _ = judge(text)
        self.assertEqual(problems, [])

    def test_malformed_lines_are_reported_not_fatal(self):
        bad = [
            "bench fork_exit iterations=abc total_ns=1 ns_per_op=1",
            "bench fork_exit iterations=4 total_ns=1",
            "bench fork_exit iterations=0 total_ns=1 ns_per_op=1",
            "bench fork_exit iterations=4 total_ns=-5 ns_per_op=1",
            "bench fork_exit iterations=4 total_ns=5 ns_per_op=1 extra",
            "bench Fork-Exit iterations=4 total_ns=5 ns_per_op=1",
            "bench",
            "counters fork_exit page_faults=1",
            "counters fork_exit " + COUNTERS.replace("flushes=4", "flushes=x"),
            "counters",
        ]
        for line in bad:
            text = good_output().replace(
                "bench fork_exit iterations=4 total_ns=4000000 ns_per_op=1000000.0\n"
                f"counters fork_exit {COUNTERS}", line)
            parsed, problems, _ = judge(text)
            self.assertTrue(problems, line)
            self.assertTrue(any("fork_exit" in p or "malformed" in p or "bad benchmark" in p
                                or "counters for a benchmark" in p for p in problems), (line, problems))
            if line.startswith("bench"):
                result = parsed.results.get("fork_exit")
                self.assertTrue(result is None or result.status != "ok", line)

    def test_missing_done(self):
        text = good_output().replace("bench done\n", "")
        parsed, problems, _ = judge(text)
        self.assertFalse(parsed.done)
        self.assertIn("no 'bench done' line", problems)

    def test_truncated_run(self):
        text = good_output()
        text = text[:text.index("bench dirty1_fork_exit")]
        _, problems, _ = judge(text, exit_value=None, timed_out=True)
        self.assertIn("machine did not end in time (timeout)", problems)
        self.assertIn("dirty64_fork_exit: not reported", problems)
        self.assertIn("no 'bench done' line", problems)

    def test_failed_audit(self):
        text = good_output().replace("audit: clean (131040 frames checked)",
                                     "audit: 3 frames with bad counts")
        _, problems, _ = judge(text)
        self.assertTrue(any("audit" in p for p in problems), problems)

    def test_exit_value(self):
        _, problems, _ = judge(good_output(), exit_value=3)
        self.assertIn("machine exit value 3, expected 0", problems)

    def test_failed_benchmark(self):
        text = good_output().replace(
            "bench fork_sh iterations=4 total_ns=4000000 ns_per_op=1000000.0\n"
            f"counters fork_sh {COUNTERS}\n",
            "bench fork_sh failed child status 0x7f00 (exit 127: execve failed or command not found)\n")
        parsed, problems, _ = judge(text)
        self.assertEqual(parsed.results["fork_sh"].status, "failed")
        self.assertTrue(any(p.startswith("fork_sh: failed: child status 0x7f00") for p in problems))

    def test_duplicates(self):
        line = "bench fork_exit iterations=4 total_ns=4000000 ns_per_op=1000000.0\n"
        text = good_output().replace("bench done", line.strip() + "\nbench done")
        _, problems, _ = judge(text)
        self.assertTrue(any("reported twice" in p for p in problems), problems)

    def test_output_after_done(self):
        text = good_output().replace("init exited", "bench fork_exit failed late\ninit exited")
        _, problems, _ = judge(text)
        self.assertTrue(any("after 'bench done'" in p for p in problems), problems)

    def test_not_started_and_usage_error(self):
        _, problems, _ = judge("(XEN) audit: clean\ninit: cannot run /bench\n")
        self.assertTrue(any("did not start" in p for p in problems))
        self.assertFalse(any("not reported" in p for p in problems))
        _, problems, _ = judge("bench start pid=1 args=2 --bogus 1\n"
                               "bench error unknown option '--bogus'\n(XEN) audit: clean\n")
        self.assertTrue(any("rejected its arguments" in p for p in problems), problems)

    def test_unavailable(self):
        text = good_output().replace(
            "bench pte_write iterations=4 total_ns=4000000 ns_per_op=1000000.0\n"
            f"counters pte_write {COUNTERS}", "bench pte_write unavailable\ncounters pte_write unavailable")
        text = text.replace(f"counters fork_exit {COUNTERS}", "counters fork_exit unavailable")
        # On ours both system calls are part of the contract; on Xen 4.17 they cannot exist.
        _, problems, _ = judge(text, "emulate")
        self.assertIn("pte_write: unavailable on this kernel", problems)
        self.assertIn("fork_exit: counters unavailable (system call 1000 failed)", problems)
        _, problems, notes = judge(text.replace("(XEN) audit: clean", ""), "xen417", exit_value=None)
        self.assertEqual(problems, [])
        self.assertIn("pte_write: unavailable on this kernel", notes)

    def test_arguments_ignored_by_kernel(self):
        _, problems, notes = judge(good_output(), args_passed=True)
        self.assertEqual(problems, [])
        self.assertTrue(any("no arguments" in n for n in notes))

    def test_garbage_never_raises(self):
        for text in ("", "\x00\xff bench \n", "bench done\nbench done\n", "counters x y=1\n",
                     "bench x iterations=1e99 total_ns=1 ns_per_op=nan\n" * 3):
            judge(text)


class Writing(unittest.TestCase):
    def test_json_and_markdown(self):
        good = mode_run("writable", good_output())
        broken_text = good_output().replace("bench done\n", "")
        broken_text = broken_text[:broken_text.index("bench fork_execve")]
        broken = mode_run("emulate", broken_text, exit_value=3)
        runs = [good, broken]
        with tempfile.TemporaryDirectory() as out:
            run_bench.write_results(out, runs, True, 0.5, "2024-01-01T00:00:00+00:00")
            with open(os.path.join(out, "results.json")) as f:
                document = json.load(f)
            with open(os.path.join(out, "results.md")) as f:
                markdown = f.read()
            self.assertTrue(os.path.exists(os.path.join(out, "writable.log")))
        meta = document["metadata"]
        self.assertEqual(meta["icount"], "-icount shift=0")
        self.assertEqual(meta["iterations_scale"], 0.5)
        self.assertIn("commit", meta["git"])
        self.assertTrue(meta["modes"]["writable"]["ok"])
        self.assertFalse(meta["modes"]["emulate"]["ok"])
        self.assertIn("qemu_command", meta["modes"]["emulate"])
        records = {(r["benchmark"], r["mode"]): r for r in document["results"]}
        self.assertEqual(len(records), 2 * len(run_bench.BENCHMARK_NAMES))
        fork = records[("fork_exit", "writable")]
        self.assertEqual(fork["status"], "ok")
        self.assertEqual(fork["us_per_op"], 1000.0)
        self.assertEqual(fork["per_op"], 1000.0)
        self.assertEqual(fork["iterations"], 4)
        self.assertEqual(fork["counters"]["emulations"], 20)
        self.assertEqual(fork["counters_per_op"]["emulations"], 5.0)
        self.assertEqual(records[("pte_write", "writable")]["per_op"], 1000000.0)
        self.assertEqual(records[("pte_write", "writable")]["unit"], "ns/write")
        self.assertEqual(records[("fork_exit", "emulate")]["status"], "ok")
        self.assertEqual(records[("fork_execve", "emulate")]["status"], "missing")

        self.assertIn("| benchmark | writable | emulate | unit |", markdown)
        self.assertIn("| fork+exit | 1000.0 | 1000.0 | us/op (TCG virtual time) |", markdown)
        self.assertIn("| fork+execve | 1000.0 | FAILED |", markdown)
        self.assertIn("- FAILED: no 'bench done' line", markdown)
        self.assertIn("- FAILED: machine exit value 3, expected 0", markdown)

    def test_text_table(self):
        runs = [mode_run(m, good_output()) for m in ("writable", "emulate", "hypercall")]
        text = run_bench.report_text(runs, deterministic=False)
        lines = text.splitlines()
        self.assertEqual(lines[0].split(), ["benchmark", "writable", "emulate", "hypercall", "unit"])
        self.assertTrue(lines[1].startswith("fork+exit"))
        self.assertIn("dirty 64MB + fork+exit", text)
        self.assertIn("PTE write", text)
        self.assertIn("counters per operation, mode emulate", text)
        self.assertIn("TLB flushes", text)
        self.assertIn("re-validated", text)


def output_with_fork_ns(ns_per_op):
    return good_output().replace("bench fork_exit iterations=4 total_ns=4000000 ns_per_op=1000000.0",
                                 f"bench fork_exit iterations=4 total_ns=4000000 ns_per_op={ns_per_op}")


class TracingOffTable(unittest.TestCase):
    def test_untraced_modes_run_the_untraced_image(self):
        untraced = run_bench.MODES["emulate-untraced"]
        self.assertEqual((untraced.image, untraced.traced_peer), ("xen-untraced", "emulate"))
        self.assertEqual(untraced.hypervisor_args, run_bench.MODES["emulate"].hypervisor_args)
        self.assertEqual(untraced.guest_args, run_bench.MODES["emulate"].guest_args)
        with tempfile.TemporaryDirectory() as empty:
            run = run_bench.run_mode(untraced, empty, 1.0, [], True, 5)
        self.assertIn(os.path.join(empty, "xen", "xen-untraced"), run.problems[0])

    def test_difference_against_the_baseline(self):
        runs = [mode_run("emulate", output_with_fork_ns(1010000.0)),
                mode_run("hypercall", good_output()),
                mode_run("emulate-untraced", output_with_fork_ns(1000000.0))]
        cost = {(r["mode"], r["benchmark"]): r for r in run_bench.tracing_cost(runs)}
        fork = cost[("emulate", "fork_exit")]
        self.assertAlmostEqual(fork["trace_points_off"], 1010.0)
        self.assertAlmostEqual(fork["compiled_out"], 1000.0)
        self.assertAlmostEqual(fork["delta_percent"], 1.0)
        self.assertAlmostEqual(cost[("emulate", "dirty1_fork_exit")]["delta_percent"], 0.0)
        self.assertNotIn("hypercall", {r["mode"] for r in run_bench.tracing_cost(runs)})
        # The baseline gets its own table, not a column of the main one.
        self.assertEqual([r.mode.name for r in run_bench.primary_runs(runs)], ["emulate", "hypercall"])
        text = run_bench.report_text(runs, True)
        self.assertIn("tracing off", text)
        self.assertIn("+1.00%", text)
        self.assertNotIn("emulate-untraced  ", text.splitlines()[0])

    def test_missing_figures_show_as_dashes(self):
        failed = output_with_fork_ns(1000000.0).replace("bench pte_write iterations=4",
                                                        "bench pte_write_gone iterations=4")
        runs = [mode_run("writable", good_output()), mode_run("writable-untraced", failed)]
        cost = {(r["mode"], r["benchmark"]): r for r in run_bench.tracing_cost(runs)}
        self.assertIsNone(cost[("writable", "pte_write")]["delta_percent"])
        self.assertIn("tracing off", run_bench.report_text(runs, True, markdown=True))

    def test_untraced_alone_stays_in_the_main_table(self):
        runs = [mode_run("writable-untraced", good_output())]
        self.assertEqual(run_bench.tracing_cost(runs), [])
        self.assertEqual(len(run_bench.primary_runs(runs)), 1)
        self.assertNotIn("tracing off", run_bench.report_text(runs, True))

    def test_results_json_has_the_cost(self):
        runs = [mode_run("emulate", good_output()), mode_run("emulate-untraced", good_output())]
        with tempfile.TemporaryDirectory() as out:
            document = run_bench.write_results(out, runs, True, 1.0, "now")
            with open(os.path.join(out, "results.json")) as f:
                self.assertEqual(json.load(f)["tracing_off_cost"], document["tracing_off_cost"])
        self.assertEqual(len(document["tracing_off_cost"]), len(run_bench.BENCHMARKS))


class XenRatios(unittest.TestCase):
    def test_the_xen_modes_run_xen_with_the_guest_of_their_column(self):
        for name, guest in (("xen417", "pte=direct"), ("xen417-nopti", "pte=direct"),
                            ("xen417-hypercall", "pte=hypercall"), ("xen417-batched", "pte=batched")):
            mode = run_bench.MODES[name]
            self.assertEqual((mode.hypervisor, mode.guest_args), ("xen417", guest))
        self.assertIn("xpti=false", run_bench.MODES["xen417-nopti"].hypervisor_args)
        self.assertNotIn("xpti", run_bench.MODES["xen417"].hypervisor_args)
        for ours, peers in run_bench.XEN_PEERS.items():
            for peer in peers:
                self.assertEqual(run_bench.MODES[ours].guest_args, run_bench.MODES[peer].guest_args)

    def test_each_mode_over_its_xen_columns(self):
        runs = [mode_run("writable", output_with_fork_ns(500000.0)),
                mode_run("hypercall", output_with_fork_ns(900000.0)),
                mode_run("xen417", output_with_fork_ns(1000000.0)),
                mode_run("xen417-nopti", output_with_fork_ns(800000.0))]
        ratios = {(r["mode"], r["xen"], r["benchmark"]): r for r in run_bench.xen_ratios(runs)}
        self.assertAlmostEqual(ratios[("writable", "xen417", "fork_exit")]["ratio"], 0.5)
        self.assertAlmostEqual(ratios[("writable", "xen417-nopti", "fork_exit")]["ratio"], 0.625)
        self.assertAlmostEqual(ratios[("writable", "xen417", "pte_write")]["ratio"], 1.0)
        # hypercall has no Xen column here (xen417-hypercall did not run): no ratio is invented.
        self.assertNotIn("hypercall", {mode for mode, _, _ in ratios})
        text = run_bench.report_text(runs, True)
        self.assertIn("ours / Xen 4.17", text)
        self.assertIn("writable / xen417-nopti", text)
        self.assertIn("0.625", text)

    def test_a_missing_figure_has_no_ratio(self):
        gone = output_with_fork_ns(1000000.0).replace("bench fork_exit iterations=4", "bench fork_exit_gone iterations=4")
        runs = [mode_run("emulate", good_output()), mode_run("xen417", gone)]
        ratios = {(r["mode"], r["benchmark"]): r["ratio"] for r in run_bench.xen_ratios(runs)}
        self.assertIsNone(ratios[("emulate", "fork_exit")])
        self.assertAlmostEqual(ratios[("emulate", "fork_execve")], 1.0)

    def test_no_xen_column_no_ratio_table(self):
        runs = [mode_run("writable", good_output()), mode_run("emulate", good_output())]
        self.assertEqual(run_bench.xen_ratios(runs), [])
        self.assertNotIn("ours / Xen 4.17", run_bench.report_text(runs, True))

    def test_results_json_has_the_ratios(self):
        runs = [mode_run("batched", good_output()), mode_run("xen417-batched", good_output())]
        with tempfile.TemporaryDirectory() as out:
            document = run_bench.write_results(out, runs, True, 1.0, "now")
            with open(os.path.join(out, "results.json")) as f:
                self.assertEqual(json.load(f)["xen_ratios"], document["xen_ratios"])
        self.assertEqual(len(document["xen_ratios"]), len(run_bench.BENCHMARKS))

    def test_the_printed_command_is_the_one_machine_boots(self):
        command = run_bench.qemu_command("xen", "ptwr=emulate", [("kernel", "init=/bench"), ("initrd", "")],
                                         "512M", ("-icount", "shift=0"))
        self.assertIn("-display none -vga none -nic none", command)
        self.assertNotIn("-nographic", command)
        self.assertTrue(command.endswith("-icount shift=0"))


class LifecycleBench(unittest.TestCase):
    """bench/run_lifecycle_bench.py reads the lines SelfTest::note and finish print."""

    def test_figures_from_a_passed_run(self):
        import run_lifecycle_bench
        serial = ("selftest lifecycle-100: create/max_vcpus/destroy cycles: 100 (0x64)\n"
                  "selftest lifecycle-100: ... microseconds per cycle: 81 (0x51)\n"
                  "selftest lifecycle-100: ... all created: ok\n"
                  "selftest lifecycle-100: passed\n")
        self.assertEqual(run_lifecycle_bench.parse(serial), (100, 81, True))

    def test_a_failed_or_cut_run_gives_no_pass(self):
        import run_lifecycle_bench
        failed = "selftest lifecycle-100: ... microseconds per cycle: 81 (0x51)\nselftest lifecycle-100: ... all destroyed: FAIL (got 3 expected 100)\nselftest lifecycle-100: failed\n"
        self.assertEqual(run_lifecycle_bench.parse(failed), (None, 81, False))
        self.assertEqual(run_lifecycle_bench.parse("(XEN) Panic"), (None, None, False))


class CommandLine(unittest.TestCase):
    def test_options(self):
        args = run_bench.arguments(["--modes", "hypercall", "--xen417", "--iterations-scale",
                                    "0.1", "--hypervisor", "ours"])
        self.assertEqual(args.mode_list, ["hypercall", "xen417"])
        self.assertEqual(run_bench.bench_arguments(0.1, ["--warmup", "0"]),
                         ["--scale", "0.1", "--warmup", "0"])
        self.assertEqual(run_bench.bench_arguments(1.0, []), [])

    def test_bad_options(self):
        for argv in (["--modes", "bogus"], ["--iterations-scale", "0"], ["--jobs", "0"]):
            with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()) as err:
                run_bench.arguments(argv)
            self.assertIn("error:", err.getvalue())

    def test_missing_build_fails_cleanly(self):
        with tempfile.TemporaryDirectory() as empty:
            run = run_bench.run_mode(run_bench.MODES["emulate"], empty, 1.0, [], True, 5)
        self.assertFalse(run.ok)
        self.assertTrue(all(p.startswith("missing ") for p in run.problems))
        self.assertIn("-icount shift=0", run.qemu_command)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None)
    parser.add_argument("--hypervisor", default=None)
    _, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest])
