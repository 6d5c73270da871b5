"""`pkg-config --cflags --libs xencontrol` against the build tree gives Debian's xenctrl.h and our
library: a program compiled with just those flags links with build/lib/libxenctrl.so and finds it
at run time (its RUNPATH), not Debian's libxenctrl."""
import argparse
import os
import subprocess
import sys
import tempfile


def fail(message):
    raise SystemExit(f"FAIL: {message}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    lib = os.path.join(args.build, "lib")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(lib, "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "xencontrol"], env=env, capture_output=True,
                           text=True)
    if flags.returncode != 0:
        fail(f"pkg-config: {flags.stderr}")
    print("pkg-config --cflags --libs xencontrol:", flags.stdout.strip())
    if f"-L{lib}" not in flags.stdout.split():
        fail(f"the flags do not name {lib}")
    with tempfile.TemporaryDirectory() as tmp:
        program = os.path.join(tmp, "xc_relay_check")
        build = subprocess.run(["cc", "-Wall", "-Werror", "-o", program, args.source, *flags.stdout.split()],
                               capture_output=True, text=True)
        if build.returncode != 0:
            fail(f"cc: {build.stderr}")
        ldd = subprocess.run(["ldd", program], capture_output=True, text=True, check=True).stdout
        line = next((l for l in ldd.splitlines() if "libxenctrl" in l), "")
        print("ldd:", line.strip())
        if os.path.realpath(lib) not in os.path.realpath(line.split("=>")[-1].split()[0]) if "=>" in line else True:
            fail(f"the program does not load {lib}/libxenctrl.so: {line}")
        # Without a transport it must fail as Xen's library fails without privcmd: NULL, errno set.
        run = subprocess.run([program], env={k: v for k, v in os.environ.items() if k != "PVHV_XENCTRL"},
                             capture_output=True, text=True, timeout=30)
        if run.returncode != 1 or "xc_interface_open: FAIL" not in run.stdout or "PVHV_XENCTRL" not in run.stderr:
            fail(f"without PVHV_XENCTRL: status {run.returncode}, out {run.stdout!r}, err {run.stderr!r}")
        print("ok: built with pkg-config, linked with", line.split("=>")[-1].split()[0])


if __name__ == "__main__":
    sys.exit(main())
