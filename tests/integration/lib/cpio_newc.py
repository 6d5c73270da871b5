"""A minimal writer of cpio "newc" archives (the initrd format the guest kernel reads), used to
build initrds of chosen sizes from the shipped one: its members are read back and written
again, followed by the extra files."""
import struct

MAGIC = b"070701"
TRAILER = "TRAILER!!!"


def _pad4(n):
    return (4 - n % 4) % 4


def read_members(data):
    """[(name, mode, body)] of a newc archive, trailer excluded."""
    members, offset = [], 0
    while True:
        header = data[offset:offset + 110]
        if header[:6] != MAGIC:
            raise ValueError(f"not a newc header at {offset}")
        fields = [int(header[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
        mode, size, name_size = fields[1], fields[6], fields[11]
        name_start = offset + 110
        name = data[name_start:name_start + name_size - 1].decode()
        body_start = name_start + name_size + _pad4(110 + name_size)
        body = data[body_start:body_start + size]
        offset = body_start + size + _pad4(size)
        if name == TRAILER:
            return members
        members.append((name, mode, body))


def _member(ino, name, mode, body, rdev=(0, 0)):
    encoded = name.encode() + b"\0"
    fields = (ino, mode, 0, 0, 1, 0, len(body), 0, 0, rdev[0], rdev[1], len(encoded), 0)
    header = MAGIC + b"".join(b"%08X" % f for f in fields)
    return header + encoded + b"\0" * _pad4(110 + len(encoded)) + body + b"\0" * _pad4(len(body))


def write(members):
    """members: (name, mode, body) or, for a device node, (name, mode, b"", (major, minor))."""
    out = bytearray()
    for ino, member in enumerate(members, start=1):
        out += _member(ino, *member)
    out += _member(0, TRAILER, 0, b"")
    return bytes(out)


def with_extra_file(shipped_path, out_path, name, size):
    """The shipped initrd plus a regular file `name` of `size` bytes (a fixed pattern)."""
    with open(shipped_path, "rb") as f:
        members = read_members(f.read())
    pattern = bytes(range(251)) * (size // 251 + 1)
    members.append((name, 0o100644, pattern[:size]))
    with open(out_path, "wb") as f:
        f.write(write(members))
