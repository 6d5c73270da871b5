"""linux/bzimage.py on Debian's own kernel (build/deps/linux/vmlinuz, fetched by
scripts/install-deps.sh): the vmlinux inside is an x86-64 ELF with Xen's notes, and images cut
or damaged from the real one are refused with a reason, never an exception of another kind.
No QEMU.
"""
import argparse
import os
import struct
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "linux"))
import bzimage  # noqa: E402

BUILD = None


def notes(elf):
    """{type: desc} of the "Xen" notes in the ELF's PT_NOTE segments."""
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    found = {}
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", elf, phoff + i * phentsize)
        if p_type != 4:
            continue
        offset, end = p_offset, p_offset + p_filesz
        while offset + 12 <= end:
            namesz, descsz, kind = struct.unpack_from("<III", elf, offset)
            name = elf[offset + 12:offset + 12 + namesz].rstrip(b"\0")
            desc_at = offset + 12 + (namesz + 3) // 4 * 4
            if name == b"Xen":
                found[kind] = elf[desc_at:desc_at + descsz]
            offset = desc_at + (descsz + 3) // 4 * 4
    return found


class DebianKernel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(BUILD, "deps", "linux", "vmlinuz"), "rb") as f:
            cls.image = f.read()
        cls.elf = bzimage.vmlinux(cls.image)

    def test_payload_is_xz_and_the_image_an_x86_64_elf(self):
        version, code, start, length = bzimage.setup_header(self.image)
        self.assertGreaterEqual(version, 0x208)
        self.assertTrue(self.image[start:start + length].startswith(bzimage.XZ_MAGIC))
        self.assertEqual(self.elf[4], 2)                       # ELFCLASS64
        self.assertEqual(struct.unpack_from("<H", self.elf, 18)[0], 62)  # EM_X86_64
        self.assertGreater(len(self.elf), len(self.image))

    def test_xen_notes_as_linux_writes_them(self):
        found = notes(self.elf)
        self.assertEqual(found[6].rstrip(b"\0"), b"linux")          # GUEST_OS
        self.assertEqual(found[5].rstrip(b"\0"), b"xen-3.0")        # XEN_VERSION
        features = found[10]                                         # FEATURES
        self.assertNotIn(b"\0", features)  # Linux writes it without a terminator
        self.assertIn(b"writable_page_tables", features)
        self.assertIn(15, found)                                     # INIT_P2M

    def test_truncated_images_are_refused(self):
        _, _, start, length = bzimage.setup_header(self.image)
        # (What follows the payload in the file, Debian's signature among it, is not needed.)
        for size in (0, 100, 0x250, start + 100, start + length // 2, start + length - 5):
            with self.assertRaises(bzimage.BzImageError, msg=f"{size} bytes"):
                bzimage.vmlinux(self.image[:size])

    def test_damaged_headers_are_refused(self):
        def patched(offset, value):
            data = bytearray(self.image)
            data[offset:offset + len(value)] = value
            return bytes(data)
        cases = {
            "boot flag": patched(0x1FE, b"\0\0"),
            "HdrS": patched(0x202, b"HdrX"),
            "protocol 2.06": patched(0x206, struct.pack("<H", 0x206)),
            "payload beyond the file": patched(0x24C, struct.pack("<I", len(self.image))),
            "empty payload": patched(0x24C, struct.pack("<I", 0)),
            "payload offset huge": patched(0x248, struct.pack("<I", 0xFFFFFFF0)),
        }
        for what, data in cases.items():
            with self.assertRaises(bzimage.BzImageError, msg=what):
                bzimage.vmlinux(data)

    def test_damaged_payloads_are_refused(self):
        _, _, start, length = bzimage.setup_header(self.image)
        data = bytearray(self.image)
        data[start + length // 2] ^= 0xFF  # xz's check or the LZMA2 decoder notices
        with self.assertRaises(bzimage.BzImageError):
            bzimage.vmlinux(bytes(data))
        data = bytearray(self.image)
        data[start:start + 6] = b"\x1f\x8b\x08\0\0\0"  # gzip is not what Debian ships: refused, not guessed
        with self.assertRaises(bzimage.BzImageError):
            bzimage.vmlinux(bytes(data))
        data = bytearray(self.image)
        data[start + length - 4:start + length] = b"\0\0\0\0"  # the size after the stream is wrong
        with self.assertRaises(bzimage.BzImageError):
            bzimage.vmlinux(bytes(data))

    def test_the_output_is_bounded(self):
        with self.assertRaises(bzimage.BzImageError):
            bzimage.vmlinux(self.image, limit=1 << 20)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--hypervisor", default=None)
    args, rest = parser.parse_known_args()
    BUILD = os.path.abspath(args.build)
    unittest.main(argv=[sys.argv[0]] + rest)
