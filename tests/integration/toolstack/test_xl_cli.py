"""build/bin/xl against a fake pvhvd (protocol version 1, tools/PROTOCOL.md) on a Unix socket in
a temporary state directory: the message and status with no daemon, and for each command the
request xl sends and the output, messages and exit status it gives, in Xen 4.17's formats.
No QEMU: the fake daemon answers from a small table of domains.

Takes --build (and ignores --hypervisor) like every integration test.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
BUILD = os.path.join(REPO, "build")
ESRCH, EEXIST = 3, 17

LIST_HEADER = "Name                                        ID   Mem VCPUs\tState\tTime(s)\n"


def domain(domid, name, **fields):
    d = {"domid": domid, "name": name, "uuid": f"00000000-0000-0000-0000-{domid:012x}", "running": False,
         "blocked": False, "paused": False, "shutdown": False, "crashed": False, "dying": False,
         "shutdown_reason": 0, "mem_kb": 32768, "max_mem_kb": 32768, "vcpus": 1, "vcpus_online": 1,
         "cpu_time_ns": 0, "start_time": 1_700_000_000, "ptwr_mode": "emulate", "config": {"name": name},
         "config_text": ""}
    d.update(fields)
    return d


class FakeDaemon:
    """Speaks the client side of the protocol: one thread per connection, every request kept."""

    def __init__(self, state_dir):
        self.path = os.path.join(state_dir, "pvhvd.sock")
        self.requests = []
        self.console_input = b""
        self.lock = threading.Lock()
        self.domains = [domain(0, "Domain-0", running=True, mem_kb=524288, cpu_time_ns=12_345_678_901),
                        domain(1, "forktest", blocked=True, mem_kb=65536, cpu_time_ns=1_500_000_000)]
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(8)
        self.acceptor = threading.Thread(target=self.accept, daemon=True)
        self.acceptor.start()

    def close(self):
        # Wake the accepting thread and wait for it: closed under a blocked accept(), the
        # descriptor's number could be reused by the next test's socket and accepted on here.
        try:
            self.server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.acceptor.join(timeout=10)
        self.server.close()

    def accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def find(self, dom):
        for d in self.domains:
            if dom == d["name"] or dom == str(d["domid"]):
                return d
        return None

    def serve(self, conn):
        buffered = b""
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                buffered += data
                while b"\n" in buffered:
                    line, buffered = buffered.split(b"\n", 1)
                    request = json.loads(line)
                    with self.lock:
                        self.requests.append(request)
                    answer = self.answer(request)
                    answer["id"] = request.get("id")
                    conn.sendall(json.dumps(answer).encode() + b"\n")
                    if request["op"] == "console" and answer["ok"]:
                        self.console(conn, buffered, keep_open=request["dom"] == "1")
                        return

    def console(self, conn, early, keep_open):
        """The guest's output, then its input until xl detaches (domain 1) or, for the others,
        the end of the stream as when the domain goes away."""
        try:
            conn.sendall(b"console: hello from forktest\r\n")
        except BrokenPipeError:
            pass
        self.console_input = early
        while keep_open:
            data = conn.recv(4096)
            if not data:
                return
            self.console_input += data

    def error(self, errno, message):
        return {"ok": False, "errno": errno, "error": message}

    def answer(self, r):
        op = r["op"]
        if op == "hello":
            return {"ok": True, "version": 1, "daemon": "pvhvd", "hypervisor": "pvhv",
                    "hypervisor_version": "4.17.0", "started_ns": 1}
        if op in ("list", "destroy", "shutdown", "reboot", "pause", "unpause", "mem_max", "ptwr_mode",
                  "console", "vcpu_list", "vcpu_pin") and "dom" in r:
            d = self.find(r["dom"])
            if d is None:
                return self.error(ESRCH, f"{r['dom']} is an invalid domain identifier (rc=-6)")
        if op == "list":
            return {"ok": True, "domains": [d] if "dom" in r else self.domains}
        if op == "create":
            name = r["config"]["name"]
            if self.find(name):
                return self.error(EEXIST, f'Domain with name "{name}" already exists.')
            domid = max(d["domid"] for d in self.domains) + 1
            self.domains.append(domain(domid, name, paused=r.get("paused", False), config=r["config"]))
            return {"ok": True, "domid": domid, "name": name, "uuid": r["config"]["uuid"]}
        if op == "destroy":
            self.domains.remove(d)
            return {"ok": True}
        if op in ("shutdown", "reboot") and d["name"] == "nopv":  # a guest without xenbus
            if not r.get("fallback"):
                what = "reboot" if op == "reboot" else "shutdown"
                event = "ACPI reset event." if op == "reboot" else "ACPI power event."
                return dict(self.error(95, f"PV control interface not available: external graceful {what} "
                                           f"not possible.\nUse \"-F\" to fallback to {event}"), rc=-10)
            return {"ok": True, "fallback": True}
        if op in ("shutdown", "reboot", "pause", "unpause", "mem_max"):
            return {"ok": True, "fallback": False}
        if op == "ptwr_mode":  # without "mode": a read of the domain's mode
            if "mode" in r:
                d["ptwr_mode"] = r["mode"]
            return {"ok": True, "mode": d["ptwr_mode"]}
        if op == "info":
            return {"ok": True, "host": "pvhv-host", "nr_cpus": 2, "max_cpu_id": 1, "total_memory": 1024,
                    "free_memory": 400,
                    "virt_caps": "pv", "xen_major": 4, "xen_minor": 17, "xen_extra": ".0",
                    "xen_version": "4.17.0", "xen_commandline": "ptwr=emulate console=com1"}
        if op == "dmesg":
            return {"ok": True, "text": "(XEN) line one\n(XEN) line two\n"}
        if op == "vcpu_list":
            ds = [d] if "dom" in r else self.domains
            return {"ok": True, "vcpus": [{"domid": x["domid"], "name": x["name"], "vcpu": 0, "cpu": 0,
                                            "online": True, "running": x["running"], "blocked": x["blocked"],
                                            "cpu_time_ns": x["cpu_time_ns"], "affinity": [0, 1]} for x in ds]}
        if op == "vcpu_pin":
            if r["vcpu"] == 7:
                return self.error(22, "Setting vcpu affinity: Invalid argument")
            return {"ok": True, "vcpus": []}
        if op == "cpupool_list":
            return {"ok": True, "pools": [{"id": 0, "name": "Pool-0", "sched": "credit2", "cpus": [0, 1],
                                           "n_dom": len(self.domains)}]}
        if op == "xenstore_write":
            return {"ok": True}
        if op == "trace_start":
            return {"ok": True}
        if op == "trace_stop":
            return {"ok": True, "records": 1234, "lost": 5}
        if op == "console":
            return {"ok": True}
        return self.error(95, f"unknown op {op}")

    def ops(self, op):
        with self.lock:
            return [r for r in self.requests if r["op"] == op]


class XlCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="xl")
        self.daemon = FakeDaemon(self.tmp.name)

    def tearDown(self):
        self.daemon.close()
        self.tmp.cleanup()

    def xl(self, *args, state_dir=None, stdin=None):
        env = dict(os.environ, PVHV_STATE_DIR=state_dir or self.tmp.name)
        return subprocess.run([os.path.join(BUILD, "bin", "xl"), *args], cwd=REPO, env=env, input=stdin,
                              capture_output=True, timeout=30)

    def ok(self, *args, **kw):
        r = self.xl(*args, **kw)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        return r.stdout.decode(), r.stderr.decode()

    def test_no_daemon_is_one_line_and_status_1(self):
        missing = os.path.join(self.tmp.name, "none")
        for command in (["list"], ["info"], ["destroy", "x"], ["create", "examples/hello.cfg", "-q"]):
            r = self.xl(*command, state_dir=missing)
            self.assertEqual(r.returncode, 1, command)
            self.assertEqual(r.stdout, b"")
            self.assertEqual(r.stderr.decode(),
                             f"xl: cannot connect to pvhvd at {missing}/pvhvd.sock: No such file or directory\n")

    def test_list(self):
        out, _ = self.ok("list")
        self.assertEqual(out, LIST_HEADER +
                         "Domain-0                                     0   512     1     r-----      12.3\n"
                         "forktest                                     1    64     1     -b----       1.5\n")
        out, _ = self.ok("list", "forktest")
        self.assertEqual(out.splitlines()[1].split()[0:2], ["forktest", "1"])
        self.assertEqual(self.daemon.ops("list")[-1]["dom"], "forktest")
        out, _ = self.ok("list", "-v")
        self.assertIn(" 00000000-0000-0000-0000-000000000001        -                -\n", out)

    def test_list_long_is_json_with_domid_and_config(self):
        out, _ = self.ok("list", "-l")
        listing = json.loads(out)
        self.assertEqual([e["domid"] for e in listing], [0, 1])
        self.assertEqual(list(listing[1].keys()), ["domid", "config"])
        self.assertEqual(listing[1]["config"], {"name": "forktest"})

    def test_unknown_domains(self):
        r = self.xl("list", "nosuch")
        self.assertEqual((r.returncode, r.stderr), (1, b"nosuch is an invalid domain identifier (rc=-6)\n"))
        r = self.xl("list", "99")
        self.assertEqual((r.returncode, r.stderr), (1, b"Error: Domain '99' does not exist.\n"))
        for command in ("pause", "unpause", "destroy", "shutdown", "console"):
            r = self.xl(command, "nosuch")
            self.assertEqual(r.returncode, 1, command)
            self.assertEqual(r.stderr, b"nosuch is an invalid domain identifier (rc=-6)\n", command)
        self.assertEqual(self.daemon.ops("pause") + self.daemon.ops("destroy"), [])

    def test_create_sends_the_resolved_config(self):
        _, err = self.ok("create", "examples/hello.cfg", "memory=24")
        self.assertEqual(err, "Parsing config from examples/hello.cfg\n")
        request = self.daemon.ops("create")[-1]
        config = request["config"]
        self.assertEqual(config["name"], "hello")
        self.assertEqual(config["kernel"], os.path.join(REPO, "build/guest/kernel"))
        self.assertEqual(config["ramdisk"], os.path.join(REPO, "build/guest/forktest.cpio"))
        self.assertEqual(config["cmdline"], "init=/hello")
        self.assertEqual((config["memory"], config["maxmem"]), (24, 32))
        self.assertEqual(config["ptwr_mode"], "emulate")
        self.assertRegex(config["uuid"], r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        self.assertFalse(request["paused"])
        self.assertEqual(request["config_file"], os.path.join(REPO, "examples/hello.cfg"))
        with open(os.path.join(REPO, "examples/hello.cfg")) as f:
            self.assertEqual(request["config_text"], f.read())

    def test_create_paused_quiet_and_name_clash(self):
        _, err = self.ok("create", "-p", "-q", "-f", "examples/forktest.cfg", "name='second'")
        self.assertEqual(err, "")
        self.assertTrue(self.daemon.ops("create")[-1]["paused"])
        self.assertEqual(self.daemon.ops("create")[-1]["config"]["on_crash"], "preserve")
        r = self.xl("create", "-q", "examples/forktest.cfg")
        self.assertEqual(r.returncode, 3)
        self.assertEqual(r.stderr, b'Domain with name "forktest" already exists.\n')

    def test_create_bad_configs_ask_nothing(self):
        bad = os.path.join(self.tmp.name, "bad.cfg")
        cases = {
            "name = 'x'\nmemory = [1\n": (1, f"{bad}:2: config parsing error near `': syntax error, unexpected $end, "
                                              "expecting ']'\nFailed to parse config: Invalid argument\n"),
            "memory = 64\n": (1, "Domain name must be specified.\n"),
            "name='x'\non_crash='explode'\n": (1, 'Unknown on_crash action "explode" specified\n'),
        }
        for text, (status, message) in cases.items():
            with open(bad, "w") as f:
                f.write(text)
            r = self.xl("create", "-q", bad)
            self.assertEqual((r.returncode, r.stderr.decode()), (status, message), text)
        r = self.xl("create", os.path.join(self.tmp.name, "absent.cfg"))
        self.assertEqual(r.returncode, 3)
        self.assertIn(b"Failed to read config file: ", r.stderr)
        self.assertEqual(self.daemon.ops("create"), [])

    def test_create_dryrun_needs_no_daemon(self):
        r = self.xl("create", "-n", "examples/forktest.cfg", "vcpus=2", state_dir=os.path.join(self.tmp.name, "none"))
        self.assertEqual(r.returncode, 0, r.stderr)
        config = json.loads(r.stdout)
        self.assertEqual((config["name"], config["vcpus"], config["cmdline"]), ("forktest", 2, "init=/forktest"))

    def test_create_and_attach_console(self):
        r = self.xl("create", "-q", "-c", "examples/hello.cfg", stdin=b"")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"console: hello from forktest\r\n")
        console = self.daemon.ops("console")[-1]
        self.assertEqual(console["dom"], "2")

    def test_console_input_until_ctrl_bracket(self):
        r = self.xl("console", "-t", "pv", "forktest", stdin=b"abc\x1ddef")
        self.assertEqual(r.returncode, 0, r.stderr)
        for _ in range(100):
            if self.daemon.console_input:
                break
            threading.Event().wait(0.05)
        self.assertEqual(self.daemon.console_input, b"abc")
        self.assertEqual(self.xl("console", "-t", "bogus", "forktest").stderr,
                         b"console type supported are: pv, serial, vuart\n")

    def test_destroy(self):
        r = self.xl("destroy", "Domain-0")
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith(b"Not destroying domain 0; use -f to force.\n"))
        self.ok("destroy", "forktest")
        self.assertEqual(self.daemon.ops("destroy")[-1], {"op": "destroy", "dom": "1", "force": False,
                                                          "id": self.daemon.ops("destroy")[-1]["id"]})
        r = self.xl("destroy")
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.startswith(b"'xl destroy' requires at least 1 argument.\n\n"))

    def test_shutdown_and_reboot(self):
        _, err = self.ok("shutdown", "-w", "forktest")
        self.assertEqual(err, "Shutting down domain 1\nWaiting for 1 domains\n"
                              "Domain 1 has been shut down, reason code 0\n")
        self.assertTrue(self.daemon.ops("shutdown")[-1]["wait"])
        _, err = self.ok("reboot", "1")
        self.assertEqual(err, "Rebooting domain 1\n")
        self.assertFalse(self.daemon.ops("reboot")[-1]["wait"])
        r = self.xl("shutdown")
        self.assertEqual((r.returncode, r.stderr), (1, b"You must specify -a or a domain id.\n\n"))
        self.ok("create", "-q", "examples/hello.cfg")
        self.ok("shutdown", "-a")
        self.assertEqual([r["dom"] for r in self.daemon.ops("shutdown")[1:]], ["1", "2"])
        self.assertEqual([r["fallback"] for r in self.daemon.ops("shutdown")], [False] * 3)

    def test_shutdown_without_pv_control(self):
        """Xen 4.17's messages and status for a guest without PV control; -F falls back."""
        self.ok("create", "-q", "examples/hello.cfg", 'name="nopv"')
        r = self.xl("shutdown", "nopv")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.decode(), "Shutting down domain 2\n"
                         "PV control interface not available: external graceful shutdown not possible.\n"
                         "Use \"-F\" to fallback to ACPI power event.\nshutdown failed (rc=-10)\n")
        r = self.xl("reboot", "nopv")
        self.assertEqual(r.returncode, 1)
        self.assertIn("external graceful reboot not possible.\nUse \"-F\" to fallback to ACPI reset event.\n"
                      "reboot failed (rc=-10)\n", r.stderr.decode())
        _, err = self.ok("shutdown", "-F", "-w", "nopv")
        self.assertEqual(err, "Shutting down domain 2\nWaiting for 1 domains\n"
                              "PV control interface not available: sending SCHEDOP_remote_shutdown (poweroff).\n"
                              "Domain 2 has been shut down, reason code 0\n")
        self.assertTrue(self.daemon.ops("shutdown")[-1]["fallback"])

    def test_pause_unpause_mem_max_ptwr_mode(self):
        self.ok("pause", "forktest")
        self.ok("unpause", "1")
        self.assertEqual((self.daemon.ops("pause")[-1]["dom"], self.daemon.ops("unpause")[-1]["dom"]), ("1", "1"))
        self.ok("mem-max", "forktest", "256")
        self.assertEqual(self.daemon.ops("mem_max")[-1]["kb"], 262144)
        self.ok("mem-max", "forktest", "1g")
        self.assertEqual(self.daemon.ops("mem_max")[-1]["kb"], 1048576)
        r = self.xl("mem-max", "forktest", "12q")
        self.assertEqual((r.returncode, r.stderr), (1, b"invalid memory size: 12q\n"))
        out, _ = self.ok("ptwr-mode", "forktest", "writable")
        self.assertEqual(out, "writable\n")
        self.assertEqual(self.daemon.ops("ptwr_mode")[-1]["mode"], "writable")
        out, _ = self.ok("ptwr-mode", "forktest")
        self.assertEqual(out, "writable\n")

    def test_info(self):
        out, _ = self.ok("info")
        lines = out.splitlines()
        self.assertEqual(lines[0], "host                   : pvhv-host")
        self.assertIn("xen_version            : 4.17.0", lines)
        self.assertEqual(lines[-1], "xend_config_format     : 4")
        self.assertEqual(self.ok("info", "xen_version")[0], "4.17.0\n")
        self.assertEqual(self.ok("info", "xen_commandline")[0], "ptwr=emulate console=com1\n")

    def test_dmesg_vcpu_list_uptime_domid_domname(self):
        out, _ = self.ok("dmesg", "-c")
        self.assertEqual(out, "(XEN) line one\n(XEN) line two\n")
        self.assertTrue(self.daemon.ops("dmesg")[-1]["clear"])
        out, _ = self.ok("vcpu-list")
        self.assertEqual(out.splitlines()[0], "Name                                ID  VCPU   CPU State   Time(s) "
                                              "Affinity (Hard / Soft)")
        self.assertEqual(out.splitlines()[2], "forktest                             1     0    0   -b-       1.5  "
                                              "all / all")
        out, _ = self.ok("uptime")
        self.assertEqual(out.splitlines()[0], "Name                                ID Uptime")
        self.assertRegex(out.splitlines()[1], r"^Domain-0 +0 \d+ days?, +\d+:\d\d:\d\d$")
        out, _ = self.ok("uptime", "-s", "forktest")
        self.assertRegex(out, r"^ \d\d:\d\d:\d\d up \d+ days?, +\d+:\d\d, forktest \(1\)\n$")
        self.assertEqual(self.ok("domid", "forktest")[0], "1\n")
        self.assertEqual(self.ok("domname", "1")[0], "forktest\n")
        r = self.xl("domid", "nosuch")
        self.assertEqual((r.returncode, r.stderr),
                         (1, b"Can't get domid of domain name 'nosuch', maybe this domain does not exist.\n"))
        r = self.xl("domname", "x")
        self.assertEqual((r.returncode, r.stderr), (1, b"Invalid domain id.\n\n"))

    def test_top_batch(self):
        out, _ = self.ok("top", "-b", "-i", "2", "-d", "0.05")
        header = "      NAME  STATE   CPU(sec) CPU(%)     MEM(k) MEM(%)  MAXMEM(k) MAXMEM(%) VCPUS"
        self.assertEqual(out.splitlines().count(header), 2)
        self.assertEqual(len(out.splitlines()), 6)
        self.assertIn("  forktest --b---          1    0.0      65536    6.2      32768       3.1     1", out)

    def test_trace(self):
        self.ok("trace", "start", "out.trace")
        self.assertEqual(self.daemon.ops("trace_start")[-1]["file"], os.path.join(REPO, "out.trace"))
        out, _ = self.ok("trace", "stop")
        self.assertEqual(out, "trace: 1234 records, 5 lost\n")

    def test_vcpu_pin_set_cpupool_list(self):
        self.ok("vcpu-pin", "0", "1", "1")
        self.assertEqual(self.daemon.ops("vcpu_pin")[-1],
                         {"id": self.daemon.ops("vcpu_pin")[-1]["id"], "op": "vcpu_pin", "dom": "0", "hard": [1],
                          "soft": None, "vcpu": 1})
        self.ok("vcpu-pin", "0", "all", "-", "all,^0")
        last = self.daemon.ops("vcpu_pin")[-1]
        self.assertEqual((last["vcpu"], last["hard"], last["soft"]), ("all", None, [1]))
        r = self.xl("vcpu-pin", "0", "7", "0")
        self.assertEqual((r.returncode, r.stderr.decode().splitlines()[-1]), (1, "Could not set affinity for vcpu `7'."))
        r = self.xl("vcpu-pin", "0", "x", "0")
        self.assertEqual((r.returncode, r.stderr), (1, b"Error: Invalid argument x as VCPU.\n"))
        r = self.xl("vcpu-pin", "0", "0", "3-1")
        self.assertEqual((r.returncode, r.stderr), (1, b"Invalid pcpu range: 3-1.\n"))
        r = self.xl("vcpu-pin", "-f", "0", "all", "0")
        self.assertEqual((r.returncode, r.stderr), (1, b"Error: --force and 'all' as VCPU not allowed.\n"))
        out, _ = self.ok("-N", "vcpu-pin", "0", "0", "1", "0-1")
        self.assertEqual(out, "cpumap: 1 all\n")
        out, _ = self.ok("cpupool-list")
        self.assertEqual(out, "Name               CPUs   Sched     Active   Domain count\n"
                              f"Pool-0               2   credit2       y       {len(self.daemon.domains):4d}\n")
        out, _ = self.ok("cpupool-list", "-c")
        self.assertEqual(out, "Name               CPU list\nPool-0             0,1\n")
        r = self.xl("cpupool-list", "Pool-9")
        self.assertEqual((r.returncode, r.stderr), (1, b"Pool 'Pool-9' does not exist\n"))
        self.ok("vcpu-set", "0", "1")
        writes = [(w["path"], w["value"]) for w in self.daemon.ops("xenstore_write")]
        self.assertEqual(writes, [("/local/domain/0/cpu/0/availability", "online")])
        r = self.xl("vcpu-set", "0", "5")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"You are overcommmitting! You have 2 physical CPUs and want 5 vCPUs!", r.stderr)
        r = self.xl("vcpu-set", "-i", "0", "5")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"Requested 5 VCPUs, however maxcpus is 1!", r.stderr)

    def test_commands_and_options_as_xl(self):
        r = self.xl("frobnicate")
        self.assertEqual((r.returncode, r.stderr), (1, b"command not implemented\n"))
        r = self.xl("list", "-z")
        self.assertEqual((r.returncode, r.stderr), (2, b"option `z' not supported.\n"))
        r = self.xl("-z", "list")
        self.assertEqual((r.returncode, r.stderr), (1, b"unknown global option\n"))
        out, _ = self.ok("help")
        self.assertTrue(out.startswith("Usage xl [-vfNtT] <subcommand> [args]\n\nxl full list of subcommands:\n\n"))
        for command in ("create", "list", "destroy", "shutdown", "reboot", "pause", "unpause", "console", "info",
                        "dmesg", "vcpu-list", "vcpu-pin", "vcpu-set", "cpupool-list", "uptime", "domid", "domname",
                        "mem-max", "top", "ptwr-mode", "trace"):
            self.assertRegex(out, rf"\n {command} +\S")
        out, _ = self.ok("list", "-h")
        self.assertTrue(out.startswith("Usage: xl [-vtT] list [options] [Domain]\n"))
        r = self.xl()
        self.assertEqual(r.returncode, 1)

    def test_malformed_answers_end_xl_cleanly(self):
        # A daemon that answers garbage: xl says so and exits 1, it does not crash or hang.
        bad_dir = os.path.join(self.tmp.name, "bad")
        os.mkdir(bad_dir)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(os.path.join(bad_dir, "pvhvd.sock"))
        server.listen(1)

        def garbage():
            conn, _ = server.accept()
            conn.recv(4096)
            conn.sendall(b"this is not json\n")
            conn.close()

        t = threading.Thread(target=garbage, daemon=True)
        t.start()
        r = self.xl("list", state_dir=bad_dir)
        server.close()
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, f"xl: cannot connect to pvhvd at {bad_dir}/pvhvd.sock: malformed answer from "
                                   "pvhvd\n".encode())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=BUILD)
    parser.add_argument("--hypervisor", default="ours")
    options, rest = parser.parse_known_args()
    BUILD = os.path.abspath(options.build)
    unittest.main(argv=[sys.argv[0]] + rest)
