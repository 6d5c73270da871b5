"""Xen 4.17's function names from its own image, for the profiler (bench/run_profile.py).

Debian's Xen image is stripped of ELF symbols, but Xen keeps a compressed symbol table of
its own for backtraces, built by its tools/symbols at link time: an array of 32-bit offsets
from SYMBOLS_ORIGIN (the image base 0xffff82d040000000), the number of symbols, the names
(each a length byte and that many token numbers), a marker every 256 names, a table of up to
256 NUL-terminated tokens and their 16-bit index. Nothing names those arrays in a stripped
image, so they are found by their shapes, from the end backwards:

- the token index: 256 increasing 16-bit offsets starting at 0, each token in the table just
  before it preceded by a NUL;
- the markers: increasing 32-bit name offsets starting at 0, ending before the token table;
- the count: the 32-bit word from which exactly that many names decode up to the markers,
  with ceil(count / 256) markers;
- the offsets: the `count` words before the count.

A name is its type letter and the symbol ("t" local, "T" global); a local one carries its
source file ("arch/x86/mm.c#mod_l1_entry"). read() returns [] when the shapes are not found
(another Xen build), and the profiler then shows Xen's addresses as offsets.
"""
import re
import struct

ORIGIN = 0xFFFF82D040000000
FUNCTION_TYPES = "tTwW"


def _token_index(data):
    for match in re.finditer(b"(?=\x00\x00)", data):
        i = match.start()
        if i % 2 or i + 512 > len(data):
            continue
        index = struct.unpack_from("<256H", data, i)
        if index[0] == 0 and 0 < index[1] < 64 and all(0 < index[k + 1] - index[k] < 256 for k in range(255)):
            table = _token_table(data, i, index)
            if table is not None:
                return table, index
    return None, None


def _token_table(data, index_at, index):
    last = index[255]
    for start in range(max(0, index_at - last - 80), index_at - last):
        if all(data[start + index[k] - 1] == 0 for k in range(1, 256)):
            return start
    return None


def _markers(data, table):
    at = table - 4
    while at > 0 and struct.unpack_from("<I", data, at)[0] == 0:
        at -= 4  # alignment before the token table
    count, previous = 0, None
    while at >= 0:
        value = struct.unpack_from("<I", data, at)[0]
        if previous is not None and value >= previous:
            return None, 0
        count += 1
        if value == 0:
            return at, count
        previous, at = value, at - 4
    return None, 0


def _names(data, markers, marker_count):
    """(position of the count, count): the count from which the names decode up to the markers."""
    for at in range(markers - 4, max(0, markers - (8 << 20)), -4):
        count = struct.unpack_from("<I", data, at)[0]
        if not 0 < count < 1 << 20 or (count + 255) // 256 != marker_count:
            continue
        position = at + 4
        for _ in range(count):
            if position >= markers:
                break
            position += 1 + data[position]
        else:
            if 0 <= markers - position < 8:
                return at, count
    return None, 0


def decode(data):
    """[(address, type letter, name)] of every symbol, or [] when the table is not found."""
    table, index = _token_index(data)
    if table is None:
        return []
    markers, marker_count = _markers(data, table)
    if markers is None:
        return []
    count_at, count = _names(data, markers, marker_count)
    if count_at is None or count_at < 4 * count:
        return []
    tokens = [data[table + offset:data.index(b"\0", table + offset)].decode(errors="replace") for offset in index]
    offsets = struct.unpack_from(f"<{count}I", data, count_at - 4 * count)
    symbols, position = [], count_at + 4
    for offset in offsets:
        length = data[position]
        name = "".join(tokens[b] for b in data[position + 1:position + 1 + length])
        position += 1 + length
        if name:
            symbols.append((ORIGIN + offset, name[0], name[1:]))
    return symbols


def read(path):
    """[(address, name)] of Xen's functions in the image at `path`."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    return [(address, name) for address, kind, name in decode(data) if kind in FUNCTION_TYPES]


if __name__ == "__main__":
    import sys
    for address, name in read(sys.argv[1]):
        print(f"{address:016x} {name}")
