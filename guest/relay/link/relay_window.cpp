#include "relay/link/relay_window.h"

#include "arch/io_port.h"
#include "kernel/console/console.h"
#include "kernel/memory/direct_map.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/events/time.h"
#include "common/relay/window.h"

namespace kernel::relay_window {
namespace {
namespace win = ::relay::window;

// Where the window is mapped: inside the kernel's 1 GiB, 2 MiB past the relay's buffer window
// and scratch page (relay/relay.cpp), so it shares no L1 table with them.
constexpr uint64_t kWindowVa = 0xffffffffb4600000ull;
constexpr uint64_t kPages = win::kBytes / 4096;
constexpr uint64_t kGiveUpNs = 1'000'000'000;

// PCI configuration mechanism #1 (ports 0xcf8/0xcfc, which dom0 may use on both hypervisors).
constexpr uint16_t kConfigAddress = 0xcf8, kConfigData = 0xcfc;
constexpr uint32_t kVendorDevice = 0x00, kCommand = 0x04;
constexpr uint32_t kMemorySpace = 1u << 1;

win::Header* header;
uint8_t* to_dom0;
uint8_t* to_host;

uint32_t config_read(unsigned device, uint32_t reg) {
  arch::out32(kConfigAddress, 0x80000000u | device << 11 | (reg & 0xfc));
  return arch::in32(kConfigData);
}
void config_write(unsigned device, uint32_t reg, uint32_t value) {
  arch::out32(kConfigAddress, 0x80000000u | device << 11 | (reg & 0xfc));
  arch::out32(kConfigData, value);
}

// The device number of the ivshmem-plain on bus 0, or -1.
int find_device() {
  for (unsigned device = 0; device < 32; ++device) {
    uint32_t id = config_read(device, kVendorDevice);
    if ((id & 0xffff) == win::kPciVendor && id >> 16 == win::kPciDevice) return int(device);
  }
  return -1;
}

// BAR 2's address (a 64-bit memory BAR), or 0 when the firmware left it unassigned.
uint64_t shared_memory_address(unsigned device) {
  uint32_t reg = 0x10 + 4 * win::kSharedBar;
  uint32_t low = config_read(device, reg);
  if (low & 1) return 0;  // an I/O BAR: not ivshmem's
  uint64_t address = low & ~0xfull;
  if ((low & 0x6) == 0x4) address |= uint64_t(config_read(device, reg + 4)) << 32;
  return address;
}
}  // namespace

bool open() {
  int device = find_device();
  if (device < 0) return false;
  uint64_t address = shared_memory_address(unsigned(device));
  if (address == 0 || address % 4096) {
    print("relay: window device without its memory BAR: no window\n");
    return false;
  }
  config_write(unsigned(device), kCommand, config_read(unsigned(device), kCommand) | kMemorySpace);
  uint64_t flags =
      PageTableEntry::kPresent | PageTableEntry::kWritable | PageTableEntry::kAccessed | PageTableEntry::kDirty;
  for (uint64_t i = 0; i < kPages; ++i) {
    uint64_t va = kWindowVa + i * 4096;
    kernel_l1_for(va);
    long rc = pv::ops.set_kernel_mapping(va, PageTableEntry::make(Mfn{address / 4096 + i}, flags));
    if (rc < 0) {
      print("relay: mapping the window's frame %lx: %ld: no window\n", address / 4096 + i, rc);
      for (uint64_t j = 0; j < i; ++j) pv::ops.set_kernel_mapping(kWindowVa + j * 4096, PageTableEntry{});
      return false;
    }
  }
  auto* base = reinterpret_cast<uint8_t*>(kWindowVa);
  header = reinterpret_cast<win::Header*>(base);
  to_dom0 = base + win::kToDom0Offset;
  to_host = base + win::kToHostOffset;
  // Empty rings first, the announcement last: a host that sees `serving` finds them usable.
  win::store_release(header->state, win::absent);
  header->to_dom0.head = header->to_dom0.tail = 0;
  header->to_host.head = header->to_host.tail = 0;
  header->magic = win::kMagic;
  header->version = win::kVersion;
  header->ring_bytes = win::kRingBytes;
  header->to_dom0_offset = win::kToDom0Offset;
  header->to_host_offset = win::kToHostOffset;
  win::store_release(header->state, win::serving);
  print("relay: bulk window at machine address %lx (%lu KiB)\n", address, win::kBytes / 1024);
  return true;
}

bool available() { return header != nullptr; }

size_t receive(uint8_t* out, size_t capacity) {
  if (!header) return 0;
  bool broken = false;
  size_t n = win::ring_read(header->to_dom0, to_dom0, win::kRingBytes, out, capacity, broken);
  if (broken) print("relay: the host broke the window's ring (dropped)\n");
  return n;
}

void send(const uint8_t* data, size_t length) {
  if (!header) return;
  uint64_t last_progress = system_time_ns();
  while (length > 0) {
    size_t n = win::ring_write(header->to_host, to_host, win::kRingBytes, data, length);
    data += n;
    length -= n;
    if (n) {
      last_progress = system_time_ns();
      continue;
    }
    if (system_time_ns() - last_progress > kGiveUpNs) return;  // nobody reads: the host went away
    asm volatile("pause");
  }
}

}  // namespace kernel::relay_window
