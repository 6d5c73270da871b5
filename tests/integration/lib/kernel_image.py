"""Crafts variants of a PV kernel image for the tests: the same loadable segments with other
Xen ELF notes (added, replaced or removed) or other segment sizes.

The variant keeps every byte of the original file; it appends a new program header table
(the original PT_LOADs, patched if asked, and one PT_NOTE) and the new note area at the end,
and points the ELF header at them. Section headers are dropped: with notes in a PT_NOTE
segment, a loader never looks at sections.
"""
import struct

PT_LOAD, PT_NOTE = 1, 4

# <xen/elfnote.h>
ENTRY, HYPERCALL_PAGE, VIRT_BASE, PADDR_OFFSET = 1, 2, 3, 4
INIT_P2M, MOD_START_PFN = 15, 16


def _notes(image):
    """The (type, descriptor) pairs of every "Xen" note in the image's PT_NOTE segments."""
    phoff, = struct.unpack_from("<Q", image, 32)
    phnum, = struct.unpack_from("<H", image, 56)
    found = []
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", image, phoff + 56 * i)
        if p_type != PT_NOTE:
            continue
        at, end = p_offset, p_offset + p_filesz
        while at + 12 <= end:
            namesz, descsz, n_type = struct.unpack_from("<III", image, at)
            name = image[at + 12:at + 12 + namesz]
            desc_at = at + 12 + (namesz + 3) // 4 * 4
            if name == b"Xen\0":
                found.append((n_type, image[desc_at:desc_at + descsz]))
            at = desc_at + (descsz + 3) // 4 * 4
    return found


def _note(n_type, desc):
    pad = lambda b: b + bytes(-len(b) % 4)  # noqa: E731
    return struct.pack("<III", 4, len(desc), n_type) + pad(b"Xen\0") + pad(desc)


def u64(value):
    return struct.pack("<Q", value)


def variant(image, set_notes=None, drop_notes=(), memsz=None):
    """set_notes: {type: descriptor bytes}, replacing a note of that type or adding it.
    drop_notes: types to leave out. memsz: {index of a PT_LOAD: new p_memsz}."""
    set_notes = dict(set_notes or {})
    memsz = memsz or {}
    notes = []
    for n_type, desc in _notes(image):
        if n_type in drop_notes:
            continue
        notes.append((n_type, set_notes.pop(n_type, desc)))
    notes.extend(set_notes.items())
    area = b"".join(_note(t, d) for t, d in notes)

    phoff, = struct.unpack_from("<Q", image, 32)
    phnum, = struct.unpack_from("<H", image, 56)
    loads = []
    for i in range(phnum):
        header = bytearray(image[phoff + 56 * i:phoff + 56 * (i + 1)])
        if struct.unpack_from("<I", header, 0)[0] != PT_LOAD:
            continue
        if len(loads) in memsz:
            struct.pack_into("<Q", header, 40, memsz[len(loads)])
        loads.append(bytes(header))

    out = bytearray(image)
    out += bytes(-len(out) % 8)
    new_phoff = len(out)
    note_offset = new_phoff + 56 * (len(loads) + 1)
    out += b"".join(loads)
    out += struct.pack("<IIQQQQQQ", PT_NOTE, 4, note_offset, 0, 0, len(area), len(area), 4)
    out += area
    struct.pack_into("<Q", out, 32, new_phoff)            # e_phoff
    struct.pack_into("<H", out, 56, len(loads) + 1)       # e_phnum
    struct.pack_into("<Q", out, 40, 0)                    # e_shoff
    struct.pack_into("<H", out, 60, 0)                    # e_shnum
    struct.pack_into("<H", out, 62, 0)                    # e_shstrndx
    return bytes(out)


def note_value(image, n_type):
    """A numeric note's value, or None."""
    for t, desc in _notes(image):
        if t == n_type:
            return int.from_bytes(desc, "little")
    return None
