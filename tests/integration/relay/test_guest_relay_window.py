"""The dom0 relay's bulk window (tools/PROTOCOL.md "The bulk window"): QEMU's ivshmem-plain over
a file the test maps, on ours and on Xen 4.17 (dom0 maps the device's memory BAR as I/O memory on
both). A session over the window: OPENED announces it, buffers written and read back (32 KiB
frames, bytes intact), a plain hypercall; a client on the serial socket in between is answered
on the socket, and the window client then opens again; hostile window input: garbage bytes,
a corrupt frame, a ring head that cannot be (the relay drops the ring and serves on), each
followed by a correct request that works; then SHUTDOWN over the window, dom0 ends normally."""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import relay_client as rc  # noqa: E402
import relay_run  # noqa: E402

XEN_VERSION = 17
FLAG_WINDOW = 1 << 1


def expect(condition, what):
    machine.expect(condition, what)
    print(f"ok: {what}")


def alive(c):
    version = c.hypercall(XEN_VERSION, 0, 0)
    machine.expect(version >> 16 == 4, f"relay no longer serves (version {version:#x})")


def open_window(c, what):
    opened = c.open()
    version, _, max_data, _, _, flags = struct.unpack_from("<IIIIII", opened.payload, 4)
    expect(version == 1 and max_data == 32768 and flags & FLAG_WINDOW, f"{what}: OPENED over the window, flags {flags:#x}")


def good_path(c):
    address = c.alloc(8)
    data = os.urandom(32768)
    start = time.monotonic()
    for _ in range(8):
        c.write(address, data)
    seconds = time.monotonic() - start
    expect(all(c.read(address, 32768) == data for _ in range(2)), "32 KiB frames through the window, bytes intact")
    print(f"window: 256 KiB host to dom0 in {seconds:.3f} s")
    c.free(address)
    alive(c)


def serial_between(socket_path, c):
    """A v1 client on the socket: its session is answered on the socket, and ends the window's."""
    s = rc.Client(socket_path)
    opened = s.open()
    flags = struct.unpack_from("<I", opened.payload, 24)[0]
    expect(flags & FLAG_WINDOW, "OPENED on the serial socket announces the window too")
    alive(s)
    s.close()
    open_window(c, "the window client again after a serial session")
    alive(c)


def hostile(c):
    c.send_raw(b"\x00garbage, no frame\xff" * 20)
    alive(c)
    e = rc.RelayError(c.next_error())
    expect(e.name == "skipped", f"garbage through the window: {e.name} ({e.detail} bytes)")
    bad = bytearray(rc.frame(rc.HYPERCALL, struct.pack("<II5Q", c.seq, XEN_VERSION, 0, 0, 0, 0, 0)))
    bad[-1] ^= 0xff
    c.send_raw(bytes(bad))
    e = rc.RelayError(c.next_error())
    expect(e.name == "corrupt", "a corrupt frame through the window: corrupt")
    alive(c)
    # A head two rings ahead of the relay's tail: no ring contents, dropped whole.
    head = c._u32(rc.TO_DOM0_HEAD)
    c._put32(rc.TO_DOM0_HEAD, head + 2 * rc.WINDOW_RING)
    time.sleep(0.5)
    alive(c)
    expect(True, "an impossible ring head: the relay dropped the ring and serves on")


def main():
    build, hv = guest_boot.arguments()

    def client(socket_path, serial, window_path):
        c = rc.WindowClient(window_path)
        open_window(c, "first session")
        good_path(c)
        serial_between(socket_path, c)
        hostile(c)
        c.shutdown(0)
        c.close()
        return True

    boot, _ = relay_run.boot_relay(build, hv, "relay=com2", client, window=True)
    machine.expect("relay: bulk window at machine address" in boot.serial, "dom0 did not map the window", boot)
    machine.expect("relay: the host broke the window's ring" in boot.serial, "the broken ring went unseen", boot)
    guest_boot.expect_ended(boot, hv, hv.poweroff, 0)
    print(f"ok: {hv.name}: the relay served over its bulk window, hostile input answered, dom0 ended normally")


if __name__ == "__main__":
    main()
