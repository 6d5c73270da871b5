#!/usr/bin/env python3
"""xentrace turns a synthetic framed stream (trace/PROTOCOL.md, built here independently of the
C++ encoder) into a xentrace-format file that xenalyze reads back. Fast: no QEMU."""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

MAGIC, VERSION = 0x52545650, 1
HELLO, RECORDS, END, CONTROL = 0x01, 0x02, 0x04, 0x80
PVHV = 0x00014000
OP_BEGIN, OP_END, UNHOOK, REHOOK, FLUSH = PVHV + 8, PVHV + 9, PVHV + 1, PVHV + 2, PVHV + 4
PAGE_FAULT = 0x00201004 | 0x100


def frame(kind, channel, payload):
    head = struct.pack("<IBBHI", MAGIC, VERSION, kind, channel, len(payload))
    return head + struct.pack("<I", zlib.crc32(head + payload)) + payload


def record(event, tsc, *extra):
    header = event | (len(extra) << 28) | (1 << 31)
    return struct.pack("<IQ", header, tsc) + struct.pack(f"<{len(extra)}I", *extra)


def fork_records(cpu, fork_id, tsc):
    out = record(OP_BEGIN, tsc, 1, fork_id)
    for table in range(3):
        mfn = 0x2000 + fork_id * 8 + table
        out += record(PAGE_FAULT, tsc + 10 + table * 100, 0x401000, 0, 0x600000, 0, 3)
        out += record(UNHOOK, tsc + 20 + table * 100, mfn, 0, table)
        out += record(FLUSH, tsc + 30 + table * 100, 0, 1)
        out += record(REHOOK, tsc + 90 + table * 100, mfn, 0, 5 + table, 5 + table, 0)
    return out + record(OP_END, tsc + 400, 1, fork_id)


def stream():
    data = frame(HELLO, 0, struct.pack("<IIQI", 1, 2, 3_000_000_000, 0))
    for i in range(4):
        cpu = i % 2
        data += frame(RECORDS, cpu, fork_records(cpu, i, 10_000 + i * 1000))
        data += frame(CONTROL, 7, b"toolstack message")
    data += b"\x00garbage\xff" * 3          # must be skipped with a diagnostic
    data += frame(RECORDS, 0, record(FLUSH, 20_000, 1, 4))
    return data + frame(END, 0, struct.pack("<I", 0))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    args = parser.parse_args()
    xentrace = os.path.join(args.build, "bin", "xentrace")
    xenalyze = os.path.join(args.build, "bin", "xenalyze")
    for tool in (xentrace, xenalyze):
        if not os.access(tool, os.X_OK):
            sys.exit(f"FAIL: {tool} not built (add_subdirectory(trace) in CMakeLists.txt)")
    with tempfile.TemporaryDirectory() as tmp:
        source, output = os.path.join(tmp, "stream.bin"), os.path.join(tmp, "out.trace")
        with open(source, "wb") as f:
            f.write(stream())
        result = subprocess.run([xentrace, f"--input={source}", output], capture_output=True, text=True, timeout=30)
        # Exit 3: the garbage was reported; the records around it were kept.
        assert result.returncode == 3 and "resynchronising" in result.stderr, result
        assert "4 control frames" in result.stderr, result.stderr
        with open(output, "rb") as f:
            head = struct.unpack("<III", f.read(12))
        assert head == (0x0001F003 | (2 << 28), 0, 12), head   # CPU_CHANGE framing; first window: the TSC note
        doc = json.loads(subprocess.run([xenalyze, "--json", output], capture_output=True, text=True,
                                        timeout=30, check=True).stdout)
        assert doc["cpu_hz"] == {"hz": 3_000_000_000, "source": "trace"}, doc["cpu_hz"]
        assert doc["diagnostics"]["errors"] == 0, doc["diagnostics"]
        forks = doc["forks"]
        assert len(forks) == 4 and all(f["complete"] and f["mode"] == "writable" for f in forks), forks
        assert [f["direct_writes"] for f in forks] == [18] * 4, forks
        assert {f["cpu"] for f in forks} == {0, 1}
        hist = doc["pvmmu"]["ptes_per_table"]
        assert hist == {"5": 4, "6": 4, "7": 4}, hist
        text = subprocess.run([xenalyze, "--forks", "--ptes-per-table", output], capture_output=True,
                              text=True, timeout=30, check=True).stdout
        assert "fork 0 on cpu 0 (writable mode)" in text and "direct-writes" in text, text
    print("PASS")


if __name__ == "__main__":
    main()
