"""The hostile SMP suite (selftest=hostile-smp in a four-vCPU domU beside dom0's fork test, at
-smp 4, sched_smp=1) under ptwr=writable and ptwr=adaptive; test_hostile_smp.py has what it
checks and the ptwr=emulate and sched_smp=0 runs."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_hostile_smp  # noqa: E402

if __name__ == "__main__":
    test_hostile_smp.run(("sched_smp=1 ptwr=writable", "sched_smp=1 ptwr=adaptive"))
