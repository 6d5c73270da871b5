"""pvhvd after `kill -9` and `--attach` keeps the relay's bulk window (tools/PROTOCOL.md "The
bulk window"): the killed daemon's session was on the window, and the test leaves the start of
a 32 KiB frame in the ring to dom0, as a daemon killed between two writes of one frame would.
The restarted daemon completes it, opens its session on the window again (its log says so),
and an `xl create` after the restart takes about what it took before (printed: wall time);
a guest whose ring it took over obeys `xl shutdown -w`, the new one too, free memory is back at
its baseline and the machine stops cleanly. On ours and on Xen 4.17."""
import mmap
import os
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402
import relay_client  # noqa: E402
import toolstack_scenario  # noqa: E402

WAITING = "xenbus: waiting for control/shutdown (store connected)"
# common/relay/window.h: the ring to dom0's head (the host's) at 64, its tail (dom0's) at 128,
# its bytes at 0x1000, 256 KiB.
TO_DOM0_HEAD, TO_DOM0_TAIL, TO_DOM0_RING, RING_BYTES = 64, 128, 0x1000, 256 * 1024


def leave_cut_frame(window_path):
    """The first half of a BUFFER_WRITE frame of 32 KiB, published in the ring to dom0."""
    payload = struct.pack("<IQ", 1, 0) + bytes(32768)
    cut = relay_client.frame(relay_client.BUFFER_WRITE, payload)[:16 + 16384]
    with open(window_path, "r+b") as f:
        window = mmap.mmap(f.fileno(), 1 << 20)
        deadline = time.monotonic() + 10
        while True:  # what the killed daemon wrote last, dom0 reads first
            head, tail = struct.unpack_from("<I", window, TO_DOM0_HEAD)[0], struct.unpack_from("<I", window, TO_DOM0_TAIL)[0]
            if head == tail or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        machine.expect(head == tail, f"dom0 has not read the ring to it: head {head}, tail {tail}")
        for i, byte in enumerate(cut):
            window[TO_DOM0_RING + (head + i) % RING_BYTES] = byte
        struct.pack_into("<I", window, TO_DOM0_HEAD, (head + len(cut)) & 0xffffffff)
        window.close()


def timed_create(s, name):
    t0 = time.monotonic()
    s.xl("create", "examples/hello.cfg", f'name="{name}"', 'extra="xenbus=wait"', timeout=600)
    took = time.monotonic() - t0
    s.wait_console(name, WAITING, timeout=300)
    return took


def main():
    build, hv = guest_boot.arguments()
    with tempfile.TemporaryDirectory(prefix="pvhv-attachwin") as state:
        s = toolstack_scenario.Scenario(build, hv, state, show=False)
        try:
            s.start_daemon()
            machine.expect("(window " in s.daemon.text(), f"the first daemon is not on the window:\n{s.daemon.text()}")
            baseline = s.free_memory()
            first = timed_create(s, "a")
            before = s.listed()
            s.daemon.kill9()
            leave_cut_frame(os.path.join(state, "relay.window"))
            s.start_daemon(attach=True)
            text = s.daemon.text()
            session = [l for l in text.splitlines() if "relay session:" in l][-1]
            machine.expect("(window " in session, f"the restarted daemon's session is not on the window: {session}")
            after = s.listed()
            machine.expect({k: v[:3] for k, v in after.items()} == {k: v[:3] for k, v in before.items()},
                           f"xl list changed across kill -9: {before} -> {after}")
            again = timed_create(s, "b")
            print(f"{hv.name}: xl create (wall time, to the command's end): {first:.1f} s with the first daemon, "
                  f"{again:.1f} s after kill -9 and --attach")
            for name in ("a", "b"):
                result = s.xl("shutdown", "-w", name, timeout=300)
                machine.expect("PV control interface not available" not in result.stderr, result.stderr)
                s.wait_gone(name)
            s.expect_free_memory(baseline, 60)
            pvhvd_client.stop_and_check(s.daemon, hv)
            s.daemon = None
            print(f"ok: {hv.name}: the restarted daemon's session is on the bulk window")
        finally:
            s.cleanup()


if __name__ == "__main__":
    main()
