#!/usr/bin/env python3
"""Self-test of scripts/check_layers.py: small synthetic trees, each breaking one rule.

Run by CTest as style.layers_selftest. Each case writes a tree into a temporary directory, runs
the checker's main() on it and looks at the exit status and the lines it printed.
"""

import contextlib
import io
import os
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_layers  # noqa: E402  (the script next to this file)

CLEAN_MAP = """\
include-roots: .
may-use: common
floor: lib      # the ground
floor: mm util  # two entries on one floor
floor: core
"""

CLEAN_FILES = {
    "os/lib/bits.h": "#pragma once\n#include <stdint.h>\n",
    "os/lib/bits.cpp": '#include "bits.h"\n#include "missing_system_header.h"\n',
    "os/mm/page.h": '#include "os/lib/bits.h"\n#include "common/abi.h"\n',
    "os/mm/page.cpp": '#include "page.h"\n',
    "os/util/list.h": '#include "os/lib/bits.h"\n',
    "os/core/main.cpp": '#include "os/mm/page.h"\n#include "os/util/list.h"\n',
    "os/core/sched/run.cpp": '#include "os/core/main.h"\n#include "os/mm/page.h"\n',
    "os/core/main.h": "#pragma once\n",
    "common/abi.h": "#pragma once\n",
}


class LayerCheckTest(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.TemporaryDirectory()
        self.root = self.scratch.name
        self.write_tree(CLEAN_FILES)
        self.write("os/LAYERS", CLEAN_MAP)

    def tearDown(self):
        self.scratch.cleanup()

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as out:
            out.write(textwrap.dedent(text))

    def write_tree(self, files):
        for path, text in files.items():
            self.write(path, text)

    def run_checker(self, *args):
        """(exit status, printed lines) of the checker on the scratch tree."""
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            status = check_layers.main(["--root", self.root, *args])
        return status, printed.getvalue().splitlines()

    def assert_fails_with(self, expected, *args):
        status, lines = self.run_checker(*args)
        self.assertEqual(status, 1, "\n".join(lines))
        self.assertTrue(any(expected in line for line in lines), f"no '{expected}' in:\n" + "\n".join(lines))
        return lines

    def test_clean_tree_passes_and_counts(self):
        status, lines = self.run_checker()
        self.assertEqual(status, 0, "\n".join(lines))
        # 8 sources in os/ (common/ has no LAYERS so it is not walked); 9 quoted includes resolve
        # (missing_system_header.h resolves to nothing: a system header); 7 folder edges: mm ->
        # lib, common; util -> lib; core -> mm, util; core/sched -> core, mm.
        self.assertEqual(lines[-1], "check_layers: os: 8 files, 9 includes, 7 folder edges, 0 cycles, 0 other errors")

    def test_include_against_the_order_fails(self):
        self.write("os/lib/bits.cpp", '#include "os/core/main.h"\n')
        lines = self.assert_fails_with(
            'os/lib/bits.cpp:1: includes "os/core/main.h" (entry os/core, floor 3) from entry os/lib (floor 1)')
        self.assertIn("a higher floor", lines[0])

    def test_same_floor_siblings_fail(self):
        self.write("os/util/list.cpp", '#include "os/mm/page.h"\n')
        self.assert_fails_with(
            'os/util/list.cpp:1: includes "os/mm/page.h" (entry os/mm, floor 2) from entry os/util (floor 2): '
            "two entries on one floor")

    def test_unlisted_source_folder_fails(self):
        self.write("os/drivers/uart.cpp", '#include "os/lib/bits.h"\n')
        self.assert_fails_with("os/drivers: source folder is covered by no entry of os/LAYERS")

    def test_a_subfolder_is_covered_by_its_parent_entry(self):
        status, lines = self.run_checker()  # os/core/sched is covered by the entry core
        self.assertEqual(status, 0, "\n".join(lines))
        self.write("os/core/sched/run.cpp", '#include "os/util/list.h"\n')
        self.write("os/util/list.cpp", '#include "os/core/sched/run.h"\n')
        self.write("os/core/sched/run.h", "#pragma once\n")
        self.assert_fails_with('(entry os/core, floor 3) from entry os/util (floor 2)')

    def test_the_root_entry_covers_only_the_root_files(self):
        self.write("os/top.h", "#pragma once\n")
        self.assert_fails_with("os/: source folder is covered by no entry of os/LAYERS")
        self.write("os/LAYERS", CLEAN_MAP + "floor: .\n")
        status, lines = self.run_checker()
        self.assertEqual(status, 0, "\n".join(lines))

    def test_cross_tree_include_not_in_may_use_fails(self):
        self.write("os/LAYERS", CLEAN_MAP.replace("may-use: common\n", ""))
        self.assert_fails_with(
            'os/mm/page.h:2: includes "common/abi.h" from tree common/, which is not in may-use of os/LAYERS')

    def test_folder_cycle_fails_even_with_a_sibling_map(self):
        self.write("os/lib/bits.cpp", '#include "os/mm/page.h"\n')  # lib -> mm, and mm -> lib
        lines = self.assert_fails_with("folder cycle: os/lib -> os/mm -> os/lib")
        self.assertIn("1 cycles", lines[-1])

    def test_cycle_across_trees_is_found(self):
        self.write("common/LAYERS", "include-roots: .\nmay-use: os\nfloor: .\n")
        self.write("common/abi.h", '#include "os/mm/page.h"\n')
        self.assert_fails_with("folder cycle: common -> os/mm -> common")

    def test_cycle_without_a_map_in_report_only_mode(self):
        self.write("kern/a/x.h", '#include "b/y.h"\n')
        self.write("kern/b/y.h", '#include "a/x.h"\n')
        status, lines = self.run_checker("--report-only", "kern")
        self.assertEqual(status, 0)
        self.assertIn("folder cycle: kern/a -> kern/b -> kern/a", lines)
        self.assertEqual(lines[-1], "check_layers: kern: 2 files, 2 includes, 2 folder edges, 1 cycles, 0 other errors")

    def test_a_cycle_of_several_folders_is_reported_whole(self):
        # a <-> b <-> c is one component of three folders; d only hangs below it.
        self.write("kern/a/x.h", '#include "b/y.h"\n')
        self.write("kern/b/y.h", '#include "a/x.h"\n#include "c/z.h"\n')
        self.write("kern/c/z.h", '#include "b/y.h"\n#include "d/w.h"\n')
        self.write("kern/d/w.h", "#pragma once\n")
        status, lines = self.run_checker("--report-only", "kern")
        self.assertIn("folder cycle: kern/a -> kern/b -> kern/a", lines)
        self.assertIn("  the cycle holds 3 folders and 4 folder edges: kern/a kern/b kern/c", lines)
        self.assertIn('  kern/a -> kern/b: kern/a/x.h:1 includes "b/y.h"', lines)
        self.assertIn("1 cycles", lines[-1])

    def test_resolution_prefers_the_including_folder(self):
        self.write("os/mm/bits.h", "#pragma once\n")  # shadows os/lib/bits.h for os/mm files
        self.write("os/mm/page.cpp", '#include "bits.h"\n#include "page.h"\n')
        status, lines = self.run_checker()
        self.assertEqual(status, 0, "\n".join(lines))

    def test_missing_required_map_fails(self):
        self.assert_fails_with("other/LAYERS: missing", "--require", "os,other")

    def test_bad_map_lines_fail(self):
        self.write("os/LAYERS", CLEAN_MAP + "floors: x\nfloor: nothere mm\n")
        lines = self.assert_fails_with("os/LAYERS:6: expected 'include-roots:', 'may-use:' or 'floor:'")
        self.assertTrue(any("entry 'nothere' is no folder under os/" in line for line in lines))
        self.assertTrue(any("entry 'mm' is listed more than once" in line for line in lines))

    def test_draft_map_from_the_command_line(self):
        draft = os.path.join(self.root, "draft.LAYERS")
        with open(draft, "w", encoding="utf-8") as out:
            out.write(CLEAN_MAP.replace("floor: mm util", "floor: util\nfloor: mm"))
        self.write("os/mm/page.cpp", '#include "os/util/list.h"\n')
        status, lines = self.run_checker("--map", f"os={draft}")
        self.assertEqual(status, 0, "\n".join(lines))


if __name__ == "__main__":
    unittest.main(verbosity=2)
