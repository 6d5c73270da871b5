"""Debian's Linux PV kernel through the toolstack (issue 11): pvhvd, then `xl create
examples/linux.cfg -c` (the bzImage itself, decompressed by the builder; the project's initramfs;
256 MiB; `linux_init=shell`). The busybox shell comes up on hvc0 and what is typed into xl's
console reaches it (the daemon's console backend both ways); Linux's xenbus comes up on the
daemon's xenstore (it announces control/feature-poweroff, without which `xl shutdown` is refused)
and `xl shutdown -w` powers it off through control/shutdown. A guest flooding its console is
drained (the shell still answers) and its log stays bounded. Bad kernels (a truncated bzImage,
one whose header agrees with its cut payload, a payload that is not xz, an image larger than the memory given to xl create) fail with one
line and nothing created, free memory back at its baseline throughout. On ours and Xen 4.17
(both with our relay dom0).
"""
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "linux"))
import bzimage  # noqa: E402
import guest_boot  # noqa: E402
import initramfs  # noqa: E402
import machine  # noqa: E402
import toolstack_scenario  # noqa: E402

CONFIG = "examples/linux.cfg"
SHELL_UP = "job control turned off"  # busybox sh on a console that is not its controlling tty
FLOOD_BYTES = 400 * 1024  # more than the daemon keeps of one log (256 KiB, then one rotation)
LOG_BOUND = 256 * 1024


def bad_kernels(build, tmp):
    """(what, path) of images damaged from the real bzImage."""
    with open(os.path.join(build, "deps", "linux", "vmlinuz"), "rb") as f:
        image = f.read()
    _, _, start, length = bzimage.setup_header(image)
    truncated = image[:start + length // 2]  # the header still announces the whole payload
    # Cut, with a header that agrees: the xz stream itself ends early.
    short_payload = bytearray(truncated)
    short_payload[0x24C:0x250] = struct.pack("<I", length // 2)
    not_xz = bytearray(image)
    not_xz[start:start + 6] = b"NOTXZ!"
    out = []
    for what, data in (("truncated", truncated), ("truncated-payload", bytes(short_payload)),
                       ("not-xz", bytes(not_xz))):
        path = os.path.join(tmp, f"vmlinuz-{what}")
        with open(path, "wb") as f:
            f.write(data)
        out.append((what, path))
    return out


def expect_refused(scenario, what, *overrides):
    """`xl create` fails with one line of error, and leaves no domain behind."""
    result = scenario.xl("create", CONFIG, *overrides, check=False, timeout=300)
    errors = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("Parsing config")]
    machine.expect(result.returncode != 0, f"{what}: xl create succeeded\n{result.stdout}{result.stderr}")
    machine.expect(len(errors) == 1, f"{what}: not one line of error: {errors}")
    machine.expect(list(scenario.listed()) == ["Domain-0"], f"{what}: a domain was left: {scenario.listed()}")
    return errors[0]


def type_into(console, text):
    console.stdin.write(text.encode())
    console.stdin.flush()


def main():
    build, hv = guest_boot.arguments()
    initramfs.build(build)
    with tempfile.TemporaryDirectory(prefix="pvhv-xl-linux") as state:
        scenario = toolstack_scenario.Scenario(build, hv, state, show=False)
        console = None
        try:
            scenario.start_daemon()
            baseline = scenario.free_memory()
            machine.expect(baseline >= 256, f"only {baseline} MiB free beside dom0: Linux needs 256")
            for what, path in bad_kernels(build, state):
                line = expect_refused(scenario, what, f'kernel="{path}"')
                print(f"{what}: {line}")
                scenario.expect_free_memory(baseline)
            line = expect_refused(scenario, "memory below the image", "memory=32")
            print(f"memory=32: {line}")
            scenario.expect_free_memory(baseline)

            # -c: xl attaches to the console once the domain runs; its stdin is the keyboard.
            xl = os.path.join(build, "bin", "xl")
            seen = open(os.path.join(state, "xl-console.out"), "wb")  # what xl shows: a file, never a full pipe
            console = subprocess.Popen([xl, "create", CONFIG, "-c"], cwd=machine.ROOT, env=scenario.env,
                                       stdin=subprocess.PIPE, stdout=seen, stderr=subprocess.STDOUT)
            seen.close()
            scenario.wait_console("linux", SHELL_UP, timeout=300)
            log = scenario.console_log("linux")
            for marker in ("Hypervisor detected: Xen PV", "printk: console [hvc0] enabled", "Run /init as init process",
                           "linux-init: Linux 6."):
                machine.expect(marker in log, f"Linux's console lacks {marker!r}:\n{log[-3000:]}")
            # Linux's xenbus is up on the daemon's store: its shutdown watcher announced itself.
            domid = scenario.listed()["linux"][0]
            client = scenario.daemon.client()
            for feature in ("feature-poweroff", "feature-reboot"):
                answer = client.call("xenstore_read", path=f"/local/domain/{domid}/control/{feature}")
                machine.expect(answer.get("value") == "1", f"Linux's xenbus did not write control/{feature}: {answer}")
            client.close()
            type_into(console, "echo typed-$((6*7))\n")
            scenario.wait_console("linux", "typed-42", timeout=60)
            with open(os.path.join(state, "xl-console.out"), "rb") as f:
                machine.expect(b"typed-42" in f.read(), "xl create -c did not show the shell's answer")

            # A flood of the console: drained, the shell still answers, the log bounded.
            type_into(console, f"head -c {FLOOD_BYTES} /dev/zero | tr '\\0' x; echo; echo flood-$((5*5))-done\n")
            scenario.wait_console("linux", "flood-25-done", timeout=300)
            log_path = os.path.join(state, "console-linux.log")
            size = os.path.getsize(log_path) + (os.path.getsize(log_path + ".1") if os.path.exists(log_path + ".1") else 0)
            machine.expect(os.path.getsize(log_path) <= LOG_BOUND and size <= 2 * LOG_BOUND,
                           f"the console log is not bounded: {size} bytes kept")
            type_into(console, "echo after-$((7*7))\n")
            scenario.wait_console("linux", "after-49", timeout=60)

            # xenbus up (feature-poweroff announced, else xl refuses without -F): control/shutdown.
            result = scenario.xl("shutdown", "-w", "linux", timeout=180)
            machine.expect("PV control interface not available" not in result.stderr, result.stderr)
            scenario.wait_gone("linux")
            try:
                console.wait(30)
            except subprocess.TimeoutExpired:
                machine.expect(False, "xl create -c did not end with the domain")
            scenario.expect_free_memory(baseline)
            status = scenario.daemon.stop()
            machine.expect(status == 0, f"pvhvd's exit status {status}:\n{scenario.daemon.text()}")
            scenario.daemon = None
        finally:
            if console and console.poll() is None:
                console.kill()
                console.wait()
            scenario.cleanup()
    print(f"ok: {hv.name}: Linux through xl create -c: a shell whose input arrives, a drained flood, "
          "xl shutdown through control/shutdown; bad kernels refused in one line, free memory at baseline")


if __name__ == "__main__":
    main()
