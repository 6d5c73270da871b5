"""test_relay_trace_capture.py with the C program's session on the relay's bulk window
(tools/PROTOCOL.md): the test client's requests on the socket get their answers with trace
RECORDS frames between them, then xc_relay_check runs through the window with PVHV_XENCTRL_TRACE
set, so dom0 sends the trace stream there from the program's OPEN (the path of the last request)
to the END at shutdown, and xentrace decodes the library's copy with nothing skipped or lost.
Ours only, as the serial variant."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import test_relay_trace_capture  # noqa: E402

if __name__ == "__main__":
    test_relay_trace_capture.main(window=True)
