#include "domain/domain_builder.h"
#include "mm/xen_abi.h"
#include <xen/platform.h>
#include "mm/xen_abi.h"
#include <xen/xen.h>
#include "boot/dom0_layout.h"
#include "boot/elf_image.h"
#include "boot/xen_elf_notes.h"
#include "console/console.h"
#include "domain/domain.h"
#include "domain/domain_mmu.h"
#include "domain/scheduler.h"
#include "domain/shared_info.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "mm/mmuext_op.h"
#include "pv/bounce.h"
#include "pv/guest_entry.h"
#include "pv/hypercall_page.h"
#include "ptwr/writable_page_tables_glue.h"

namespace domain_builder {
namespace {
constexpr uint64_t page = 4096;
constexpr uint64_t default_dom0_bytes = 256ULL << 20;
constexpr uint64_t reserve_for_hypervisor = 16ULL << 20;
constexpr uint64_t present = 1, writable = 2, user = 4, accessed = 0x20, dirty = 0x40;
constexpr uint64_t table_flags = present | writable | user | accessed | dirty;
constexpr unsigned max_table_frames = 64;

// Guest pseudo-physical frame i is machine frame first_mfn + i: a domain's memory is one run.
struct DomainMemory {
  uint64_t first_mfn = 0;
  uint64_t nr_pages = 0;
  uint64_t virt_start = 0;  // guest virtual address of pfn 0 (Xen's v_start)

  uint64_t mfn_of_va(uint64_t va) const { return first_mfn + ((va - virt_start) >> 12); }
  uint8_t* host(uint64_t va) const {
    return machine::to_virtual<uint8_t>((mfn_of_va(va) << 12) | (va & (page - 1)));
  }
  void copy_in(uint64_t va, const uint8_t* from, uint64_t length) const {
    while (length) {
      uint64_t piece = page - (va & (page - 1));
      if (piece > length) piece = length;
      __builtin_memcpy(host(va), from, piece);
      va += piece;
      from += piece;
      length -= piece;
    }
  }
};

BuildResult failure(const boot::BootDomain& plan, const char* why) {
  if (plan.id == 0)
    printk("dom0 kernel refused: %s\n", why);
  else
    printk("d%u kernel refused: %s\n", plan.id, why);
  BuildResult result;
  result.error = plan.id == 0 ? "no usable dom0 kernel" : "no usable domU kernel";
  return result;
}

boot::ByteSpan module_bytes(unsigned index) {
  const boot_memory::Module& m = boot_memory::module(index);
  return boot::ByteSpan(machine::to_virtual<uint8_t>(m.start), m.end - m.start);
}

// Kernels may ask for these features; anything else marked required is refused.
boot::XenFeatures supported_features(bool privileged) {
  if (!privileged) return boot::XenFeatures::of(XENFEAT_writable_descriptor_tables, XENFEAT_writable_page_tables);
  return boot::XenFeatures::of(XENFEAT_dom0, XENFEAT_writable_descriptor_tables, XENFEAT_writable_page_tables);
}

// dom0 takes dom0_mem= (or a default) of what is free; each domU takes domU_mem=.
uint64_t domain_pages(const boot::BootDomain& plan, const boot::CommandLine& options) {
  uint64_t free_bytes = boot_memory::allocator().free_count() * page;
  uint64_t available = free_bytes > reserve_for_hypervisor ? free_bytes - reserve_for_hypervisor : 0;
  if (plan.id != 0) return (options.domu_memory_bytes < available ? options.domu_memory_bytes : available) / page;
  uint64_t bytes = options.dom0_memory.resolve(available, default_dom0_bytes < available ? default_dom0_bytes : available);
  return bytes / page;
}

bool allocate_memory(Domain& domain, uint64_t nr_pages, DomainMemory& memory) {
  if (boot_memory::allocator().allocate_contiguous(nr_pages, 1, memory.first_mfn) != boot::FrameAllocatorError::none)
    return false;
  mm::FrameTable& frames = boot_memory::frame_table();
  mm::MachToPhysTable m2p = boot_memory::m2p();
  for (uint64_t pfn = 0; pfn < nr_pages; ++pfn) {
    uint64_t mfn = memory.first_mfn + pfn;
    __builtin_memset(machine::to_virtual(mfn << 12), 0, page);
    frames.assign(mfn, domain.id);
    m2p.entries[mfn] = pfn;
  }
  memory.nr_pages = nr_pages;
  domain.tot_pages = domain.max_pages = nr_pages;
  return true;
}

void load_kernel(const boot::ElfImage& image, const boot::XenKernelInfo& kernel, const DomainMemory& memory) {
  image.for_each_loadable_segment([&](const boot::ElfSegment& segment) {
    boot::ByteSpan bytes = image.file_bytes(segment);
    memory.copy_in(kernel.destination_of(segment), bytes.data(), bytes.size());
  });
}

void write_p2m(const boot::Dom0Layout& layout, const DomainMemory& memory) {
  for (uint64_t pfn = 0; pfn < memory.nr_pages; ++pfn) {
    uint64_t mfn = memory.first_mfn + pfn;
    memory.copy_in(layout.p2m.start + pfn * 8, reinterpret_cast<const uint8_t*>(&mfn), 8);
  }
}

unsigned index_at(uint64_t va, unsigned level) { return (va >> (12 + 9 * (level - 1))) & 511; }

// Fills the initial page tables: every page of the bootstrap region mapped to its pfn,
// writable except the page-table frames themselves (a writable mapping of a page table
// would fail validation).
bool build_page_tables(const boot::Dom0Layout& layout, const DomainMemory& memory) {
  boot::PageTableFrame plan[max_table_frames];
  size_t count = boot::plan_page_table_frames(layout, plan, max_table_frames);
  if (count > max_table_frames) return false;
  auto table = [&](size_t i) { return reinterpret_cast<uint64_t*>(memory.host(layout.page_tables.start + i * page)); };
  auto mfn = [&](size_t i) { return memory.mfn_of_va(layout.page_tables.start + i * page); };
  for (size_t i = 0; i < count; ++i) {
    const boot::PageTableFrame& frame = plan[i];
    if (frame.level == 4) continue;
    // Hook this table into the nearest earlier table of the level above that covers it.
    for (size_t j = 0; j < count; ++j) {
      if (plan[j].level != frame.level + 1) continue;
      uint64_t span = 1ULL << (12 + 9 * plan[j].level);
      bool covered = frame.covers >= plan[j].covers && frame.covers - plan[j].covers < span;  // no wrap at 2^64
      if (plan[j].level != 4 && !covered) continue;
      table(j)[index_at(frame.covers, plan[j].level)] = (mfn(i) << 12) | table_flags;
      break;
    }
    if (frame.level != 1) continue;
    for (unsigned e = 0; e < 512; ++e) {
      uint64_t va = frame.covers + uint64_t(e) * page;
      if (va < layout.bootstrap.start || va >= layout.bootstrap.end) continue;
      bool is_table = va >= layout.page_tables.start && va < layout.page_tables.end;
      uint64_t flags = is_table ? (table_flags & ~(writable | dirty)) : table_flags;
      table(i)[e] = (memory.mfn_of_va(va) << 12) | flags;
    }
  }
  return true;
}

const char* pin_and_load(Domain& domain, const boot::Dom0Layout& layout, const DomainMemory& memory) {
  mm::MmuContext context = domain_mmu::context(domain);
  uint64_t l4 = memory.mfn_of_va(layout.page_tables.start);
  mmuext_op_t pin{};
  pin.cmd = MMUEXT_PIN_L4_TABLE;
  pin.arg1.mfn = l4;
  int rc = mm::mmuext_op(context, domain.vcpu0.bases, pin);
  if (rc) {
    printk("d%u: pinning the initial L4 failed: %d\n", domain.id, rc);
    return "initial page tables failed validation";
  }
  mmuext_op_t base{};
  base.cmd = MMUEXT_NEW_BASEPTR;
  base.arg1.mfn = l4;
  if ((rc = mm::mmuext_op(context, domain.vcpu0.bases, base))) {
    printk("d%u: loading the initial L4 failed: %d\n", domain.id, rc);
    return "initial page tables failed validation";
  }
  return nullptr;
}

// A domain whose build failed half-way never runs: it counts as stopped, silently.
BuildResult abandon(Domain& domain, const boot::BootDomain& plan, const char* why) {
  domain.state = DomainState::crashed;
  domain.stop_reported = true;
  return failure(plan, why);
}

const char* module_command_line(const boot::BootDomain& plan) {
  return boot::skip_image_name(boot_memory::module(unsigned(plan.kernel_module)).command_line);
}

// As Xen: only the initial domain is told it is privileged, and it may drive processor power
// states (C and P states) itself.
uint32_t start_info_flags(const Domain& domain) {
  if (!domain.privileged) return 0;
  constexpr uint32_t processor_pm_bits = (XEN_PROCESSOR_PM_CX | XEN_PROCESSOR_PM_PX) << 8;
  return SIF_PRIVILEGED | SIF_INITDOMAIN | (processor_pm_bits & SIF_PM_MASK);
}

void write_start_info(Domain& domain, const boot::BootDomain& plan, const boot::XenKernelInfo& kernel,
                      const boot::Dom0Layout& layout, const DomainMemory& memory) {
  start_info_t info{};
  // Xen appends "p" when the kernel declared a PAE mode, which every 64-bit kernel may do.
  const char* magic = kernel.pae != boot::PaeMode::none ? "xen-3.0-x86_64p" : "xen-3.0-x86_64";
  __builtin_memcpy(info.magic, magic, __builtin_strlen(magic) + 1);
  info.nr_pages = memory.nr_pages;
  info.shared_info = domain.shared_info_mfn << 12;
  info.flags = start_info_flags(domain);
  info.pt_base = layout.page_tables.start;
  info.nr_pt_frames = layout.nr_pt_frames();
  info.mfn_list = layout.p2m.start;
  if (layout.initrd.size()) {
    info.mod_start = layout.initrd.start;
    info.mod_len = module_bytes(unsigned(plan.initrd_module)).size();
  }
  const char* command_line = module_command_line(plan);
  for (size_t i = 0; i + 1 < MAX_GUEST_CMDLINE && command_line[i]; ++i) info.cmd_line[i] = int8_t(command_line[i]);
  memory.copy_in(layout.start_info.start, reinterpret_cast<const uint8_t*>(&info), sizeof(info));
}

TrapFrame initial_frame(const boot::Dom0Layout& layout) {
  TrapFrame frame{};
  frame.rip = layout.entry;
  frame.rsp = layout.initial_rsp;
  frame.rsi = layout.initial_rsi;
  frame.cs = FLAT_KERNEL_CS;
  frame.ss = FLAT_KERNEL_SS;
  frame.rflags = 0x202;  // IF on in hardware; events start masked in vcpu_info
  return frame;
}
}  // namespace

BuildResult build(const boot::BootDomain& plan, const boot::CommandLine& options) {
  boot::ElfImage image;
  boot::ElfError elf_error = boot::ElfImage::parse(module_bytes(unsigned(plan.kernel_module)), image);
  if (elf_error != boot::ElfError::none) return failure(plan, boot::describe(elf_error));
  boot::XenKernelInfo kernel;
  boot::XenNoteError note_error = boot::parse_xen_kernel(image, supported_features(plan.privileged), kernel);
  if (note_error == boot::XenNoteError::none && plan.privileged) note_error = boot::check_dom0_capable(kernel);
  if (note_error != boot::XenNoteError::none) return failure(plan, boot::describe(note_error));

  uint64_t initrd_length = plan.has_initrd ? module_bytes(unsigned(plan.initrd_module)).size() : 0;
  uint64_t nr_pages = domain_pages(plan, options);
  boot::Dom0Layout layout;
  boot::Dom0LayoutError layout_error = boot::compute_dom0_layout(kernel, initrd_length, nr_pages, layout);
  if (layout_error != boot::Dom0LayoutError::none) return failure(plan, boot::describe(layout_error));

  Domain* created = domains::create(plan.id, plan.privileged);
  if (!created) return failure(plan, "no free domain slot");
  Domain& domain = *created;
  domain.pt_write_mode = options.ptwr == boot::PtwrMode::writable ? PageTableWriteMode::writable
                                                                  : PageTableWriteMode::emulate;
  if (domain.pt_write_mode == PageTableWriteMode::writable && !writable_page_tables::enable(domain))
    return abandon(domain, plan, "no memory for writable pagetables");
  DomainMemory memory;
  memory.virt_start = layout.bootstrap.start;
  if (!allocate_memory(domain, nr_pages, memory)) return abandon(domain, plan, "not enough memory for the domain");
  if (!shared_info_page::create(domain)) return abandon(domain, plan, "no memory for shared_info");
  printk("%s%u: %s %s, %lu MiB, entry %lx, start_info %lx, %lu page-table frames, guest PTE writes: %s\n",
         plan.id == 0 ? "dom" : "d", plan.id, kernel.guest_os.text, kernel.guest_version.text, nr_pages / 256,
         layout.entry, layout.start_info.start, layout.nr_pt_frames(),
         domain.pt_write_mode == PageTableWriteMode::writable ? "writable" : "emulate");
  printk("d%u: %s, memory mfns %lx-%lx, shared_info mfn %lx\n", domain.id,
           domain.privileged ? "privileged" : "unprivileged", memory.first_mfn, memory.first_mfn + nr_pages - 1,
           domain.shared_info_mfn);

  load_kernel(image, kernel, memory);
  if (initrd_length) memory.copy_in(layout.initrd.start, module_bytes(unsigned(plan.initrd_module)).data(), initrd_length);
  write_p2m(layout, memory);
  write_start_info(domain, plan, kernel, layout, memory);
  if (kernel.has_hypercall_page) hypercall_page::fill(memory.host(kernel.hypercall_page));
  if (!build_page_tables(layout, memory)) return abandon(domain, plan, "bootstrap region needs too many page tables");
  if (const char* error = pin_and_load(domain, layout, memory)) return abandon(domain, plan, error);

  domain.vcpu0.registers = initial_frame(layout);
  BuildResult result;
  result.ok = true;
  result.domain = &domain;
  return result;
}

void start(Domain& dom0) {
  Vcpu& vcpu = dom0.vcpu0;
  scheduler::start(vcpu);
  vcpu.kernel_mode = true;
  pv::load_guest_page_table(vcpu);
  printk("Starting dom0\n");
  pv::enter_guest(vcpu.registers);
}
}  // namespace domain_builder
