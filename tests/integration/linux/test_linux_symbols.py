"""linux/symbols.py, the names of Linux kernel addresses in the hypervisor's fatal-trap reports
(issue 11, "Measurements"), on the real kernel: Debian's linux-image ships a System.map stub
(recognised as no symbols), so the names come from the kallsyms tables inside the vmlinux that
linux/bzimage.py extracts. Checked against facts the tables do not give: the image's own Xen
ENTRY note is `startup_xen` (where Linux's PV boot starts). Damaged copies of the image are
refused with a reason, never named wrongly; the symbolizer's rules (aliases, the ends, data
symbols ignored) on a small map; linux/run.py's fatal report names a RIP `function+0xoff/0xsize`;
with the -dbg package's vmlinux (PVHV_LINUX_DBG=1 scripts/install-deps.sh), file:line too.
(The Linux domU test compares the names with the running kernel's /proc/kallsyms: no KASLR.)
Host only: no machine is booted.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "linux"))
import guest_boot  # noqa: E402
import kernel_image  # noqa: E402
import run as linux_run  # noqa: E402
import symbols  # noqa: E402

STUB = "ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package\n"


def expect(condition, message):
    if not condition:
        print(f"FAIL: {message}")
        sys.exit(1)


def refused(data, what):
    try:
        symbols.parse_kallsyms(data)
    except symbols.SymbolsError as error:
        return str(error)
    expect(False, f"a vmlinux with {what} was read as kallsyms")


def check_rules():
    expect(symbols.parse_system_map(STUB) == [], "the Debian System.map stub gave symbols")
    table = symbols.Symbols(symbols.parse_system_map(
        "ffffffff81000000 T _stext\nffffffff81000000 T startup_64\nffffffff81000070 t secondary\n"
        "ffffffff81000100 D some_data\nffffffff81000200 T _etext\n"), "map")
    expect(table.name(0xffffffff81000010) == "startup_64+0x10/0x70", f"got {table.name(0xffffffff81000010)}")
    expect(table.name(0xffffffff81000180) == "secondary+0x110/0x190", "a data symbol was taken for text")
    expect(table.name(0xffffffff80ffffff) is None and table.name(0xffffffff81000200) is None,
           "an address outside the text was named")
    line = symbols.annotate("(XEN) d1v0 unhandled exception 14 at ffffffff81000075, cr2 0", table)
    expect(line == "(XEN) d1v0 unhandled exception 14 at ffffffff81000075 [secondary+0x5/0x190], cr2 0", line)


def main():
    build, _ = guest_boot.arguments()
    check_rules()
    _, vmlinux, _ = linux_run.images(build)
    data = open(vmlinux, "rb").read()
    entries = symbols.parse_kallsyms(data)
    table = symbols.Symbols(entries, vmlinux)
    expect(len(table) > 20000, f"only {len(table)} text symbols")
    entry = kernel_image.note_value(data, kernel_image.ENTRY)
    expect(table.address_of("startup_xen") == entry,
           f"startup_xen at {table.address_of('startup_xen')}, the ENTRY note says {entry:#x}")
    expect(table.name(entry + 3) == f"startup_xen+0x3/{table.locate(entry)[2]:#x}", table.name(entry + 3))
    clone = table.address_of("kernel_clone")
    expect(clone is not None and table.name(clone + 0x10).startswith("kernel_clone+0x10/"), "kernel_clone not named")

    # The loader the run uses (the stub System.map or none: kallsyms, cached).
    loaded = symbols.load(build)
    expect(loaded is not None and loaded.address_of("kernel_clone") == clone, "symbols.load disagrees")
    report = linux_run.fatal_report(f"(d1) fine\n(XEN) d1v0 unhandled exception 13 (error 0) at {clone + 0x10:x}, cr2 0\n")
    expect(len(report) == 1 and f"[kernel_clone+0x10/" in report[0], f"the fatal report: {report}")

    # Damaged copies: no token table, a name count that does not meet the markers.
    no_tokens = data.replace(symbols.DIGIT_TOKENS, bytes(len(symbols.DIGIT_TOKENS)))
    print("refused: " + refused(no_tokens, "no token table"))
    count = len(entries)  # num_syms: after relative_base, the one u64 of its pattern followed by it
    base_at = next(m.start() for m in symbols.BASE_PATTERN.finditer(data)
                   if m.start() % 8 == 0 and struct.unpack_from("<I", data, m.start() + 8)[0] == count)
    miscounted = bytearray(data)
    struct.pack_into("<I", miscounted, base_at + 8, count - 1)
    print("refused: " + refused(bytes(miscounted), "num_syms one short"))

    dbg = symbols.dbg_vmlinux(build)
    if dbg:
        where = symbols.line_of(dbg, clone + 0x10)
        expect(where is not None and "fork.c" in where, f"addr2line on the -dbg vmlinux: {where}")
        print(f"ok: -dbg vmlinux: kernel_clone+0x10 is {where}")
    else:
        print("no -dbg vmlinux (PVHV_LINUX_DBG=1 scripts/install-deps.sh): file:line not checked")
    print(f"ok: {len(table)} text symbols from the vmlinux's kallsyms; startup_xen is the ENTRY note's {entry:#x}")


if __name__ == "__main__":
    main()
