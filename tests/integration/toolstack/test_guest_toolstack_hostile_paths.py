"""The toolstack's last hostile inputs (issue 10), on ours and on Xen 4.17 with our relay dom0:

- `xl trace start` given a path that exists (or opens) but cannot take the trace: a directory
  (EISDIR), a file in a directory even root cannot write in (sysfs: EACCES; a 0555 directory
  when not root), a /proc file that opens but refuses every write (EIO), /dev/full (ENOSPC), a
  FIFO nobody reads (ENXIO: never a link thread blocked on it). Each is one line as Xen's
  xentrace says it ("Could not open output file" / "Failed to write trace data"), exit status
  1, the trace buffers left off; the daemon goes on (`xl list`), and a start to a good path
  then records (`xl trace stop` reports its records).
- the socket op `xenstore_write` with what xenstored refuses: a value that makes the request
  longer than XENSTORE_PAYLOAD_MAX (E2BIG, as libxenstore's xs_write; an existing node keeps its
  value, a new one is not made), a path beyond XENSTORE_REL_PATH_MAX (EINVAL, as xenstored's
  is_valid_nodename), a path with illegal characters (EINVAL). Many nodes are accepted, as
  xenstored accepts them from dom0: its node quota binds unprivileged domains only (the socket
  ops act as dom0; a domU's quota: test_guest_xenstore_hostile.py): 1,100 nodes written one by
  one and a path of 1,000 components made at once, all listed back; outside the test's own
  subtree the store is unchanged (the nodes before are the nodes after).
"""
import errno
import os
import stat
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402

PAYLOAD_MAX = 4096  # XENSTORE_PAYLOAD_MAX (xs_wire.h)
REL_PATH_MAX = 2048  # XENSTORE_REL_PATH_MAX


def bad_trace_paths(tmp):
    """(path, errno, words of the message) that exist or open but cannot take a trace."""
    fifo = os.path.join(tmp, "fifo.trace")
    os.mkfifo(fifo)
    paths = [(tmp, errno.EISDIR, "Could not open output file"),
             ("/proc/version", errno.EIO, "Failed to write trace data"),
             ("/dev/full", errno.ENOSPC, "Failed to write trace data"),
             (fifo, errno.ENXIO, "Could not open output file")]
    if os.path.isdir("/sys/kernel"):
        paths.append(("/sys/kernel/pvhv.trace", errno.EACCES, "Could not open output file"))
    if os.geteuid() != 0:  # root writes in a 0555 directory
        readonly = os.path.join(tmp, "readonly")
        os.mkdir(readonly)
        os.chmod(readonly, stat.S_IRUSR | stat.S_IXUSR)
        paths.append((os.path.join(readonly, "x.trace"), errno.EACCES, "Could not open output file"))
    return paths


def check_trace_paths(xl, client, daemon, tmp):
    for path, code, words in bad_trace_paths(tmp):
        answer = client.call("trace_start", file=path)
        machine.expect(answer.get("ok") is False and answer["errno"] == code and words in answer["error"],
                       f"trace_start {path}: {answer}")
        run = xl("trace", "start", path)
        lines = run.stderr.strip().splitlines()
        machine.expect(run.returncode == 1 and len(lines) == 1 and words in lines[0] and path in lines[0],
                       f"xl trace start {path}: {run.returncode} {run.stderr!r}")
        machine.expect(daemon.proc.poll() is None, f"pvhvd died on {path}:\n{daemon.text()[-3000:]}")
        listed = xl("list")
        machine.expect(listed.returncode == 0 and "Domain-0" in listed.stdout, f"xl list after {path}: {listed}")
        # Nothing was started: a stop has nothing to stop.
        stop = client.call("trace_stop")
        machine.expect(stop.get("ok") is False and stop["errno"] == errno.ENOENT, f"stop after {path}: {stop}")
    machine.expect(os.path.exists("/dev/full") and open("/proc/version").read(), "the probes changed a system file")
    good = os.path.join(tmp, "good.trace")
    run = xl("trace", "start", good)
    machine.expect(run.returncode == 0, f"xl trace start {good}: {run.returncode} {run.stderr}")
    run = xl("trace", "stop")
    machine.expect(run.returncode == 0 and "records" in run.stdout, f"xl trace stop: {run.stdout}{run.stderr}")
    machine.expect(os.path.getsize(good) > 0, "the good trace is empty")


def nodes(client, path="/"):
    return {(n["path"], n["value_hex"]) for n in client.ok("xenstore_ls", path=path)["nodes"]}


def refused(client, path, value, code):
    answer = client.call("xenstore_write", path=path, value=value)
    machine.expect(answer.get("ok") is False and answer["errno"] == code,
                   f"xenstore_write {path[:60]}... ({len(value)} bytes): {answer}")


def check_xenstore_writes(client):
    before = nodes(client)
    base = "/pvhv-hostile"
    # E2BIG: path, NUL and value beyond one payload; the largest that fits is written.
    node = base + "/big"
    client.ok("xenstore_write", path=node, value="before")
    refused(client, node, "v" * (PAYLOAD_MAX - len(node)), errno.E2BIG)
    machine.expect(client.ok("xenstore_read", path=node)["value"] == "before", "a refused write changed the node")
    refused(client, base + "/new", "v" * PAYLOAD_MAX, errno.E2BIG)
    missing = client.call("xenstore_read", path=base + "/new")
    machine.expect(missing.get("errno") == errno.ENOENT, f"a refused write made its node: {missing}")
    fits = "v" * (PAYLOAD_MAX - len(node) - 1)
    client.ok("xenstore_write", path=node, value=fits)
    machine.expect(client.ok("xenstore_read", path=node)["value"] == fits, "the largest value that fits")
    # EINVAL: a path beyond XENSTORE_REL_PATH_MAX, and one with characters xenstored refuses.
    long_path = base + "/" + "p" * REL_PATH_MAX
    refused(client, long_path, "x", errno.EINVAL)
    refused(client, base + "/bad name", "x", errno.EINVAL)
    machine.expect(client.call("xenstore_read", path=long_path).get("errno") == errno.EINVAL, "the long path")
    # Many nodes, as dom0: accepted (xenstored's node quota binds unprivileged domains only).
    for i in range(1100):
        client.ok("xenstore_write", path=f"{base}/many/n{i}", value=str(i))
    deep = base + "/deep" + "/d" * 1000
    client.ok("xenstore_write", path=deep, value="bottom")
    listed = nodes(client, base)
    machine.expect(sum(1 for p, _ in listed if p.startswith(base + "/many/")) == 1100, "1,100 nodes listed")
    machine.expect(sum(1 for p, _ in listed if p.startswith(base + "/deep")) == 1001, "1,001 nested nodes")
    machine.expect(client.ok("xenstore_read", path=deep)["value"] == "bottom", "the deepest node")
    # Nothing outside the test's own subtree changed.
    after = {n for n in nodes(client) if not n[0].startswith(base)}
    machine.expect(after == before, f"the store changed outside {base}: {sorted(after ^ before)[:5]}")


def main():
    build, hv = guest_boot.arguments()
    with pvhvd_client.TestDaemon(build, ["--hypervisor", hv.name], prefix="pvhv-hostile-paths") as run:
        client = run.daemon.client()
        with tempfile.TemporaryDirectory(prefix="pvhv-trace-paths") as tmp:
            check_trace_paths(run.xl, client, run.daemon, tmp)
        check_xenstore_writes(client)
        client.close()
        status = run.daemon.stop()
        machine.expect(status == 0, f"pvhvd's exit status {status}:\n{run.daemon.text()[-3000:]}")
    print(f"ok: {hv.name}: bad trace paths refused in one line each, the daemon on and a good one recorded; "
          "xenstore_write's E2BIG and EINVAL leave the store unchanged, many nodes accepted as from dom0")


if __name__ == "__main__":
    main()
