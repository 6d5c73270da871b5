"""A client of the dom0 relay's link (tools/PROTOCOL.md) for the integration tests: frames as
trace/PROTOCOL.md defines them (zlib's CRC-32 is the same IEEE CRC), requests built field by
field, and the raw socket underneath so a test can also send what no correct client would."""
import socket
import struct
import time
import zlib

MAGIC = 0x52545650
HEADER = struct.Struct("<IBBHII")

OPEN, HYPERCALL, BUFFER_ALLOC, BUFFER_FREE, BUFFER_WRITE, BUFFER_READ = 0x80, 0x81, 0x82, 0x83, 0x84, 0x85
FOREIGN_READ, FOREIGN_WRITE, BIND_VIRQ, BIND_INTERDOMAIN = 0x86, 0x87, 0x88, 0x89
NOTIFY, UNMASK, CLOSE, SHUTDOWN = 0x8a, 0x8b, 0x8c, 0x8f
FOREIGN_MAP, FOREIGN_UNMAP, MAPPED_READ, MAPPED_WRITE = 0x8d, 0x8e, 0x90, 0x91
OPENED, RESULT, BUFFER, OK, DATA, PORT, MAPPING, ERROR, EVENT = 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xbf, 0xc0
NO_SEQUENCE = 0xffffffff

ERRORS = {1: "corrupt", 2: "truncated", 3: "oversized", 4: "skipped", 5: "unknown_type", 6: "malformed",
          7: "no_session", 8: "out_of_order", 9: "version", 10: "no_buffer", 11: "refused", 12: "no_memory",
          13: "bad_range", 14: "hypervisor", 15: "no_port", 16: "limit", 17: "no_mapping"}
REFUSALS = {1: "hypercall", 2: "sub_op", 3: "pointer", 4: "own_domain", 5: "special_domain", 6: "own_page_tables"}


def frame(kind, payload, channel=0, version=1):
    header = struct.pack("<IBBHI", MAGIC, version, kind, channel, len(payload))
    return header + struct.pack("<I", zlib.crc32(header + payload)) + payload


class Frame:
    def __init__(self, kind, channel, payload):
        self.kind, self.channel, self.payload = kind, channel, payload

    def seq(self):
        return struct.unpack_from("<I", self.payload)[0]

    def error(self):
        """(seq, name, type, detail) of an ERROR frame."""
        seq, code, kind, detail = struct.unpack_from("<IIIq", self.payload)
        return seq, ERRORS.get(code, code), kind, detail

    def __repr__(self):
        if self.kind == ERROR:
            return f"ERROR{self.error()}"
        return f"Frame(0x{self.kind:02x}, {len(self.payload)} bytes)"


class RelayError(Exception):
    def __init__(self, frame):
        super().__init__(repr(frame))
        self.frame = frame
        self.seq, self.name, self.kind, self.detail = frame.error()


class Client:
    def __init__(self, path, timeout=30.0):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.buffer = b""
        self.trace = []    # trace frames seen (types < 0x80), in order, as raw bytes
        self.events = []   # ports of EVENT frames
        self.unsolicited = []  # ERROR frames with no sequence number
        self.seq = 0

    def close(self):
        self.sock.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def receive(self, timeout):
        """The next frame the relay sends, trace and event frames included; None on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            f = self._parse()
            if f:
                return f
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return None
            if not chunk:
                raise ConnectionError("the relay's socket closed")
            self.buffer += chunk

    def _parse(self):
        while len(self.buffer) >= HEADER.size:
            magic, version, kind, channel, length, crc = HEADER.unpack_from(self.buffer)
            if magic != MAGIC or version != 1 or length > (1 << 20):
                self.buffer = self.buffer[1:]
                continue
            if len(self.buffer) < HEADER.size + length:
                return None
            payload = self.buffer[HEADER.size:HEADER.size + length]
            if zlib.crc32(self.buffer[:12] + payload) != crc:
                self.buffer = self.buffer[1:]
                continue
            raw = self.buffer[:HEADER.size + length]
            self.buffer = self.buffer[HEADER.size + length:]
            return Frame(kind, channel, payload) if kind >= 0x80 else self._trace(raw, kind, channel, payload)
        return None

    def _trace(self, raw, kind, channel, payload):
        self.trace.append(raw)
        return Frame(kind, channel, payload)

    def answer(self, seq, timeout=30.0):
        """The answer to request `seq` (skipping trace frames and keeping events); raises
        RelayError for an error frame about it."""
        deadline = time.monotonic() + timeout
        while True:
            f = self.receive(max(0.0, deadline - time.monotonic()))
            if f is None:
                raise TimeoutError(f"no answer to request {seq}")
            if f.kind < 0x80:
                continue
            if f.kind == EVENT:
                self.events.append(struct.unpack_from("<I", f.payload)[0])
                continue
            if len(f.payload) < 4:
                continue
            if f.kind == ERROR and f.seq() == NO_SEQUENCE:
                self.unsolicited.append(f)
                continue
            if f.seq() != seq:
                continue
            if f.kind == ERROR:
                raise RelayError(f)
            return f

    def next_error(self, timeout=10.0):
        """The next ERROR frame, solicited or not."""
        deadline = time.monotonic() + timeout
        if self.unsolicited:
            return self.unsolicited.pop(0)
        while True:
            f = self.receive(max(0.0, deadline - time.monotonic()))
            if f is None:
                raise TimeoutError("no error frame")
            if f.kind == ERROR:
                return f
            if f.kind == EVENT:
                self.events.append(struct.unpack_from("<I", f.payload)[0])

    def request(self, kind, fields=b"", seq=None, timeout=30.0):
        if seq is None:
            seq = self.seq
            self.seq += 1
        self.send_raw(frame(kind, struct.pack("<I", seq) + fields))
        return self.answer(seq, timeout)

    def open(self, timeout=30.0):
        """OPEN until answered (the relay may still be booting); returns the OPENED frame."""
        deadline = time.monotonic() + timeout
        seq = int(time.monotonic() * 1000) & 0xffff0000
        while True:
            seq += 1
            self.send_raw(frame(OPEN, struct.pack("<II", seq, 1)))
            try:
                f = self.answer(seq, timeout=0.5)
                self.seq = seq + 1
                return f
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise

    # Requests as the library makes them.
    def hypercall(self, number, *args):
        args = list(args) + [0] * (5 - len(args))
        f = self.request(HYPERCALL, struct.pack("<I5Q", number, *args))
        return struct.unpack_from("<q", f.payload, 4)[0]

    def alloc(self, pages):
        f = self.request(BUFFER_ALLOC, struct.pack("<I", pages))
        return struct.unpack_from("<Q", f.payload, 8)[0]

    def free(self, address):
        self.request(BUFFER_FREE, struct.pack("<Q", address))

    def write(self, address, data):
        self.request(BUFFER_WRITE, struct.pack("<Q", address) + data)

    def read(self, address, length):
        return self.request(BUFFER_READ, struct.pack("<QI", address, length)).payload[4:]

    def foreign_read(self, domid, mfn, offset, length):
        return self.request(FOREIGN_READ, struct.pack("<IQII", domid, mfn, offset, length)).payload[4:]

    def bind_virq(self, virq):
        return struct.unpack_from("<I", self.request(BIND_VIRQ, struct.pack("<I", virq)).payload, 4)[0]

    def port_op(self, kind, port):
        self.request(kind, struct.pack("<I", port))

    def shutdown(self, reason=0):
        self.request(SHUTDOWN, struct.pack("<I", reason))


# The bulk window (tools/PROTOCOL.md "The bulk window", common/relay/window.h): the file behind
# QEMU's ivshmem-plain, two byte rings carrying the same frames as the socket.
WINDOW_MAGIC, WINDOW_BYTES, WINDOW_RING = 0x57525650, 1 << 20, 256 * 1024
WINDOW_TO_DOM0, WINDOW_TO_HOST = 0x1000, 0x1000 + 256 * 1024
TO_DOM0_HEAD, TO_DOM0_TAIL, TO_HOST_HEAD, TO_HOST_TAIL = 64, 128, 192, 256


def window_qemu_args(path):
    """QEMU arguments giving the machine the window backed by the file `path`."""
    return ("-object", f"memory-backend-file,id=relaywindow,size={WINDOW_BYTES},mem-path={path},share=on",
            "-device", "ivshmem-plain,memdev=relaywindow")


class WindowClient(Client):
    """A client over the bulk window instead of the socket (the same frames and calls)."""

    def __init__(self, path, timeout=30.0):
        import mmap
        with open(path, "r+b") as f:
            self.window = mmap.mmap(f.fileno(), WINDOW_BYTES)
        deadline = time.monotonic() + timeout
        while self._u32(0) != WINDOW_MAGIC or self._u32(8) != 1:
            if time.monotonic() > deadline:
                raise TimeoutError("the relay never announced its window")
            time.sleep(0.05)
        self._put32(TO_HOST_TAIL, self._u32(TO_HOST_HEAD))  # what an earlier client left unread
        self.buffer = b""
        self.trace, self.events, self.unsolicited = [], [], []
        self.seq = 0

    def _u32(self, offset):
        return struct.unpack_from("<I", self.window, offset)[0]

    def _put32(self, offset, value):
        struct.pack_into("<I", self.window, offset, value & 0xffffffff)

    def close(self):
        self.window.close()

    def send_raw(self, data, timeout=30.0):
        deadline = time.monotonic() + timeout
        while data:
            head, tail = self._u32(TO_DOM0_HEAD), self._u32(TO_DOM0_TAIL)
            room = WINDOW_RING - ((head - tail) & 0xffffffff)
            n = min(room, len(data))
            if n == 0:
                if time.monotonic() > deadline:
                    raise TimeoutError("the relay reads nothing from the window")
                time.sleep(0.0005)
                continue
            at = head % WINDOW_RING
            first = min(n, WINDOW_RING - at)
            self.window[WINDOW_TO_DOM0 + at:WINDOW_TO_DOM0 + at + first] = data[:first]
            self.window[WINDOW_TO_DOM0:WINDOW_TO_DOM0 + n - first] = data[first:n]
            self._put32(TO_DOM0_HEAD, head + n)
            data = data[n:]

    def receive(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            f = self._parse()
            if f:
                return f
            head, tail = self._u32(TO_HOST_HEAD), self._u32(TO_HOST_TAIL)
            n = (head - tail) & 0xffffffff
            if n:
                at = tail % WINDOW_RING
                first = min(n, WINDOW_RING - at)
                self.buffer += self.window[WINDOW_TO_HOST + at:WINDOW_TO_HOST + at + first]
                self.buffer += self.window[WINDOW_TO_HOST:WINDOW_TO_HOST + n - first]
                self._put32(TO_HOST_TAIL, tail + n)
                continue
            if time.monotonic() > deadline:
                return None
            time.sleep(0.0002)
