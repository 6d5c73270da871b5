"""The hardware cost model (bench/cost_model.py) on a results.json a real bench run wrote,
without QEMU: the arithmetic per row, the range, the columns without counters, and what the
model refuses (a run that was not deterministic, counters from before CR3 writes were counted).

The fixture is bench/run_bench.py's own output, copied unchanged (its metadata names the commit
and the command of each mode). Takes --build (and ignores --hypervisor) like every
integration test.
"""
import argparse
import copy
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "bench"))
import cost_model  # noqa: E402

FIXTURE = os.path.join(HERE, "data", "bench_results.json")


def load():
    with open(FIXTURE) as f:
        return json.load(f)


class CostModelOnARecordedRun(unittest.TestCase):
    def setUp(self):
        self.document = load()
        self.rows = cost_model.model(self.document)
        self.records = {(r["benchmark"], r["mode"]): r for r in self.document["results"]}

    def test_the_fixture_is_a_real_deterministic_run(self):
        meta = self.document["metadata"]
        self.assertTrue(meta["deterministic"])
        self.assertIn("-icount shift=0", meta["modes"]["emulate"]["qemu_command"])
        self.assertTrue(meta["git"]["commit"])

    def test_every_row_is_instructions_plus_the_weighted_events(self):
        modelled = [r for r in self.rows if r["cycles"] is not None]
        self.assertTrue(modelled)
        for row in modelled:
            record = self.records[(row["benchmark"], row["mode"])]
            c = record["counters_per_op"]
            instructions = record["total_ns"] / record["iterations"]
            traps = c["page_faults"] + c["hypercalls"] + c["guest_syscalls"]
            for setting, k in cost_model.CONSTANTS.items():
                expected = (instructions + k["trap"] * traps + k["flush"] * c["cr3_writes"]
                            + k["invlpg"] * c["invlpgs"])
                self.assertAlmostEqual(row["cycles"][setting], expected, delta=1e-6 * expected,
                                       msg=f"{row['mode']} {row['benchmark']} {setting}")

    def test_one_row_by_hand(self):
        row = next(r for r in self.rows if r["mode"] == "emulate" and r["benchmark"] == "fork_exit")
        record = self.records[("fork_exit", "emulate")]
        per_op = record["counters_per_op"]
        self.assertGreater(per_op["cr3_writes"], 0)
        typical = cost_model.CONSTANTS["typical"]
        by_hand = (record["total_ns"] / record["iterations"] + 400 * (per_op["page_faults"] + per_op["hypercalls"] + per_op["guest_syscalls"])
                   + 1000 * per_op["cr3_writes"] + 150 * per_op["invlpgs"])
        self.assertEqual((typical["trap"], typical["flush"], typical["invlpg"]), (400, 1000, 150))
        self.assertAlmostEqual(row["cycles"]["typical"], by_hand)

    def test_the_range_brackets_the_estimate(self):
        for row in self.rows:
            if row["cycles"] is None:
                continue
            self.assertLessEqual(row["instructions"], row["cycles"]["low"])
            self.assertLessEqual(row["cycles"]["low"], row["cycles"]["typical"])
            self.assertLessEqual(row["cycles"]["typical"], row["cycles"]["high"])

    def test_columns_without_counters_get_no_figure(self):
        xen = [r for r in self.rows if r["mode"].startswith("xen417")]
        self.assertTrue(xen, "the fixture has a Xen 4.17 column")
        for row in xen:
            self.assertIsNone(row["cycles"])
            self.assertIsNone(row["events"])

    def test_the_table_prints_typical_and_range(self):
        rows = cost_model.table_rows(self.rows)
        self.assertEqual(rows[0][0], "benchmark")
        self.assertNotIn("xen417", rows[0], "no column without counters")
        fork = next(r for r in rows if r[0] == "fork+exit")
        emulate = fork[rows[0].index("emulate")]
        row = next(r for r in self.rows if r["mode"] == "emulate" and r["benchmark"] == "fork_exit")
        self.assertEqual(emulate, f"{row['cycles']['typical'] / 1000:.1f} ({row['cycles']['low'] / 1000:.1f}"
                                  f"-{row['cycles']['high'] / 1000:.1f})")

    def test_no_model_without_icount(self):
        document = copy.deepcopy(self.document)
        document["metadata"]["deterministic"] = False
        self.assertEqual(cost_model.model(document), [])

    def test_no_model_from_counters_before_cr3_writes_were_counted(self):
        document = copy.deepcopy(self.document)
        for record in document["results"]:
            if record.get("counters_per_op"):
                del record["counters_per_op"]["cr3_writes"]
        self.assertTrue(all(r["cycles"] is None for r in cost_model.model(document)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build")
    parser.add_argument("--hypervisor")
    args, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest], verbosity=1)


if __name__ == "__main__":
    main()
