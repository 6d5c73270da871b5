"""Names for Linux kernel addresses: a RIP in the hypervisor's report of a guest's fatal trap as
`function+0xoff/0xsize`, as Linux's own oops prints them (and file:line when the -dbg package's
vmlinux is there).

    python3 linux/symbols.py [--build build] ADDRESS...     # prints each ADDRESS symbolized

Where the names come from, best first:
- `build/deps/linux/System.map` when it is the real one: Debian's linux-image package ships a
  one-line stub ("The real System.map is in the linux-image-<version>-dbg package"), the -dbg
  package (~860 MB, fetched only with `PVHV_LINUX_DBG=1 scripts/install-deps.sh`) the real map
  and the vmlinux with DWARF, which the host's addr2line reads for file:line;
- otherwise the kernel's own symbol table, kallsyms (CONFIG_KALLSYMS_ALL, base-relative), read
  out of the vmlinux that linux/bzimage.py extracts (stripped of ELF symbols, but kallsyms is
  data in its .rodata: the table /proc/kallsyms prints), cached as build/linux/kallsyms.map.

kallsyms, as Linux 6.1's scripts/kallsyms lays it out: `offsets` (s32 each: >= 0 an absolute
per-CPU address, < 0 `relative_base - 1 - offset`), `relative_base` (u64), `num_syms` (u32),
`names` (per symbol a length, one byte or two when the first has bit 7 set, then that many
token numbers; the first character of the expansion is the type), `markers`,
`seqs_of_names`, `token_table` (256 NUL-terminated strings) and `token_index` (256 u16: each
string's offset). Each table is 8-byte aligned. The reader finds `token_table` by its single-
character digit tokens, `token_index` as the array that indexes it exactly, and `num_syms` as
the count whose names decode to the start of `markers` (markers[1] the 256th name's offset): a
table that does not check out is a SymbolsError, never a wrong name. The kernel is not
relocated under PV (no KASLR: the decompressor that would randomize is not run), which the
Linux domU test checks against the running kernel's /proc/kallsyms.
"""
import argparse
import bisect
import os
import re
import shutil
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUB_MARK = "The real System.map is in"
TEXT_TYPES = "TtWw"
DIGIT_TOKENS = b"".join(bytes([c]) + b"\0" for c in b"0123456789")
# relative_base: the lowest kernel address, page aligned; then num_syms and its padding.
BASE_PATTERN = re.compile(rb"\x00[\x00\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0\xc0\xd0\xe0\xf0][\x00-\xff]"
                          rb"[\x80-\xff]\xff\xff\xff\xff", re.S)
MAX_SYMBOLS = 1 << 22
KERNEL_ADDRESS = re.compile(r"\b(?:0x)?(ffffffff[89a-f][0-9a-f]{7})\b")


class SymbolsError(ValueError):
    pass


def _align8(offset):
    return (offset + 7) & ~7


def parse_system_map(text):
    """[(address, type, name)] of a System.map (`ffffffff81000000 T _stext` lines); a stub is []."""
    if STUB_MARK in text:
        return []
    entries = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and re.fullmatch(r"[0-9a-fA-F]{1,16}", parts[0]):
            entries.append((int(parts[0], 16), parts[1], parts[2]))
    return entries


def _token_table(data):
    """(token_table offset, the 256 tokens): the table holding the digit tokens, whose index follows it."""
    for match in re.finditer(re.escape(DIGIT_TOKENS), data):
        digits = match.start()
        for index_at in range(_align8(digits), min(len(data) - 512, digits + 8192), 8):
            index = struct.unpack_from("<256H", data, index_at)
            table = digits - index[ord("0")]
            if index[0] != 0 or table < 0 or any(b <= a for a, b in zip(index, index[1:])):
                continue
            tokens = []
            for i in range(256):
                start = table + index[i]
                end = data.find(b"\0", start)
                if end < 0 or (i < 255 and end + 1 != table + index[i + 1]) or end >= index_at:
                    break
                tokens.append(data[start:end])
            if len(tokens) == 256:
                return table, tokens
    raise SymbolsError("no kallsyms token table (a kernel without CONFIG_KALLSYMS?)")


def _decode_names(data, names_at, count, tokens, limit):
    """(names, end offset, offset of name 256) of `count` names from `names_at`; None if they run past `limit`."""
    names, position, name_256 = [], names_at, None
    for i in range(count):
        if i == 256:
            name_256 = position - names_at
        if position >= limit:
            return None
        length = data[position]
        position += 1
        if length & 0x80:
            length = (length & 0x7f) | (data[position] << 7)
            position += 1
        if length == 0 or position + length > limit:
            return None
        names.append(b"".join(tokens[t] for t in data[position:position + length]).decode("ascii", "replace"))
        position += length
    return names, position, name_256


def parse_kallsyms(data):
    """[(address, type, name)] of the kallsyms tables in a vmlinux image (bytes), address order."""
    table, tokens = _token_table(data)
    for match in BASE_PATTERN.finditer(data, 0, table):
        base_at = match.start()
        if base_at % 8:
            continue
        relative_base, count, padding = struct.unpack_from("<QII", data, base_at)
        offsets_at = base_at - 4 * count
        if not 256 < count < MAX_SYMBOLS or padding != 0 or offsets_at < 0 or _align8(offsets_at + 4 * count) != base_at:
            continue
        decoded = _decode_names(data, base_at + 16, count, tokens, table)
        if decoded is None:
            continue
        names, end, name_256 = decoded
        markers_at = _align8(end)
        if struct.unpack_from("<II", data, markers_at) != (0, name_256):
            continue
        offsets = struct.unpack_from(f"<{count}i", data, offsets_at)
        return [(offset if offset >= 0 else relative_base - 1 - offset, name[0], name[1:])
                for offset, name in zip(offsets, names)]
    raise SymbolsError("no kallsyms names whose count and markers agree")


class Symbols:
    """Text symbols by address: `function+0xoff/0xsize` for an address inside one."""

    def __init__(self, entries, source=""):
        text = sorted((address, name) for address, kind, name in entries if kind in TEXT_TYPES)
        self.addresses = [address for address, _ in text]
        self.names = [name for _, name in text]
        self.source = source
        self.ends = {}

    def __len__(self):
        return len(self.addresses)

    def address_of(self, name):
        return self.addresses[self.names.index(name)] if name in self.names else None

    def locate(self, address):
        """(name, offset, size) of the text symbol holding `address` (size: to the next
        symbol's address), None before the first or at or after the last one."""
        i = bisect.bisect_right(self.addresses, address) - 1
        if i < 0 or i + 1 >= len(self.addresses):
            return None
        start = self.addresses[i]
        following = bisect.bisect_right(self.addresses, start, i + 1)  # aliases share an address
        if following >= len(self.addresses):
            return None
        return self.names[i], address - start, self.addresses[following] - start

    def name(self, address):
        located = self.locate(address)
        if located is None:
            return None
        name, offset, size = located
        return f"{name}+{offset:#x}/{size:#x}"


def line_of(vmlinux_dbg, address):
    """file:line of `address` from the -dbg vmlinux (the host's addr2line), None without it."""
    if not vmlinux_dbg or not os.path.exists(vmlinux_dbg) or not shutil.which("addr2line"):
        return None
    result = subprocess.run(["addr2line", "-e", vmlinux_dbg, f"{address:#x}"], capture_output=True, text=True,
                            timeout=60)
    line = result.stdout.strip()
    return line if result.returncode == 0 and line and not line.startswith("??") else None


def load(build):
    """Symbols of build/deps/linux's kernel (the real System.map, else kallsyms of build/linux/vmlinux,
    cached); None when neither is there."""
    deps = os.path.join(build, "deps", "linux")
    system_map = os.path.join(deps, "System.map")
    if os.path.exists(system_map):
        entries = parse_system_map(open(system_map, errors="replace").read())
        if entries:
            return Symbols(entries, system_map)
    vmlinux = os.path.join(build, "linux", "vmlinux")
    if not os.path.exists(vmlinux):
        return None
    cache = os.path.join(build, "linux", "kallsyms.map")
    if not os.path.exists(cache) or os.path.getmtime(cache) < os.path.getmtime(vmlinux):
        with open(vmlinux, "rb") as f:
            entries = parse_kallsyms(f.read())
        temporary = f"{cache}.{os.getpid()}.tmp"  # two runs at once each write their own
        with open(temporary, "w") as f:
            f.writelines(f"{address:016x} {kind} {name}\n" for address, kind, name in entries)
        os.replace(temporary, cache)
    return Symbols(parse_system_map(open(cache).read()), vmlinux + " (kallsyms)")


def annotate(line, symbols, vmlinux_dbg=None):
    """`line` with each kernel text address in it followed by its name (and file:line)."""
    if symbols is None:
        return line

    def named(match):
        address = int(match.group(1), 16)
        name = symbols.name(address)
        if name is None:
            return match.group(0)
        where = line_of(vmlinux_dbg, address)
        return f"{match.group(0)} [{name}{' ' + where if where else ''}]"
    return KERNEL_ADDRESS.sub(named, line)


def dbg_vmlinux(build):
    path = os.path.join(build, "deps", "linux", "vmlinux-dbg")
    return path if os.path.exists(path) else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("address", nargs="+")
    args = parser.parse_args(argv)
    symbols = load(os.path.abspath(args.build))
    if symbols is None:
        raise SystemExit("symbols: no System.map and no build/linux/vmlinux (run `make linux` or linux/run.py)")
    for text in args.address:
        address = int(text, 16)
        where = line_of(dbg_vmlinux(args.build), address)
        print(f"{address:#x} {symbols.name(address) or '?'}{' ' + where if where else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
