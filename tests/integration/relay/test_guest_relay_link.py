"""The dom0 relay's link under a test client (tests/integration/lib/relay_client.py), on ours and on
Xen 4.17: first what a correct client does (buffers written, passed to a hypercall and read back;
the trace buffers' t_info page read as a foreign frame; VIRQ_TBUF bound and its event pushed),
then every kind of bad input: a request before OPEN, corrupt, truncated and oversized frames,
garbage, out-of-order and replayed sequence numbers, unknown and malformed frames, buffers that
do not exist, hypercalls and foreign accesses the relay refuses, lasting mappings of dom0 or a
reserved domain and handles that name no mapping. Each gets its error frame and
the relay keeps serving (a correct request right after each one works); then SHUTDOWN, and
dom0 ends normally (ours: audit clean)."""
import os
import re
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import relay_client as rc  # noqa: E402
import relay_run  # noqa: E402

XEN_VERSION, SYSCTL, SET_TRAP_TABLE, SCHED_OP, MMU_UPDATE, UPDATE_VA_MAPPING, MULTICALL = 17, 35, 0, 29, 1, 14, 13
XENVER_CAPABILITIES = 3
XEN_SYSCTL_TBUF_OP, TBUFOP_GET_INFO, TBUFOP_SET_SIZE, TBUFOP_ENABLE, TBUFOP_DISABLE = 2, 0, 3, 4, 5
SYSCTL_INTERFACE_VERSION = 0x15
VIRQ_TBUF = 4
DOMID_XEN, DOMID_IO, DOMID_SELF = 0x7ff2, 0x7ff1, 0x7ff0
WINDOW = 0xffffffffb4000000
KERNEL = 0xffffffff80000000


class Checks:
    def __init__(self):
        self.count = 0

    def expect(self, condition, what):
        machine.expect(condition, what)
        self.count += 1
        print(f"ok: {what}")

    def error(self, client, kind, what, fields=b"", seq=None, detail=None):
        """A request that must be answered by an error frame `kind`."""
        try:
            client.request(kind if isinstance(kind, int) else kind, fields, seq=seq)
        except rc.RelayError as e:
            return e
        machine.expect(False, f"{what}: answered, expected an error")

    def refused(self, client, name, detail, what, fields, kind=rc.HYPERCALL, seq=None):
        e = self.error(client, kind, what, fields, seq=seq)
        got = e.detail & (2**64 - 1) if detail is not None and detail >= 0 else e.detail  # addresses are unsigned
        self.expect(e.name == name and (detail is None or got == detail), f"{what}: {e.name} ({got:#x})")

    def alive(self, client):
        """The relay still serves: a plain xen_version answers with Xen's version number."""
        version = client.hypercall(XEN_VERSION, 0, 0)
        machine.expect(version >> 16 == 4, f"relay no longer serves (version {version:#x})")


def sysctl_tbuf(command, size=0):
    body = struct.pack("<I", command) + bytes(36) + struct.pack("<I", size)
    return struct.pack("<II", XEN_SYSCTL_TBUF_OP, SYSCTL_INTERFACE_VERSION) + body.ljust(128, b"\0")


def hypercall_fields(number, *args):
    args = list(args) + [0] * (5 - len(args))
    return struct.pack("<I5Q", number, *args)


def good_path(c, checks):
    buffer = c.alloc(1)
    checks.expect(buffer == WINDOW, f"a one-page buffer at {buffer:#x}")
    c.write(buffer, b"\xff" * 1024)
    rc_version = c.hypercall(XEN_VERSION, XENVER_CAPABILITIES, buffer)
    caps = c.read(buffer, 1024).split(b"\0")[0]
    checks.expect(rc_version == 0 and caps.startswith(b"xen-3.0-x86_64"), f"capabilities read back: {caps!r}")
    big = c.alloc(10)  # larger than one frame's data: written and read in pieces
    pattern = bytes((i * 7) & 0xff for i in range(40000))
    for offset in range(0, len(pattern), 16384):
        c.write(big + offset, pattern[offset:offset + 16384])
    back = b"".join(c.read(big + o, min(16384, len(pattern) - o)) for o in range(0, len(pattern), 16384))
    checks.expect(back == pattern, "40000 bytes written to a 10-page buffer read back unchanged")
    c.free(big)

    # The trace buffers: set up by sysctl in a buffer, t_info read as a DOMID_XEN foreign frame.
    c.write(buffer, sysctl_tbuf(TBUFOP_SET_SIZE, 2))
    checks.expect(c.hypercall(SYSCTL, buffer) == 0, "tbuf set_size(2) through a buffer")
    port = c.bind_virq(VIRQ_TBUF)
    checks.expect(port > 0, f"VIRQ_TBUF bound to dom0 port {port} for the host")
    c.write(buffer, sysctl_tbuf(TBUFOP_ENABLE))
    checks.expect(c.hypercall(SYSCTL, buffer) == 0, "tbuf enable")
    c.write(buffer, sysctl_tbuf(TBUFOP_GET_INFO))
    c.hypercall(SYSCTL, buffer)
    info = c.read(buffer, 136)
    t_info_mfn, = struct.unpack_from("<Q", info, 8 + 32)
    t_info = c.foreign_read(DOMID_XEN, t_info_mfn, 0, 4)
    pages, = struct.unpack_from("<H", t_info)
    checks.expect(pages == 2, f"t_info at mfn {t_info_mfn:#x} says {pages} pages per CPU")
    # The relay's own hypercalls fill half the buffer; the hypervisor raises VIRQ_TBUF.
    deadline = time.monotonic() + 30
    while port not in c.events and time.monotonic() < deadline:
        c.hypercall(XEN_VERSION, 0, 0)
    checks.expect(port in c.events, f"VIRQ_TBUF's event pushed on port {port}")
    c.port_op(rc.UNMASK, port)
    c.write(buffer, sysctl_tbuf(TBUFOP_DISABLE))
    c.hypercall(SYSCTL, buffer)
    c.port_op(rc.CLOSE, port)
    checks.refused(c, "no_port", port, "notify on the port just closed", struct.pack("<I", port), kind=rc.NOTIFY)
    c.free(buffer)


def hostile_frames(c, checks):
    hello = hypercall_fields(XEN_VERSION, 0, 0)
    # Corrupt: one payload byte flipped after the CRC was computed.
    bad = bytearray(rc.frame(rc.HYPERCALL, struct.pack("<I", c.seq) + hello))
    bad[20] ^= 0x10
    c.send_raw(bytes(bad))
    e = rc.RelayError(c.next_error())
    checks.expect(e.name == "corrupt" and e.kind == rc.HYPERCALL and e.detail == len(hello) + 4,
                  f"corrupt frame: {e.name}, type {e.kind:#x}")
    checks.alive(c)
    # Truncated: a header promising 44 bytes, 10 of them, then nothing.
    c.send_raw(rc.frame(rc.HYPERCALL, struct.pack("<I", c.seq) + hello)[:26])
    e = rc.RelayError(c.next_error(timeout=10))
    checks.expect(e.name == "truncated" and e.detail == 26, f"truncated frame: {e.name} after {e.detail} bytes")
    checks.alive(c)
    # Oversized: a frame the relay would have to buffer 64 KiB for.
    payload = struct.pack("<I", c.seq) + struct.pack("<Q", WINDOW) + bytes(65536)
    c.send_raw(rc.frame(rc.BUFFER_WRITE, payload))
    e = rc.RelayError(c.next_error())
    checks.expect(e.name == "oversized" and e.detail == len(payload) and e.kind == rc.BUFFER_WRITE,
                  f"oversized frame ({len(payload)} bytes): {e.name}")
    checks.alive(c)
    # Garbage between frames.
    c.send_raw(bytes(range(1, 200)))
    checks.alive(c)
    e = rc.RelayError(c.next_error())
    checks.expect(e.name == "skipped" and e.detail == 199, f"garbage: {e.name} {e.detail} bytes")
    # Frames with a wrong framing version are garbage too.
    c.send_raw(rc.frame(rc.HYPERCALL, struct.pack("<I", c.seq) + hello, version=2))
    checks.alive(c)
    e = rc.RelayError(c.next_error())
    checks.expect(e.name == "skipped", "framing version 2: skipped")
    # Sequence numbers: ahead, replayed.
    expected = c.seq
    e = checks.error(c, rc.HYPERCALL, "ahead", hello, seq=expected + 5)
    checks.expect(e.name == "out_of_order" and e.detail == expected, f"out of order: expected {e.detail}")
    e = checks.error(c, rc.HYPERCALL, "replay", hello, seq=expected - 1)
    checks.expect(e.name == "out_of_order" and e.detail == expected, "a replayed sequence number")
    checks.alive(c)
    # Types and sizes.
    # Refused before its sequence number counts (not a request at all; OPEN has its own).
    checks.refused(c, "unknown_type", rc.RESULT, "an answer type sent to the relay", struct.pack("<q", 0),
                   kind=rc.RESULT, seq=c.seq)
    checks.refused(c, "unknown_type", 0x9e, "an undefined request type", b"", kind=0x9e)
    checks.refused(c, "malformed", 8, "a hypercall without its arguments", struct.pack("<I", XEN_VERSION))
    checks.refused(c, "version", 1, "OPEN with protocol version 7", struct.pack("<I", 7), kind=rc.OPEN,
                   seq=0x7777)
    checks.alive(c)


def hostile_requests(c, checks):
    # Buffers that do not exist.
    checks.refused(c, "no_buffer", WINDOW + 0x10000, "write to a buffer never allocated",
                   struct.pack("<Q", WINDOW + 0x10000) + b"x", kind=rc.BUFFER_WRITE)
    checks.refused(c, "no_buffer", KERNEL, "read of dom0's kernel as a buffer", struct.pack("<QI", KERNEL, 16),
                   kind=rc.BUFFER_READ)
    b = c.alloc(1)
    checks.refused(c, "bad_range", b + 4000, "write running past the buffer's end",
                   struct.pack("<Q", b + 4000) + bytes(200), kind=rc.BUFFER_WRITE)
    c.free(b)
    checks.refused(c, "no_buffer", b, "free of a buffer already freed", struct.pack("<Q", b), kind=rc.BUFFER_FREE)
    checks.refused(c, "bad_range", 0, "a buffer of 0 pages", struct.pack("<I", 0), kind=rc.BUFFER_ALLOC)
    # Hypercalls that would break dom0.
    checks.refused(c, "refused", 1, "set_trap_table", hypercall_fields(SET_TRAP_TABLE, 0))
    checks.refused(c, "refused", 1, "multicall", hypercall_fields(MULTICALL, 0, 0))
    checks.refused(c, "refused", 1, "update_va_mapping of dom0's kernel", hypercall_fields(UPDATE_VA_MAPPING, KERNEL, 0, 2))
    checks.refused(c, "refused", 1, "hypercall number 200", hypercall_fields(200))
    checks.refused(c, "refused", 2, "sched_op shutdown (dom0's own)", hypercall_fields(SCHED_OP, 2, 0))
    checks.refused(c, "refused", 3, "sysctl on dom0's kernel memory", hypercall_fields(SYSCTL, KERNEL))
    checks.refused(c, "refused", 6, "mmu_update of dom0's own page tables", hypercall_fields(MMU_UPDATE, 0, 1, 0, DOMID_SELF))
    checks.refused(c, "refused", 4, "mmu_update mapping dom0's frames into d1's tables",
                   hypercall_fields(MMU_UPDATE, 0, 1, 0, (2 << 16) | DOMID_SELF))
    checks.refused(c, "refused", 5, "mmu_update mapping DOMID_XEN's frames into d1's tables",
                   hypercall_fields(MMU_UPDATE, 0, 1, 0, (2 << 16) | DOMID_XEN))
    # Foreign frames the relay will not touch.
    checks.refused(c, "refused", 5, "foreign read of DOMID_IO (MMIO)", struct.pack("<IQII", DOMID_IO, 0xfee00, 0, 4),
                   kind=rc.FOREIGN_READ)
    checks.refused(c, "refused", 4, "foreign write into dom0", struct.pack("<IQI", 0, 1, 0) + b"x",
                   kind=rc.FOREIGN_WRITE)
    checks.refused(c, "bad_range", 4000, "foreign read past the frame", struct.pack("<IQII", DOMID_XEN, 1, 4000, 200),
                   kind=rc.FOREIGN_READ)
    checks.refused(c, "no_port", 1, "notify of a port the host never bound (the kernel's)", struct.pack("<I", 1),
                   kind=rc.NOTIFY)
    checks.alive(c)
    hostile_mappings(c, checks)


def hostile_mappings(c, checks):
    """Lasting mappings (FOREIGN_MAP): never of dom0 itself or a reserved domain, and a handle
    that names no mapping is refused whatever it is (no domU here: the limits and the good path
    are test_guest_xenctrl_domu's, with a domU to map)."""
    for domid, refusal, name in ((0, 4, "dom0"), (DOMID_SELF, 4, "DOMID_SELF"), (DOMID_XEN, 5, "DOMID_XEN"),
                                 (DOMID_IO, 5, "DOMID_IO"), (0x10000, 5, "domid 0x10000")):
        checks.refused(c, "refused", refusal, f"a lasting mapping of a frame of {name}", struct.pack("<IQ", domid, 1),
                       kind=rc.FOREIGN_MAP)
    e = checks.error(c, rc.FOREIGN_MAP, "a domain that does not exist", struct.pack("<IQ", 30000, 1))
    checks.expect(e.name == "hypervisor" and e.detail == -3, f"a lasting mapping of d30000's frame: {e.name} {e.detail}")
    checks.refused(c, "bad_range", 1 << 40, "a lasting mapping of frame 2^40", struct.pack("<IQ", 1, 1 << 40),
                   kind=rc.FOREIGN_MAP)
    for handle in (0, 1, 0x100, 0xffffffff):
        checks.refused(c, "no_mapping", handle, f"unmap of handle {handle:#x}, never handed out",
                       struct.pack("<I", handle), kind=rc.FOREIGN_UNMAP)
        checks.refused(c, "no_mapping", handle, f"read through handle {handle:#x}", struct.pack("<III", handle, 0, 4),
                       kind=rc.MAPPED_READ)
        checks.refused(c, "no_mapping", handle, f"write through handle {handle:#x}", struct.pack("<II", handle, 0) + b"x",
                       kind=rc.MAPPED_WRITE)
    checks.refused(c, "malformed", 8, "FOREIGN_MAP without its frame", struct.pack("<I", 1), kind=rc.FOREIGN_MAP)
    checks.alive(c)


def main():
    build, hv = guest_boot.arguments()
    checks = Checks()

    def client(socket_path, serial):
        c = rc.Client(socket_path)
        # Before any OPEN the relay has no session.
        c.send_raw(rc.frame(rc.HYPERCALL, struct.pack("<I", 5) + hypercall_fields(XEN_VERSION)))
        e = rc.RelayError(c.next_error())
        checks.expect(e.name == "no_session", "a request before OPEN: no_session")
        opened = c.open()
        version, max_payload, max_data = struct.unpack_from("<III", opened.payload, 4)
        checks.expect(version == 1 and max_data == 32768, f"OPENED: protocol {version}, {max_data} data bytes")
        good_path(c, checks)
        hostile_frames(c, checks)
        hostile_requests(c, checks)
        good_path_again = c.alloc(1)
        c.free(good_path_again)
        c.shutdown(0)
        c.close()
        return checks.count

    boot, count = relay_run.boot_relay(build, hv, "relay=com2", client)
    s = re.search(r"relay: shutdown requested \(reason 0\): (\d+) requests, (\d+) errors", boot.serial)
    machine.expect(s is not None, "the relay did not report its shutdown", boot)
    machine.expect("relay: error 1 for frame type 0x81" in boot.serial, "the console lacks the relay's errors", boot)
    guest_boot.expect_ended(boot, hv, hv.poweroff, 0)
    print(f"ok: {hv.name}: {count} checks, relay answered {s.group(1)} requests with {s.group(2)} errors, dom0 ended normally")


if __name__ == "__main__":
    main()
