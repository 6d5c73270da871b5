"""The relay and live trace capture on one link (COM2), at once: dom0 boots with
`trace=capture relay=com2`. A test client's requests are answered while RECORDS frames of the
trace stream arrive between the answers; then the C program (xc_relay_check, our libxenctrl)
runs with PVHV_XENCTRL_TRACE set, so the library copies the trace frames it skips into a file,
from the HELLO the relay sends when the session opens to the END dom0 sends at shutdown.
build/bin/xentrace decodes that file with nothing skipped or lost, and the hypercalls the relay
made for the program are in it (TRC_PV_HYPERCALL_V2). Ours only: on Xen 4.17 every trapped port
access of the capture is itself a trace record (TRC_PV_EMULATE_PRIVOP)."""
import os
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import relay_client as rc  # noqa: E402
import relay_run  # noqa: E402

XEN_VERSION = 17
RECORDS, HELLO = 0x02, 0x01


def interleaved(socket_path):
    """Requests for a few seconds; returns (answers, trace frames seen between two answers)."""
    c = rc.Client(socket_path)
    opened = c.open()
    flags, = struct.unpack_from("<I", opened.payload, 4 + 20)
    machine.expect(flags & 1, f"OPENED does not say the trace shares the link (flags {flags:#x})")
    answers, between = 0, 0
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:
        before = len(c.trace)
        machine.expect(c.hypercall(XEN_VERSION, 0, 0) >> 16 == 4, "xen_version through the relay")
        answers += 1
        between += sum(1 for raw in c.trace[before:] if raw[5] == RECORDS)
        time.sleep(0.05)  # idle moments: the relay drains the trace buffer then
    kinds = [raw[5] for raw in c.trace]
    machine.expect(HELLO in kinds, "no HELLO after OPEN")
    c.close()
    return answers, between


def main(window=False):
    """window: the program's session goes through the relay's bulk window (the test client's
    stays on the socket), so the trace frames reach the library's copy through the window."""
    build, _ = guest_boot.arguments()
    hv = guest_boot.hypervisor(build, "ours")
    checker = relay_run.program(build, "xc_relay_check")
    with tempfile.TemporaryDirectory() as tmp:
        stream = os.path.join(tmp, "relay.stream")

        def client(socket_path, serial, window_path=None):
            answers, between = interleaved(socket_path)
            run = relay_run.run_program(build, socket_path, [checker, "--tbuf-preset", "--shutdown"],
                                        trace_path=stream, window_path=window_path)
            return answers, between, run

        boot, (answers, between, run) = relay_run.boot_relay(build, hv, "relay=com2 trace=capture", client,
                                                             window=window)
        machine.expect("relay: serving" in boot.serial and "beside the trace stream" in boot.serial,
                       "the relay did not start beside the capture", boot)
        machine.expect(between > 0, f"no trace RECORDS frame arrived between {answers} answers", boot)
        print(f"ok: {answers} answers, {between} RECORDS frames between them")
        machine.expect(run.returncode == 0 and "xc_relay_check: passed" in run.stdout,
                       f"xc_relay_check failed: {run.stdout}\n{run.stderr}", boot)
        guest_boot.expect_ended(boot, hv, hv.poweroff, 0)
        trace = os.path.join(tmp, "relay.trace")
        decode = subprocess.run([relay_run.program(build, "xentrace"), f"--input={stream}", trace],
                                capture_output=True, text=True)
        report = decode.stderr + decode.stdout
        machine.expect(decode.returncode == 0 and "0 bytes skipped, 0 lost by streamer" in report,
                       f"xentrace on the library's copy: {report}", boot)
        dump = subprocess.run([relay_run.program(build, "xenalyze"), "--dump-all", trace], capture_output=True,
                              text=True, check=True).stdout.splitlines()
        calls = [line.split()[4] for line in dump if len(line.split()) > 4 and line.split()[2] == "hypercall"]
        versions, sysctls = calls.count("(xen_version)"), calls.count("(sysctl)")
        # The program asks XENVER_* ten times and makes its sysctls before disabling the buffers.
        machine.expect(versions >= 10 and sysctls >= 5,
                       f"the relay's hypercalls for the program are missing: {versions} xen_version, {sysctls} sysctl")
        print(f"ok: {report.strip()}; {versions} xen_version and {sysctls} sysctl hypercalls recorded")


if __name__ == "__main__":
    main()
