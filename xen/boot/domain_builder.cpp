#include "boot/domain_builder.h"
#include "control/control_abi.h"
#include "abi/xen_abi.h"
#include <xen/platform.h>
#include "abi/xen_abi.h"
#include <xen/xen.h>
#include "boot/dom0_layout.h"
#include "common/elf/elf_image.h"
#include "common/elf/xen_elf_notes.h"
#include "console/console.h"
#include "domain/domain.h"
#include "hypercall/domain_control.h"
#include "hypercall/domain_lifecycle.h"
#include "domain/domain_mmu.h"
#include "domain_console/guest_console.h"
#include "sched/scheduler.h"
#include "domain/shared_info.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "mm/mmuext_op.h"
#include "domain/guest_mode.h"
#include "pv/guest_entry.h"
#include "pv/rules/hypercall_page.h"
#include "arch/x86/platform/smp_boot.h"
#include "arch/x86/platform/cross_cpu.h"
#include "arch/x86/cpu/cpu_tables.h"
#include "pv/return_to_guest.h"
#include "control/create_config.h"
#include "domain/writable_page_tables_glue.h"

namespace domain_builder {
static_assert(boot::kMaxDomuVcpus == control::max_vcpus_per_domain,
              "domU_max_vcpus= reaches every vCPU a domain may have");
namespace {
constexpr uint64_t page = 4096;
constexpr uint64_t default_dom0_bytes = 256ULL << 20;
constexpr uint64_t reserve_for_hypervisor = 16ULL << 20;
constexpr uint64_t present = 1, writable = 2, user = 4, accessed = 0x20, dirty = 0x40;
constexpr uint64_t table_flags = present | writable | user | accessed | dirty;
// The start-of-day region's page-table frames the builder can lay out: 1024 maps about 2 GiB.
constexpr unsigned max_table_frames = 1024;

// A domain's pseudo-physical frames. pfn i is machine frame first_mfn + i of one run the
// builder allocated, except the initrd's pages when the initrd module's own frames were
// handed to the domain (as Xen's assign_pages does for dom0): the machine then holds the
// initrd once, not twice, and the pfns after it continue the run.
//
// Only the start-of-day region has virtual addresses: every write the builder makes goes
// through pfn_of_va, which refuses any address outside it, so an address an image supplied
// can never make the builder write anywhere but the domain's own memory.
struct DomainMemory {
  uint64_t first_mfn = 0;
  uint64_t nr_pages = 0;      // every page of the domain, the initrd's included
  uint64_t virt_start = 0;    // guest virtual address of pfn 0 (Xen's v_start)
  uint64_t mapped_pages = 0;  // the start-of-day region's pages (pfns 0 .. mapped_pages - 1)
  uint64_t initrd_pfn = 0;    // the handed-over initrd module: pfns initrd_pfn ..
  uint64_t initrd_pages = 0;  //   initrd_pfn + initrd_pages - 1 (0: none, the run holds all)
  uint64_t initrd_mfn = 0;    //   are its frames initrd_mfn ..

  uint64_t mfn_of_pfn(uint64_t pfn) const {
    if (initrd_pages == 0 || pfn < initrd_pfn) return first_mfn + pfn;
    if (pfn < initrd_pfn + initrd_pages) return initrd_mfn + (pfn - initrd_pfn);
    return first_mfn + pfn - initrd_pages;
  }
  bool pfn_of_va(uint64_t va, uint64_t& pfn) const {
    if (va < virt_start || ((va - virt_start) >> 12) >= mapped_pages) return false;
    pfn = (va - virt_start) >> 12;
    return true;
  }
  // The hypervisor's view of the page holding `va`, or nullptr outside the region.
  uint8_t* host(uint64_t va) const {
    uint64_t pfn = 0;
    if (!pfn_of_va(va, pfn)) return nullptr;
    return machine::to_virtual<uint8_t>((mfn_of_pfn(pfn) << 12) | (va & (page - 1)));
  }
  uint64_t mfn_of_va(uint64_t va) const {
    uint64_t pfn = 0;
    return pfn_of_va(va, pfn) ? mfn_of_pfn(pfn) : 0;
  }
  // False (having copied a part, perhaps) if any byte of [va, va + length) is outside it.
  bool copy_in(uint64_t va, const uint8_t* from, uint64_t length) const {
    if (length && va + length - 1 < va) return false;
    while (length) {
      uint64_t piece = page - (va & (page - 1));
      if (piece > length) piece = length;
      uint8_t* to = host(va);
      if (!to) return false;
      __builtin_memcpy(to, from, piece);
      va += piece;
      from += piece;
      length -= piece;
    }
    return true;
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

// The initrd module's frames can become the domain's if the module starts on a page (the
// multiboot header asks loaders for that) and its frames are RAM owned by no one.
bool initrd_can_be_handed_over(const boot::BootDomain& plan) {
  if (!plan.has_initrd) return false;
  const boot_memory::Module& m = boot_memory::module(unsigned(plan.initrd_module));
  if (m.start % page != 0 || m.end <= m.start) return false;
  mm::FrameTable& frames = boot_memory::frame_table();
  for (uint64_t mfn = m.start / page; mfn < (m.end + page - 1) / page; ++mfn) {
    const mm::PageInfo* info = frames.find(mfn);
    if (!info || !info->is_free() || boot_memory::allocator().is_free(mfn)) return false;
  }
  return true;
}

uint64_t mib(uint64_t bytes) { return bytes >> 20; }
uint64_t mib_rounded_up(uint64_t bytes) { return (bytes >> 20) + ((bytes & ((1ULL << 20) - 1)) != 0); }

// dom0 takes dom0_mem= of what is free, by default 256 MiB plus the initrd (whose pages are
// the domain's, as in Xen's accounting: a big initrd does not eat the memory dom0 works in);
// each domU takes domU_mem=. What is free includes a handed-over initrd's own frames. Asking
// for more than there is gives what there is, with a warning.
// The most the domain may hold (max_pages, XEN_DOMCTL_max_mem changes it later): a domU what
// it was given; dom0, as Xen's dom0_compute_nr_pages, dom0_mem's max: if there is one, else no
// limit (Xen's 32-bit ~0).
uint64_t domain_pages(const boot::BootDomain& plan, const boot::CommandLine& options, uint64_t initrd_length,
                      bool initrd_handed_over, uint64_t& max_pages) {
  uint64_t free_bytes = boot_memory::allocator().free_count() * page;
  uint64_t available = free_bytes > reserve_for_hypervisor ? free_bytes - reserve_for_hypervisor : 0;
  if (initrd_handed_over) available += (initrd_length + page - 1) / page * page;
  const boot::Dom0MemorySpec& dom0_spec = options.dom0_memory;
  max_pages = dom0_spec.has_max ? dom0_spec.max.resolve(available) / page : UINT32_MAX;
  if (plan.id != 0) {
    max_pages = options.domu_memory_bytes <= available ? options.domu_memory_bytes / page : available / page;
    if (options.domu_memory_bytes <= available) return options.domu_memory_bytes / page;
    log_warning("Warning: d%u: domU_mem=%lu MiB, but only %lu MiB are free: d%u gets %lu MiB\n", plan.id,
                mib(options.domu_memory_bytes), mib(available), plan.id, mib(available));
    return available / page;
  }
  const boot::Dom0MemorySpec& spec = options.dom0_memory;
  uint64_t wanted_default = default_dom0_bytes + initrd_length;
  uint64_t bytes = spec.resolve(available, wanted_default < available ? wanted_default : available);
  if (spec.has_amount && !spec.amount.all_but && spec.amount.percent == 0 && spec.amount.bytes > available)
    log_warning("Warning: dom0_mem=%lu MiB, but only %lu MiB are free: dom0 gets %lu MiB\n", mib(spec.amount.bytes),
                mib(available), mib(bytes));
  return bytes / page;
}

// Takes the domain's pages: a run of fresh frames for all of them, or for all but the
// initrd's when its module is handed over. Taken before the domain is created, so that the run
// comes first among the domain's frames (its shared_info page follows), as tools that look for
// a boot domain's memory by its first frame expect (kernel/fuzz_companion).
bool reserve_memory(const boot::BootDomain& plan, const boot::Dom0Layout& layout, bool hand_over_initrd,
                    DomainMemory& memory) {
  memory.nr_pages = layout.nr_pages;
  memory.virt_start = layout.bootstrap.start;
  memory.mapped_pages = layout.bootstrap_pages;
  if (hand_over_initrd) {
    memory.initrd_pfn = (layout.initrd.start - layout.bootstrap.start) / page;
    memory.initrd_pages = layout.initrd_pages;
    memory.initrd_mfn = boot_memory::module(unsigned(plan.initrd_module)).start / page;
  }
  uint64_t run = memory.nr_pages - memory.initrd_pages;
  return boot_memory::allocator().allocate_contiguous(run, 1, memory.first_mfn) == boot::FrameAllocatorError::none;
}

void unreserve_memory(const DomainMemory& memory) {
  boot_memory::allocator().free_contiguous(memory.first_mfn, memory.nr_pages - memory.initrd_pages);
}

// The reserved pages become the domain's: the frame table's owners and the M2P are filled.
void assign_memory(Domain& domain, uint64_t max_pages, const DomainMemory& memory) {
  mm::FrameTable& frames = boot_memory::frame_table();
  mm::MachToPhysTable m2p = boot_memory::m2p();
  for (uint64_t pfn = 0; pfn < memory.nr_pages; ++pfn) {
    uint64_t mfn = memory.mfn_of_pfn(pfn);
    bool initrd = memory.initrd_pages && pfn >= memory.initrd_pfn && pfn < memory.initrd_pfn + memory.initrd_pages;
    if (!initrd) __builtin_memset(machine::to_virtual(mfn << 12), 0, page);
    frames.assign(mfn, domain.id);
    m2p.entries[mfn] = pfn;
  }
  domain.tot_pages = memory.nr_pages;
  domain.max_pages = max_pages;
  domain.shared_info->arch.max_pfn = domain.tot_pages;
}

// The initrd's bytes at its place in the region: already there when its module was handed
// over (only the rest of its last page is cleared, which held whatever the loader left);
// copied otherwise.
bool place_initrd(const boot::Dom0Layout& layout, const boot::BootDomain& plan, const DomainMemory& memory) {
  boot::ByteSpan initrd = module_bytes(unsigned(plan.initrd_module));
  if (memory.initrd_pages == 0) return memory.copy_in(layout.initrd.start, initrd.data(), initrd.size());
  uint64_t tail = layout.initrd.end;
  uint64_t length = (page - (tail & (page - 1))) & (page - 1);
  if (length && !memory.host(tail)) return false;
  if (length) __builtin_memset(memory.host(tail), 0, length);
  return true;
}

// Every loadable segment lies in [virt_kstart, virt_kend) by construction (boot/xen_elf_notes),
// which lies in the region (boot/dom0_layout); copy_in checks each byte's page regardless.
bool load_kernel(const boot::ElfImage& image, const boot::XenKernelInfo& kernel, const DomainMemory& memory) {
  bool placed = true;
  image.for_each_loadable_segment([&](const boot::ElfSegment& segment) {
    boot::ByteSpan bytes = image.file_bytes(segment);
    if (!memory.copy_in(kernel.destination_of(segment), bytes.data(), bytes.size())) placed = false;
  });
  return placed;
}

bool write_p2m(const boot::Dom0Layout& layout, const DomainMemory& memory) {
  for (uint64_t pfn = 0; pfn < memory.nr_pages; ++pfn) {
    uint64_t mfn = memory.mfn_of_pfn(pfn);
    if (!memory.copy_in(layout.p2m.start + pfn * 8, reinterpret_cast<const uint8_t*>(&mfn), 8)) return false;
  }
  return true;
}

// Xen fills the page at the address HYPERCALL_PAGE names, aligned or not.
bool write_hypercall_page(uint64_t va, const DomainMemory& memory) {
  static uint8_t stubs[page];
  hypercall_page::fill(stubs);
  return memory.copy_in(va, stubs, page);
}

unsigned index_at(uint64_t va, unsigned level) { return (va >> (12 + 9 * (level - 1))) & 511; }

// Fills the initial page tables: every page of the bootstrap region mapped to its pfn,
// writable except the page-table frames themselves (a writable mapping of a page table
// would fail validation).
bool build_page_tables(const boot::Dom0Layout& layout, const DomainMemory& memory) {
  static boot::PageTableFrame plan[max_table_frames];
  size_t count = boot::plan_page_table_frames(layout, plan, max_table_frames);
  if (count > max_table_frames) return false;
  auto table = [&](size_t i) { return reinterpret_cast<uint64_t*>(memory.host(layout.page_tables.start + i * page)); };
  auto mfn = [&](size_t i) { return memory.mfn_of_va(layout.page_tables.start + i * page); };
  for (size_t i = 0; i < count; ++i)
    if (!table(i)) return false;
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

// As the toolstack's builder does: the L4 pinned (MMUEXT_PIN_L4_TABLE), then vCPU 0's first
// context through setvcpucontext's own path (ctrlreg[3] the L4, which becomes its base pointer).
// The other vCPUs stay down until the guest gives them a context (VCPUOP_initialise) and
// brings them up, as on Xen.
const char* pin_and_set_context(Domain& domain, const boot::Dom0Layout& layout, const DomainMemory& memory) {
  mm::MmuContext context = domain_mmu::context(domain);
  uint64_t l4 = memory.mfn_of_va(layout.page_tables.start);
  mmuext_op_t pin{};
  pin.cmd = MMUEXT_PIN_L4_TABLE;
  pin.arg1.mfn = l4;
  int rc = mm::mmuext_op(context, domain.vcpus[0].bases, pin);
  if (rc) {
    printk("d%u: pinning the initial L4 failed: %d\n", domain.id, rc);
    return "initial page tables failed validation";
  }
  static vcpu_guest_context first;  // 5 KiB: off the boot stack
  first = vcpu_guest_context{};
  first.flags = VGCF_in_kernel | VGCF_online;
  first.user_regs.rip = layout.entry;
  first.user_regs.rsp = layout.initial_rsp;
  first.user_regs.rsi = layout.initial_rsi;
  first.user_regs.cs = FLAT_KERNEL_CS;
  first.user_regs.ss = FLAT_KERNEL_SS;
  first.user_regs.rflags = 0x202;  // IF on in hardware; events start masked in vcpu_info
  first.kernel_ss = FLAT_KERNEL_SS;
  first.ctrlreg[3] = l4 << 12;
  first.vm_assist = domain.vm_assist;
  if ((rc = int(domain_lifecycle::set_vcpu_context(domain.vcpus[0], first)))) {
    printk("d%u: loading the initial L4 failed: %d\n", domain.id, rc);
    return "initial page tables failed validation";
  }
  return nullptr;
}

// A domain whose build failed half-way never runs: it is destroyed, everything given back.
BuildResult abandon(Domain& domain, const boot::BootDomain& plan, const char* why) {
  domain_lifecycle::destroy(domain, nullptr, false);
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

// A domU's PV console ring is the first page of the region's padding (Xen guarantees at
// least 512 KiB after the boot stack), connected to the hypervisor (domain_console/guest_console).
void attach_console(Domain& domain, const boot::Dom0Layout& layout, const DomainMemory& memory, start_info_t& info) {
  uint64_t mfn = memory.mfn_of_va(layout.boot_stack.end);
  int port = mfn ? guest_console::attach(domain, mfn) : -1;
  if (port <= 0) return;
  info.console.domU.mfn = mfn;
  info.console.domU.evtchn = uint32_t(port);
}

bool write_start_info(Domain& domain, const boot::BootDomain& plan, const boot::XenKernelInfo& kernel,
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
  if (!domain.privileged) attach_console(domain, layout, memory, info);
  const char* command_line = module_command_line(plan);
  for (size_t i = 0; i + 1 < MAX_GUEST_CMDLINE && command_line[i]; ++i) info.cmd_line[i] = int8_t(command_line[i]);
  return memory.copy_in(layout.start_info.start, reinterpret_cast<const uint8_t*>(&info), sizeof(info));
}

// What the image asked for that this builder does differently, said once (dom0_layout.h).
void report_ignored_notes(const boot::BootDomain& plan, const boot::XenKernelInfo& kernel,
                          const boot::Dom0Layout& layout) {
  if (kernel.has_init_p2m)
    printk("d%u: INIT_P2M %lx ignored: the p2m list is at %lx, in the start-of-day region\n", plan.id,
           kernel.init_p2m_base, layout.p2m.start);
  if (kernel.unmapped_initrd && layout.initrd.size())
    printk("d%u: MOD_START_PFN ignored: the initrd is mapped at %lx\n", plan.id, layout.initrd.start);
}

// dom0: as many vCPUs as CPUs are online, within dom0_max_vcpus= (Xen's dom0_max_vcpus());
// a domU built at boot: domU_max_vcpus=.
uint32_t vcpu_count(const boot::BootDomain& plan, const boot::CommandLine& options) {
  if (!plan.privileged) return options.domu_vcpus;
  return options.dom0_vcpus.resolve(smp_boot::online_cpus(), control::max_vcpus_per_domain);
}

// Every check that depends only on the image, the modules and the memory size, before the
// domain exists: an image that cannot be placed is refused here with its reason.
BuildResult plan_domain(const boot::BootDomain& plan, const boot::CommandLine& options, boot::ElfImage& image,
                        boot::XenKernelInfo& kernel, boot::Dom0Layout& layout, bool& hand_over_initrd,
                        uint64_t& max_pages) {
  boot::ElfError elf_error = boot::ElfImage::parse(module_bytes(unsigned(plan.kernel_module)), image);
  if (elf_error != boot::ElfError::none) return failure(plan, boot::describe(elf_error));
  boot::XenNoteError note_error = boot::parse_xen_kernel(image, supported_features(plan.privileged), kernel);
  if (note_error == boot::XenNoteError::none && plan.privileged) note_error = boot::check_dom0_capable(kernel);
  if (note_error != boot::XenNoteError::none) return failure(plan, boot::describe(note_error));

  uint64_t initrd_length = plan.has_initrd ? module_bytes(unsigned(plan.initrd_module)).size() : 0;
  hand_over_initrd = initrd_can_be_handed_over(plan);
  uint64_t nr_pages = domain_pages(plan, options, initrd_length, hand_over_initrd, max_pages);
  boot::Dom0LayoutError layout_error = boot::compute_dom0_layout(kernel, initrd_length, nr_pages, layout);
  if (layout_error == boot::Dom0LayoutError::too_small_for_kernel ||
      layout_error == boot::Dom0LayoutError::too_small_for_initrd)
    printk("d%u: %lu MiB of memory, the kernel image%s %lu MiB\n", plan.id, mib(nr_pages * page),
           initrd_length ? " and its initrd need" : " needs",
           mib_rounded_up(boot::dom0_pages_needed(kernel, initrd_length, nr_pages) * page));
  if (layout_error != boot::Dom0LayoutError::none) return failure(plan, boot::describe(layout_error));
  if (!boot::layout_places_image(layout, image, kernel))
    return failure(plan, "kernel image cannot be placed in the start-of-day region");
  if (boot::plan_page_table_frames(layout, nullptr, 0) > max_table_frames)
    return failure(plan, "start-of-day region needs too many page tables");
  BuildResult ok;
  ok.ok = true;
  return ok;
}
}  // namespace

BuildResult build(const boot::BootDomain& plan, const boot::CommandLine& options) {
  boot::ElfImage image;
  boot::XenKernelInfo kernel;
  boot::Dom0Layout layout;
  bool hand_over_initrd = false;
  uint64_t max_pages = 0;
  BuildResult planned = plan_domain(plan, options, image, kernel, layout, hand_over_initrd, max_pages);
  if (!planned.ok) return planned;

  // The domain comes from createdomain's own code (paused by the controller, vCPU down).
  domain_lifecycle::set_page_table_write_mode(options.ptwr == boot::PtwrMode::writable   ? PageTableWriteMode::writable
                                              : options.ptwr == boot::PtwrMode::adaptive ? PageTableWriteMode::adaptive
                                                                                         : PageTableWriteMode::emulate);
  DomainMemory memory;
  if (!reserve_memory(plan, layout, hand_over_initrd, memory)) return failure(plan, "not enough memory for the domain");
  Domain* created = nullptr;
  const uint32_t vcpus = vcpu_count(plan, options);
  long rc =
      domain_lifecycle::create_with_id(plan.id, domain_lifecycle::default_config(vcpus), plan.privileged, created);
  if (rc) {
    unreserve_memory(memory);
    return failure(plan,
                   rc == -XEN_ENOMEM ? "no free domain slot or no memory for it" : "the domain could not be created");
  }
  Domain& domain = *created;
  domain_lifecycle::create_vcpus(domain);  // XEN_DOMCTL_max_vcpus, as the toolstack follows up
  printk("Dom%u has maximum %u VCPUs\n", domain.id, domain.max_vcpus);  // Xen's line for dom0
  assign_memory(domain, max_pages, memory);
  // Xen's dom0 builder: a kernel whose PAE_MODE is "yes" gets the pae_extended_cr3 assist
  // (and XENVER_get_features then reports pae_pgdir_above_4gb).
  if (kernel.pae == boot::PaeMode::extended_cr3) domain.vm_assist |= 1ul << VMASST_TYPE_pae_extended_cr3;
  // Writable pagetables unhook a reachable L1 only for a kernel that said it reads such an L2
  // entry as its table (ptwr/writable_pagetables.h: Linux does not).
  domain.writable_pagetables.set_guest_reads_unhooked_entries(kernel.reads_unhooked_entries);
  domain.creation_finished = true;  // the hypervisor starts it: no toolstack builds it further
  printk("%s%u: %s %s, %lu MiB, entry %lx, start_info %lx, %lu page-table frames, guest PTE writes: %s\n",
         plan.id == 0 ? "dom" : "d", plan.id, kernel.guest_os.text, kernel.guest_version.text, memory.nr_pages / 256,
         layout.entry, layout.start_info.start, layout.nr_pt_frames(),
         page_table_write_mode_name(domain.pt_write_mode));
  printk("d%u: %s, memory mfns %lx-%lx, shared_info mfn %lx", domain.id,
         domain.privileged ? "privileged" : "unprivileged", memory.first_mfn,
         memory.first_mfn + memory.nr_pages - memory.initrd_pages - 1, domain.shared_info_mfn);
  if (memory.initrd_pages)
    printk(", initrd module mfns %lx-%lx", memory.initrd_mfn, memory.initrd_mfn + memory.initrd_pages - 1);
  printk("\n");
  report_ignored_notes(plan, kernel, layout);

  // The layout placed all of this inside the region; each write is checked against it again.
  if (!load_kernel(image, kernel, memory) || (plan.has_initrd && !place_initrd(layout, plan, memory)) ||
      !write_p2m(layout, memory) || !write_start_info(domain, plan, kernel, layout, memory) ||
      (kernel.has_hypercall_page && !write_hypercall_page(kernel.hypercall_page, memory)))
    return abandon(domain, plan, "kernel image cannot be placed in the start-of-day region");
  if (!build_page_tables(layout, memory)) return abandon(domain, plan, "start-of-day page tables cannot be built");
  if (const char* error = pin_and_set_context(domain, layout, memory)) return abandon(domain, plan, error);
  domain_control::unpause(domain);  // the toolstack's first unpause (Xen unpauses dom0 at the end of boot)
  BuildResult result;
  result.ok = true;
  result.domain = &domain;
  return result;
}

namespace {
// An AP's way into the scheduler (sched_smp=1): on its entry stack, below the slot of the guest
// frame at its top (the park it leaves ran at the very top), it idles until a vCPU is placed on
// it, then enters it as every return to a guest does.
[[noreturn]] void run_ap(unsigned cpu) {
  (void)cpu;
  TrapFrame frame;
  scheduler::first_on_this_cpu(frame);
  pv::before_return_to_guest(frame);
  pv::enter_guest(frame);
}

void enter_scheduler_on_ap(unsigned cpu) {
  uint64_t stack = (cpu_tables::entry_stack_top(cpu) - sizeof(TrapFrame) - 256) & ~uint64_t(15);
  asm volatile(
      "mov %0, %%rsp\n"
      "call *%1\n"
      "ud2" ::"r"(stack),
      "r"(&run_ap), "D"(uint64_t(cpu))
      : "memory");
  __builtin_unreachable();
}
}  // namespace

void start(Domain& dom0) {
  Vcpu& vcpu = dom0.vcpus[0];
  scheduler::start(vcpu);
  vcpu.kernel_mode = true;
  guest_mode::load(vcpu);
  printk("Starting dom0\n");
  if (domains::vcpus_on_every_cpu()) {  // the APs leave their park for the scheduler
    printk("Scheduling guests on %u CPUs\n", smp_boot::online_cpus());
    smp_boot::set_idle_entry(enter_scheduler_on_ap);
    cross_cpu::send_event_check(smp_boot::online_mask());
  }
  pv::enter_guest(vcpu.registers);
}
}  // namespace domain_builder
