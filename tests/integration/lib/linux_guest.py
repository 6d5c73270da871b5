"""linux/run.py for the tests of Debian's Linux (test_linux_*.py): puts linux/ on the import
path once, so each test says `from linux_guest import linux_run`."""
import os
import sys

LINUX_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "linux")
if LINUX_DIR not in sys.path:
    sys.path.insert(0, LINUX_DIR)
import run as linux_run  # noqa: E402,F401
