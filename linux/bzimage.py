"""A Linux bzImage's payload: the compressed vmlinux the boot setup code carries.

The x86 boot protocol's setup header (Documentation/x86/boot.rst in Linux) says where it is:
`setup_sects` (offset 0x1f1, 0 meaning 4) sectors of real-mode setup follow the boot sector,
and `payload_offset` / `payload_length` (0x248 / 0x24c, protocol 2.08 and later) locate the
payload relative to the protected-mode code after them. Debian's kernels compress it with xz
and the x86 BCJ filter; the xz container names its own filters, so liblzma (Python's lzma)
undoes both. The kernel appends the uncompressed size (4 bytes) after the xz stream.

Every value is checked against the file before it is used: a truncated or foreign image is a
BzImageError naming what is wrong, never an index error or a silent short read.
"""
import lzma
import struct

HEADER_MAGIC = b"HdrS"      # at 0x202
BOOT_FLAG = 0xAA55          # at 0x1fe
XZ_MAGIC = b"\xfd7zXZ\x00"
ELF_MAGIC = b"\x7fELF"
MIN_PROTOCOL = 0x208        # payload_offset/length exist from 2.08 on


class BzImageError(ValueError):
    pass


def _u(data, offset, fmt):
    size = struct.calcsize(fmt)
    if offset + size > len(data):
        raise BzImageError(f"truncated: the setup header needs {offset + size} bytes, the file has {len(data)}")
    return struct.unpack_from(fmt, data, offset)[0]


def setup_header(data):
    """(protocol version, protected-mode code offset, payload offset in the file, payload length)."""
    if _u(data, 0x1FE, "<H") != BOOT_FLAG or data[0x202:0x206] != HEADER_MAGIC:
        raise BzImageError("not a bzImage: no boot flag 0xaa55 / setup header 'HdrS'")
    version = _u(data, 0x206, "<H")
    if version < MIN_PROTOCOL:
        raise BzImageError(f"boot protocol {version >> 8}.{version & 0xff:02d} has no payload fields (2.08 needed)")
    setup_sects = data[0x1F1] or 4
    code = (setup_sects + 1) * 512
    payload_offset = _u(data, 0x248, "<I")
    payload_length = _u(data, 0x24C, "<I")
    start = code + payload_offset
    if payload_length == 0 or start + payload_length > len(data):
        raise BzImageError(f"payload at {start:#x}+{payload_length:#x} lies outside the file ({len(data):#x} bytes)")
    return version, code, start, payload_length


def payload(data):
    _, _, start, length = setup_header(data)
    return data[start:start + length]


def vmlinux(data, limit=512 << 20):
    """The ELF image inside a bzImage (xz, with or without BCJ). `limit` bounds the output, so a
    hostile payload cannot exhaust memory."""
    compressed = payload(data)
    if not compressed.startswith(XZ_MAGIC):
        raise BzImageError(f"payload is not xz (starts {compressed[:6].hex()}); only xz kernels are supported")
    decompressor = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    try:
        out = decompressor.decompress(compressed, max_length=limit)
    except lzma.LZMAError as error:
        raise BzImageError(f"payload does not decompress: {error}") from None
    if not decompressor.eof:
        raise BzImageError("payload ends before its xz stream does" if decompressor.needs_input
                           else f"payload decompresses to more than {limit} bytes")
    trailer = decompressor.unused_data
    if len(trailer) == 4 and struct.unpack("<I", trailer)[0] != len(out) & 0xFFFFFFFF:
        raise BzImageError("the size after the xz stream does not match what it decompresses to")
    if not out.startswith(ELF_MAGIC):
        raise BzImageError("payload is not an ELF image")
    return out


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description="Extract the vmlinux ELF from a Linux bzImage.")
    parser.add_argument("bzimage")
    parser.add_argument("output")
    args = parser.parse_args(argv)
    with open(args.bzimage, "rb") as f:
        data = f.read()
    try:
        elf = vmlinux(data)
    except BzImageError as error:
        parser.exit(1, f"bzimage: {args.bzimage}: {error}\n")
    with open(args.output + ".tmp", "wb") as f:
        f.write(elf)
    import os
    os.replace(args.output + ".tmp", args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
