#include "hypercall/domain_lifecycle.h"
#include "arch/x86/cpu/fpu.h"
#include "arch/x86/cpu/rflags.h"
#include "console/console.h"
#include "control/create_config.h"
#include "control/domid_allocation.h"
#include "control/vcpu_context.h"
#include "hypercall/domain_control.h"
#include "domain/domain_mmu.h"
#include "event/event_channels.h"
#include "domain_console/guest_console.h"
#include "sched/scheduler.h"
#include "domain/shared_info.h"
#include "sched/timers.h"
#include "domain/vcpu_info_area.h"
#include "hypercall/dispatch.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "mm/mmuext_op.h"
#include "mm/page_refs.h"
#include "domain/writable_page_tables_glue.h"
#include "domain/descriptor_tables.h"
#include "pv/rules/hypercall_page.h"

namespace domain_lifecycle {
namespace {
constexpr uint64_t page = 4096;
constexpr uint64_t cr0_ts = 1u << 3;

PageTableWriteMode write_mode = PageTableWriteMode::emulate;
control::DomidAllocator domids;

bool id_in_use(const void*, domid_t id) { return domains::find(id) != nullptr; }

// A frame the domain's allocation held and nothing else holds any more goes back to the
// allocator (a handed-over initrd module's frames were never the allocator's: they only
// become unowned). Frames another holder still references stay the domain's.
bool give_back(Domain& domain, uint64_t mfn) {
  mm::FrameTable& frames = boot_memory::frame_table();
  mm::PageInfo& info = frames.info(mfn);
  if (!info.allocated() || info.general_refs() != 1) return false;
  const bool allocator_frame = boot_memory::allocator().is_allocated(mfn);
  // The last reference: the frame table's release hook (domain/domain.cpp) gives the frame
  // back to the allocator and takes it out of tot_pages; free it here only if it did not.
  mm::drop_allocation(frames, mfn);
  if (allocator_frame) {
    if (boot_memory::allocator().is_allocated(mfn)) boot_memory::allocator().free(mfn);
    ++domain.frames_given_back;
  } else {
    ++domain.module_frames_unowned;  // a handed-over boot module's frame: never the allocator's
  }
  return true;
}

// The domain's own frame: on its list (mm::FrameTable::on_list), not merely carrying its id.
bool owned_by(const mm::FrameTable& frames, uint64_t mfn, const Domain& domain) {
  return !frames.info(mfn).is_free() && frames.info(mfn).owner() == domain.id && frames.on_list(mfn, domain.pages);
}

// Timers, writable-pagetable slots, CR3s (Xen's vcpu_destroy_pagetables): every vCPU goes down.
void release_vcpu_state(Domain& domain) {
  uint64_t free_before = boot_memory::allocator().free_count();
  writable_page_tables::disable(domain);
  domain.frames_given_back += boot_memory::allocator().free_count() - free_before;
  domain.for_each_vcpu([](Vcpu& vcpu) {
    vcpu.timer_deadline_ns = 0;
    vcpu.periodic_period_ns = 0;
    mm::release_base_pointers(boot_memory::frame_table(), vcpu.bases);
    descriptor_tables::destroy_gdt(vcpu);
    vcpu.ldt = {};
    vcpu.debug = {};
    vcpu.time_area = 0;
    vcpu_info_area::release(vcpu);  // before shared_info goes, which it then falls back to
    vcpu.online = false;
    vcpu.initialised = false;
    vcpu.blocked = false;
    scheduler::vcpu_down(vcpu);
  });
  timers::reprogram();
  guest_console::detach(domain);  // its ring's hold, before the frames are given back
}

// Each visit takes the first frame of the domain's list to its end (FrameTable::rotate): an
// unpin or a release may free other frames of the list, which then leave it, so the visits
// always stay within the frames the domain still has. A frame seen twice (when some left the
// list) is harmless: unpinning and dropping the allocation happen once.
void unpin_tables(Domain& domain, uint64_t visits) {
  mm::FrameTable& frames = boot_memory::frame_table();
  for (uint64_t i = 0; i < visits && !domain.pages.empty(); ++i) {
    const uint64_t mfn = frames.rotate(domain.pages);
    mm::PageInfo& info = frames.info(mfn);
    if (!info.pinned() || !owned_by(frames, mfn, domain) || !mm::clear_pinned(info)) continue;
    mm::put_page_and_type(frames, mfn);
  }
}

void release_frames(Domain& domain, uint64_t visits) {
  mm::FrameTable& frames = boot_memory::frame_table();
  for (uint64_t i = 0; i < visits && !domain.pages.empty(); ++i) {
    const uint64_t mfn = frames.rotate(domain.pages);
    if (!owned_by(frames, mfn, domain) || mfn == domain.shared_info_mfn) continue;
    give_back(domain, mfn);  // tot_pages drops in the frame table's release hook
  }
}

// The domain's shared_info page: the hypervisor stops writing it before it is given back.
void release_shared_info(Domain& domain) {
  if (!domain.shared_info_mfn) return;
  shared_info_page::release(domain);
  const mm::FrameTable& frames = boot_memory::frame_table();
  if (frames.contains(domain.shared_info_mfn) && owned_by(frames, domain.shared_info_mfn, domain) &&
      give_back(domain, domain.shared_info_mfn))
    domain.shared_info_mfn = 0;
}

void carry_out(Domain& domain, const control::TeardownWork& work) {
  switch (work.step) {
    case control::TeardownStep::vcpu_state: release_vcpu_state(domain); return;
    case control::TeardownStep::event_channels: event_channels::close_all(domain); return;
    case control::TeardownStep::unpin_tables: unpin_tables(domain, work.end - work.first); return;
    case control::TeardownStep::release_frames: release_frames(domain, work.end - work.first); return;
    case control::TeardownStep::shared_info: release_shared_info(domain); return;
    case control::TeardownStep::done: return;
  }
}

// What a dead domain still owns: the frames another domain referenced when it died. Each one
// whose other holders have let go since is given back; a frame whose last holder let go has
// left the list already (FrameTable::release). The list is all the domain owns (a frame joins
// it when assigned, leaves it when freed, and a dying domain is assigned nothing), so the slot
// can go when it is empty: Xen frees the domain when its last page goes (tot_pages 0, then
// put_domain). Visits what the domain holds, which is little once it is dead.
uint64_t frames_still_held(Domain& domain) {
  mm::FrameTable& frames = boot_memory::frame_table();
  const uint64_t listed = domain.pages.count;  // a frame given back leaves the list
  // Those that left since the last visit were freed by their last holder (the release hook
  // gave them back to the allocator): counted for the report too.
  if (listed < domain.frames_held) domain.frames_given_back += domain.frames_held - listed;
  for (uint64_t i = 0; i < listed && !domain.pages.empty(); ++i) {
    const uint64_t mfn = frames.rotate(domain.pages);
    if (owned_by(frames, mfn, domain)) give_back(domain, mfn);
  }
  const uint64_t held = domain.pages.count;
  domain.frames_held = held;
  domain.tot_pages = held;
  if (!held) domain.shared_info_mfn = 0;
  return held;
}

void report_destroyed(const Domain& domain) {
  printk("Domain %u destroyed: %lu frames back to the allocator", domain.id, domain.frames_given_back);
  if (domain.module_frames_unowned) printk(", %lu boot-module frames unowned", domain.module_frames_unowned);
  printk("\n");
}

void trap_frame_from(const cpu_user_regs& regs, TrapFrame& frame) {
  frame = TrapFrame{};
  frame.r15 = regs.r15, frame.r14 = regs.r14, frame.r13 = regs.r13, frame.r12 = regs.r12;
  frame.r11 = regs.r11, frame.r10 = regs.r10, frame.r9 = regs.r9, frame.r8 = regs.r8;
  frame.rbp = regs.rbp, frame.rdi = regs.rdi, frame.rsi = regs.rsi, frame.rdx = regs.rdx;
  frame.rcx = regs.rcx, frame.rbx = regs.rbx, frame.rax = regs.rax;
  frame.rip = regs.rip;
  frame.rsp = regs.rsp;
  frame.cs = regs.cs;  // RPL 3 already (fix_guest_selectors)
  frame.ss = regs.ss;
  // IOPL is virtual (Xen keeps it apart), interrupts stay on in hardware, no V86 or NT tricks.
  frame.rflags = (regs.rflags & rflags::defined & ~(rflags::iopl | rflags::virtual_8086 | rflags::nested_task)) |
                 rflags::interrupt | rflags::reserved_one;
}

void user_regs_from(const TrapFrame& frame, unsigned iopl, cpu_user_regs& regs) {
  regs.r15 = frame.r15, regs.r14 = frame.r14, regs.r13 = frame.r13, regs.r12 = frame.r12;
  regs.r11 = frame.r11, regs.r10 = frame.r10, regs.r9 = frame.r9, regs.r8 = frame.r8;
  regs.rbp = frame.rbp, regs.rdi = frame.rdi, regs.rsi = frame.rsi, regs.rdx = frame.rdx;
  regs.rcx = frame.rcx, regs.rbx = frame.rbx, regs.rax = frame.rax;
  regs.rip = frame.rip;
  regs.rsp = frame.rsp;
  regs.cs = uint16_t(frame.cs);
  regs.ss = uint16_t(frame.ss);
  regs.rflags = frame.rflags | (uint64_t(iopl) << 12);
}

// The first context's page tables: the kernel L4 (and the user one) become the vCPU's base
// pointers, validated as L4s and referenced as Xen's guest_table is (a type ref, not a pin).
// A frame that is not the domain's, or cannot be an L4 (another type, or its entries refused),
// is -EINVAL, as Xen's get_page_from_mfn and get_page_type answer.
long take_page_tables(Vcpu& vcpu, const vcpu_guest_context& context) {
  mm::MmuContext mmu = domain_mmu::context(*vcpu.domain);
  mm::VcpuBasePointers& bases = vcpu.bases;
  mmuext_op_t op{};
  op.cmd = MMUEXT_NEW_BASEPTR;
  op.arg1.mfn = control::kernel_l4_of(context);
  if (op.arg1.mfn == 0) return -XEN_EINVAL;
  if (long rc = mm::mmuext_op(mmu, bases, op)) return rc;
  if (control::user_l4_of(context) == 0) return 0;
  op.cmd = MMUEXT_NEW_USER_BASEPTR;
  op.arg1.mfn = control::user_l4_of(context);
  if (long rc = mm::mmuext_op(mmu, bases, op)) {
    mm::release_base_pointers(boot_memory::frame_table(), bases);
    return rc;
  }
  return 0;
}
}  // namespace

void set_page_table_write_mode(PageTableWriteMode mode) { write_mode = mode; }

xen_domctl_createdomain default_config(uint32_t max_vcpus) {
  xen_domctl_createdomain config{};
  config.max_vcpus = max_vcpus;
  config.max_evtchn_port = Domain::max_event_channels - 1;
  config.max_grant_frames = -1;
  config.max_maptrack_frames = -1;
  config.grant_opts = XEN_DOMCTL_GRANT_version(1);
  return config;
}

long create_with_id(domid_t id, const xen_domctl_createdomain& config, bool privileged, Domain*& created) {
  control::DomainConfig checked;
  if (long error = control::check_create_config(config, privileged && id == 0, checked)) return error;
  Domain* domain = domains::create(id, privileged);
  if (!domain) return domains::find(id) ? -XEN_EEXIST : -XEN_ENOMEM;  // no slot: Xen's alloc_domain_struct
  domain->config = checked;
  domain->max_vcpus = checked.max_vcpus;  // the vCPUs themselves come with max_vcpus
  __builtin_memcpy(domain->handle, config.handle, sizeof(domain->handle));
  domain->pt_write_mode = write_mode;
  domain->controller_pause.pause();  // Xen's domain_create: the toolstack's first unpause starts it
  bool ready =
      shared_info_page::create(*domain) && (!detaches_tables(write_mode) || writable_page_tables::enable(*domain));
  if (!ready) {
    destroy(*domain, nullptr, false);
    return -XEN_ENOMEM;
  }
  created = domain;
  return 0;
}

long create(uint32_t requested, const xen_domctl_createdomain& config, Domain*& created) {
  control::DomidAllocator::Choice choice = domids.choose(requested, id_in_use, nullptr);
  if (choice.error) return choice.error;
  return create_with_id(choice.id, config, false, created);
}

long create_vcpus(Domain& target) {
  if (target.dying()) return 0;
  for (unsigned id = 0; id < target.max_vcpus; ++id) {
    Vcpu& vcpu = target.vcpus[id];
    if (vcpu.created) continue;
    vcpu.created = true;
    scheduler::vcpu_down(vcpu);
  }
  return 0;
}

long destroy(Domain& target, const Domain* caller, bool preemptible) {
  const bool was_alive = target.teardown.alive();
  if (long error = target.teardown.begin(&target == caller)) return error;
  if (was_alive) target.stop_reported = true;  // it leaves without a "shut down" line
  target.pages.closed = true;                  // dying: no new frame (Xen's assign_pages)
  scheduler::wait_until_off_cpu(target);       // no CPU runs it or holds its tables any more
  bool progressed = false;
  for (control::TeardownWork work = target.teardown.next(target.pages.count); work.step != control::TeardownStep::done;
       work = target.teardown.next(target.pages.count)) {
    if (preemptible && progressed && hypercall::preemption_requested()) return hypercall::restart;
    carry_out(target, work);
    target.teardown.finished(work);
    progressed = true;
  }
  // Dead now: dom0's toolstack is told (VIRQ_DOM_EXC), as Xen's domain_kill tells it.
  if (progressed) event_channels::raise_domain_exception();
  if (frames_still_held(target) == 0) {
    if (progressed || target.frames_given_back) report_destroyed(target);
    domains::release(target);
  } else if (progressed) {
    printk("Domain %u dead: %lu of its frames still referenced elsewhere\n", target.id, target.tot_pages);
  }
  return 0;
}

void reap_dead() {
  domains::for_each([](Domain& domain) {
    if (domain.teardown.state() != control::Dying::dead) return;
    if (frames_still_held(domain) != 0) return;
    report_destroyed(domain);
    domains::release(domain);
  });
}

long set_vcpu_context(Vcpu& vcpu, vcpu_guest_context& context) {
  Domain& target = *vcpu.domain;
  if (target.dying()) return -XEN_EINVAL;  // its frames are going (Xen: the CR3 page is not its any more)
  // Its base pointers are read by other vCPUs' detaches (writable_page_tables::on_several_cpus),
  // and a second vCPU with a context puts the domain on several CPUs.
  writable_page_tables::MmuOperation operation(target);
  control::fix_guest_selectors(context);
  control::VcpuTablesNow now{vcpu.initialised, vcpu.bases.kernel_mfn, vcpu.bases.user_mfn, vcpu.gdt_entries,
                             vcpu.gdt_frames,  vcpu.ldt.base,         vcpu.ldt.entries};
  if (long error = control::check_vcpu_context(context, vcpu.id, now)) return error;
  if (!vcpu.initialised) {
    if (vcpu.id == 0) target.vm_assist = context.vm_assist;
    // Xen's order: the GDT (pv_set_gdt), then the page tables; a refused CR3 drops the GDT again.
    if (long error = descriptor_tables::set_gdt_frames(vcpu, context.gdt_frames, context.gdt_ents)) return error;
    if (long error = take_page_tables(vcpu, context)) {
      descriptor_tables::destroy_gdt(vcpu);
      return error;
    }
    domain_mmu::flush_after_type_change();  // a frame that became a table may still be in a TLB as data
    vcpu.ldt = context.ldt_ents ? ldt_rules::Ldt{context.ldt_base, uint32_t(context.ldt_ents)} : ldt_rules::Ldt{};
  }
  trap_frame_from(context.user_regs, vcpu.registers);
  vcpu.iopl = unsigned(context.user_regs.rflags & rflags::iopl) >> 12;
  vcpu.kernel_mode = context.flags & VGCF_in_kernel;
  __builtin_memcpy(vcpu.trap_table, context.trap_ctxt, sizeof(vcpu.trap_table));
  vcpu.kernel_ss = context.kernel_ss;
  vcpu.kernel_sp = context.kernel_sp;
  vcpu.event_callback = context.event_callback_eip;
  vcpu.failsafe_callback = context.failsafe_callback_eip;
  vcpu.syscall_callback = context.syscall_callback_eip;
  vcpu.syscall_disables_events = context.flags & VGCF_syscall_disables_events;
  vcpu.fs_base = context.fs_base;
  vcpu.gs_base_kernel = context.gs_base_kernel;
  vcpu.gs_base_user = context.gs_base_user;
  vcpu.fpu_switched_out = context.ctrlreg[0] & cr0_ts;
  if (context.flags & VGCF_i387_valid)
    __builtin_memcpy(vcpu.fpu_state, context.fpu_ctxt.x, sizeof(vcpu.fpu_state));
  else
    fpu::initial_state(vcpu.fpu_state);
  vcpu.initialised = true;
  if (domains::vcpus_on_every_cpu() && !target.several_vcpus) {
    unsigned initialised = 0;
    target.for_each_vcpu([&](const Vcpu& each) { initialised += each.initialised; });
    if (initialised > 1) __atomic_store_n(&target.several_vcpus, true, __ATOMIC_RELEASE);
  }
  vcpu.fpu_initialised = context.flags & VGCF_i387_valid;
  vcpu.has_run = false;
  vcpu.online = context.flags & VGCF_online;
  if (vcpu.online)
    scheduler::vcpu_up(vcpu);
  else
    scheduler::vcpu_down(vcpu);
  return 0;
}

long initialise_vcpu(Vcpu& vcpu, vcpu_guest_context& context) {
  if (vcpu.initialised) return -XEN_EEXIST;
  return set_vcpu_context(vcpu, context);
}

long reset_vcpu(Vcpu& vcpu) {
  writable_page_tables::MmuOperation operation(*vcpu.domain);
  mm::release_base_pointers(boot_memory::frame_table(), vcpu.bases);
  descriptor_tables::destroy_gdt(vcpu);
  vcpu.ldt = {};
  vcpu.debug = {};
  vcpu.time_area = 0;
  vcpu.initialised = false;
  vcpu.online = false;
  scheduler::vcpu_down(vcpu);
  return 0;
}

long get_vcpu_context(const Vcpu& vcpu, vcpu_guest_context& context) {
  if (!vcpu.initialised) return -XEN_ENODATA;
  context = vcpu_guest_context{};
  __builtin_memcpy(context.fpu_ctxt.x, vcpu.fpu_state, sizeof(context.fpu_ctxt.x));
  context.flags = (vcpu.fpu_initialised ? VGCF_i387_valid : 0) | (vcpu.kernel_mode ? VGCF_in_kernel : 0) |
                  (vcpu.online ? VGCF_online : 0) | (vcpu.syscall_disables_events ? VGCF_syscall_disables_events : 0);
  user_regs_from(vcpu.registers, vcpu.iopl, context.user_regs);
  // Until it runs, rflags are what the context gave (Xen keeps them so; the CPU's always-one
  // bit 1 appears once a trap frame holds them).
  if (!vcpu.has_run) context.user_regs.rflags &= ~uint64_t(rflags::reserved_one);
  __builtin_memcpy(context.trap_ctxt, vcpu.trap_table, sizeof(context.trap_ctxt));
  for (unsigned i = 0; i < Vcpu::max_gdt_frames; ++i) context.gdt_frames[i] = vcpu.gdt_frames[i];
  context.gdt_ents = vcpu.gdt_entries;
  context.kernel_ss = vcpu.kernel_ss;
  context.kernel_sp = vcpu.kernel_sp;
  context.ldt_base = vcpu.ldt.base;
  context.ldt_ents = vcpu.ldt.entries;
  context.ctrlreg[0] = vcpu.fpu_switched_out ? cr0_ts : 0;
  context.ctrlreg[3] = vcpu.bases.kernel_mfn << 12;  // Xen's xen_pfn_to_cr3
  context.ctrlreg[1] = vcpu.bases.user_mfn << 12;
  context.event_callback_eip = vcpu.event_callback;
  context.failsafe_callback_eip = vcpu.failsafe_callback;
  context.syscall_callback_eip = vcpu.syscall_callback;
  context.vm_assist = vcpu.domain->vm_assist;
  context.fs_base = vcpu.fs_base;
  context.gs_base_kernel = vcpu.gs_base_kernel;
  context.gs_base_user = vcpu.gs_base_user;
  return 0;
}

long hypercall_init(Domain& target, uint64_t gmfn) {
  mm::MmuContext mmu = domain_mmu::context(target);
  const mm::PageInfo* frame = mmu.frames.find(gmfn);
  if (!frame || frame->is_free() || frame->owner() != target.id) return -XEN_EINVAL;
  mm::GuestFrameWriteRef hold;  // refused now only for the frame's type: Xen's -EPERM
  if (domain_mmu::take_write_hold(target, hold, gmfn) != 0) return -XEN_EPERM;
  hypercall_page::fill(machine::to_virtual<uint8_t>(gmfn * page));
  domain_mmu::release_write_hold(hold);
  return 0;
}
}  // namespace domain_lifecycle
