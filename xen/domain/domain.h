// Domains and their virtual CPUs: the state the PV ABI gives a guest. A fixed table of
// domain slots (domains::max_domains), each domain with up to control::max_vcpus_per_domain
// vCPUs (createdomain's max_vcpus), run on the physical CPUs by sched/scheduler. Ids are Xen's
// (1 .. DOMID_FIRST_RESERVED - 1 for domUs, given by createdomain): a slot holds whichever id
// it was given, so slot and id differ.
#pragma once
#include <stdint.h>
#include "abi/xen_abi.h"
#include <xen/xen.h>
#include <xen/event_channel.h>
#include "arch/x86/cpu/cpu_mask.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/trap_frame.h"
#include "arch/x86/layout.h"
#include "control/domain_config.h"
#include "control/domain_teardown.h"
#include "console/output_limit.h"
#include "control/pause_count.h"
#include "domain/event_channel_table.h"
#include "domain/event_fifo.h"
#include "memory/domain_memory_map.h"
#include "mm/frame_table.h"
#include "mm/guest_frame_write_ref.h"
#include "mm/vcpu_base_pointers.h"
#include "pv/rules/debug_registers.h"
#include "pv/rules/ldt_rules.h"
#include "pv/rules/msr_emulation.h"
#include "ptwr/adaptive_policy.h"
#include "ptwr/writable_pagetables.h"

struct Domain;

// Xen's runstate (RUNSTATE_running/runnable/blocked/offline) and when it was entered, as the
// scheduler's trace records report it, and the time spent in each state before that (Xen's
// vcpu_runstate_info.time: getvcpuinfo and getdomaininfo report the running time).
struct Runstate {
  unsigned state = 1;  // RUNSTATE_runnable until first scheduled
  uint64_t entry_ns = 0;
  uint64_t time_ns[4] = {};
};

struct Vcpu {
  Domain* domain = nullptr;
  unsigned id = 0;
  TrapFrame registers{};                  // guest state while the hypervisor runs something else
  bool kernel_mode = true;                // guest kernel vs guest user (both run in ring 3)
  mm::VcpuBasePointers bases;             // L4s of kernel and user mode (user 0 = none), with refs
  uint64_t kernel_ss = 0, kernel_sp = 0;  // from stack_switch: where bounces from user land
  trap_info_t trap_table[256]{};
  uint64_t event_callback = 0, failsafe_callback = 0, syscall_callback = 0, syscall32_callback = 0;
  uint64_t sysenter_callback = 0;  // CALLBACKTYPE_sysenter (pv/software_interrupt)
  bool syscall_disables_events = false, syscall32_disables_events = false, sysenter_disables_events = false;
  uint64_t fs_base = 0, gs_base_kernel = 0, gs_base_user = 0;
  msr_emulation::VcpuMsrs msrs;   // its vMCE state and MISC_FEATURES_ENABLES (pv/rules/msr_emulation)
  bool fpu_switched_out = false;  // guest asked CR0.TS set (fpu_taskswitch)
  // Its CR4 as it reads it (Xen's ctrlreg[4], pv/rules/control_registers): its own TSD, DE,
  // FSGSBASE and OSXSAVE choices; the hardware's visible bits are added when it is read.
  uint64_t guest_cr4 = 0;
  // HYPERVISOR_set_gdt's frames (each with a general and a SegmentDescriptor type reference)
  // and its entry count (domain/descriptor_tables): 0 entries = only Xen's reserved selectors.
  static constexpr unsigned max_gdt_frames = 14;  // FIRST_RESERVED_GDT_PAGE
  uint64_t gdt_frames[max_gdt_frames]{};
  unsigned gdt_entries = 0;
  ldt_rules::Ldt ldt;            // MMUEXT_SET_LDT's LDT: recorded, never loaded (pv/rules/ldt_rules.h)
  debug_registers::State debug;  // set_debugreg's values, on the CPU while it runs (domain/debug_register_cpu.h)
  // Its virtual IOPL (0..3, pv/rules/virtual_iopl.h): PHYSDEVOP_set_iopl's, or with
  // VMASST_TYPE_architectural_iopl the IOPL of its last HYPERVISOR_iret frame.
  unsigned iopl = 0;
  bool blocked = false;
  // Created by XEN_DOMCTL_max_vcpus (Xen's vcpu_create): createdomain only sizes the array.
  bool created = false;
  // Xen's is_initialised (a context was set: setvcpucontext, VCPUOP_initialise or the boot
  // builder) and the opposite of VPF_down (VGCF_online in that context, VCPUOP_up / down). A
  // vCPU runs only when both hold.
  bool initialised = false;
  bool online = false;
  // Xen's fpu_initialised, as getvcpucontext reports it (VGCF_i387_valid): the context gave an
  // FPU state, or the vCPU has run (Xen: used the FPU; here loading a vCPU loads its FPU).
  bool fpu_initialised = false;
  bool has_run = false;            // loaded on the CPU at least once since its context was set
  uint64_t timer_deadline_ns = 0;  // 0 = no singleshot timer
  // SCHEDOP_poll (Xen's poll_mask bit and poll_evtchn): blocked until one of the ports it polls
  // becomes pending (poll_port; -1: any of the domain's ports, for more than one port or none),
  // an event reaches it, or poll_deadline_ns (system time, 0 = none) passes.
  bool polling = false;
  int32_t poll_port = 0;
  uint64_t poll_deadline_ns = 0;
  // The poll is over (a polled port became pending, its timeout passed or was past already).
  void end_poll() {
    polling = false;
    poll_port = 0;
    poll_deadline_ns = 0;
  }
  // Xen's periodic timer: it runs only while the vCPU is on the CPU (sched/timers); the last
  // event's time, and the next one's (last + period).
  uint64_t periodic_period_ns = 0;
  uint64_t last_periodic_ns = 0;
  uint64_t next_periodic_ns = 0;
  Runstate runstate;
  // The physical CPU it runs on, or ran on last and whose run queue it waits in (Xen's
  // v->processor; XEN_DOMCTL_getvcpuinfo's cpu). Changed only by the scheduler, under the
  // hypervisor lock (sched/hypervisor_lock), and only while the vCPU is off every CPU.
  unsigned processor = 0;
  // Xen's cpu_hard_affinity and cpu_soft_affinity, XEN_DOMCTL_setvcpuaffinity's masks
  // (control/vcpu_affinity.h): the CPUs it may run on (the scheduler never puts it elsewhere;
  // one whose affinity drops its CPU moves at its next schedule) and those it prefers. At
  // creation every CPU the firmware lists, dom0's hard mask the online ones (Xen's defaults; the
  // same when every CPU is up). The hard mask may name CPUs that are not online (Xen keeps them)
  // but always names an online one: the scheduler honours hard_affinity & the online CPUs.
  // Under the hypervisor lock.
  CpuMask hard_affinity = CpuMask::first(MAX_CPUS);
  CpuMask soft_affinity = CpuMask::first(MAX_CPUS);
  // Asked to leave its CPU at its next return to the guest (a yield, its slice ended, a pause,
  // an affinity change: sched/schedule_check). Set by any CPU, read and cleared by its own, under
  // the hypervisor lock.
  bool reschedule_requested = false;
  // The CPUs it has run on (the scheduler adds each; the machine's summary prints them).
  CpuMask ran_on;
  // VCPUOP_register_runstate_memory_area: where the guest wants its vcpu_runstate_info
  // (0: nowhere), rewritten whenever the vCPU is switched in or out (domain/runstate_area).
  uint64_t runstate_area = 0;
  // VCPUOP_register_vcpu_time_memory_area: a second vcpu_time_info (0: none; domain/shared_info).
  uint64_t time_area = 0;
  // x87/SSE state while another vCPU owns the FPU (fxsave format; the CPU has no XSAVE).
  alignas(16) uint8_t fpu_state[512]{};
  uint64_t virq_to_port[NR_VIRQS]{};

  // Where the hypervisor reads and writes the vCPU's vcpu_info: its slot in shared_info, or
  // the guest's own frame once VCPUOP_register_vcpu_info moved it (domain/vcpu_info_area).
  // Inline (below Domain): every return to a guest reads it.
  vcpu_info_t* info() const;
  vcpu_info_t* registered_info = nullptr;
  mm::GuestFrameWriteRef registered_info_frame;  // the frame of registered_info, held while it is used
  // The L4 and GS base of the mode the guest is in (kernel and user each have their own).
  uint64_t active_table_mfn() const { return kernel_mode ? bases.kernel_mfn : bases.user_mfn; }
  uint64_t active_gs_base() const { return kernel_mode ? gs_base_kernel : gs_base_user; }
};

enum class DomainState { running, shut_down, crashed };

// What happens when the guest writes one of its L1 tables directly (design notes, section 5):
// every write is emulated, or the table is detached and written natively (writable
// pagetables), or per L1 one or the other (adaptive: ptwr/adaptive_policy.h). Writes to L2-L4
// tables are always emulated.
enum class PageTableWriteMode { emulate, writable, adaptive };
// The modes that detach tables (and need the snapshot storage).
constexpr bool detaches_tables(PageTableWriteMode mode) { return mode != PageTableWriteMode::emulate; }
constexpr const char* page_table_write_mode_name(PageTableWriteMode mode) {
  return mode == PageTableWriteMode::writable   ? "writable"
         : mode == PageTableWriteMode::adaptive ? "adaptive"
                                                : "emulate";
}

struct Domain {
  domid_t id = 0;
  unsigned slot = 0;  // where it is in the domain table (the scheduler's round-robin order)
  bool privileged = false;
  DomainState state = DomainState::running;
  unsigned shutdown_reason = 0;
  uint64_t tot_pages = 0, max_pages = 0;
  // Every frame it owns (Xen's d->page_list), kept by the frame table: what destroydomain
  // visits, so its cost follows the domain's size, not the machine's.
  mm::PageList pages;
  uint64_t shared_info_mfn = 0;
  shared_info_t* shared_info = nullptr;
  unsigned long vm_assist = 0;
  // Whether the kernel's stores through read-only mappings of its page tables are taken over
  // (emulated, or detached under ptwr=writable) rather than bounced as page faults: Xen's
  // VMASST_TYPE_writable_pagetables, which a PV kernel enables for itself (Linux does). The
  // hardware domain needs no assist: Xen's fault handler sends its write faults on present
  // pages to pv_ro_page_fault for the read-only MMIO ranges, which emulates page-table writes
  // as well (traps.c, pv/ro-page-fault.c).
  constexpr bool takes_table_writes() const {
    return privileged || (vm_assist & (1UL << VMASST_TYPE_writable_pagetables));
  }
  PageTableWriteMode pt_write_mode = PageTableWriteMode::emulate;
  // Xen's dirty_cpumask: the CPUs whose TLBs may hold translations of its address spaces. A
  // CPU joins when it loads one of its vCPUs' tables and leaves when it loads another
  // domain's or the idle tables (a CR3 load is a full flush here: no PGE, no PCIDs). Each
  // CPU sets and clears only its own bit, by atomic or/and (sched/context_switch); readers
  // (domain_mmu::dirty_cpus) load it atomically.
  uint64_t dirty_cpu_bits = 0;
  // The control domain's pauses (XEN_DOMCTL_pausedomain): a paused domain is not scheduled.
  control::ControllerPauseCount controller_pause;
  uint8_t handle[sizeof(xen_domain_handle_t)]{};  // the toolstack's UUID (setdomainhandle)
  uint32_t max_vcpus = 1;                         // fixed at creation (createdomain), 1 .. max_vcpus_per_domain
  control::DomainConfig config;                   // what createdomain was given, checked
  control::DomainTeardown teardown;               // alive, dying (destroydomain under way), dead
  // A dead domain whose frames another holder still references (a foreign mapping) stays,
  // dead, until they are released: its page list is then empty (domain_lifecycle::reap_dead).
  uint64_t frames_held = 0;                                   // how many it still had when last looked at, dead
  uint64_t frames_given_back = 0, module_frames_unowned = 0;  // by its destroydomain, for the report
  ptwr::WritablePagetables writable_pagetables;
  uint64_t ptwr_snapshot_mfns[2]{};  // the hypervisor frames holding its two snapshots (0: none)
  // A domain whose vCPUs run on several CPUs (writable_page_tables::on_several_cpus): its
  // detaches, and the cross-CPU flushes they asked for (at the detach after an unlink, at
  // reattach); atomic adds, reported when it stops (summary).
  uint64_t ptwr_shared_detaches = 0, ptwr_shared_flush_calls = 0;
  // Set (atomically, never cleared) when a second vCPU of it is given a context with guests on
  // every CPU (domain_lifecycle::set_vcpu_context, inside its MmuOperation): from then on its
  // vCPUs may run on several CPUs at once (writable_page_tables::on_several_cpus).
  bool several_vcpus = false;
  ptwr::AdaptivePolicy adaptive_ptwr;  // ptwr=adaptive: which path each L1's writes take
  // Its vCPUs, by id. Each knows its domain and id from the domain's creation on; those below
  // max_vcpus exist once XEN_DOMCTL_max_vcpus made them (Vcpu::created), the rest never do.
  // Where no vCPU is named (a domain's own events before any binding), vCPU 0 is meant, as Xen.
  static constexpr unsigned vcpu_capacity = control::max_vcpus_per_domain;
  static_assert(vcpu_capacity <= evtchn_fifo::kMaxVcpus, "a FIFO control block for every vCPU");
  Vcpu vcpus[vcpu_capacity];
  bool stop_reported = false;  // the "Domain N shut down" line was printed
  // Xen's creation_finished: set at the first unpause by the toolstack (a boot-built domain is
  // born finished). What only a domain being built may be told is refused after it.
  bool creation_finished = false;
  uint32_t unemulated_reported = 0;  // lines printed about faults not emulated (pv/rules/unemulated_report)
  // An unprivileged domain's console output, printed a line at a time with its "(dN) " prefix.
  static constexpr unsigned console_line_capacity = 160;
  char console_line[console_line_capacity + 1]{};  // room for the terminator
  unsigned console_line_length = 0;
  // How much it may make the console print (domain_console/console_output): its text, the hypervisor's
  // messages it provokes, and the lines that report what these limits dropped.
  console::OutputLimit console_text_limit{console::guest_text_burst, console::guest_text_ns_per_byte};
  console::OutputLimit console_message_limit{console::guest_message_burst, console::guest_message_ns_apart};
  console::OutputLimit console_drop_reports{1, console::guest_message_ns_apart};

  // Event channels (domain/event_channel_table: the rules; event/event_channels: the glue).
  using EventChannel = evtchn::Channel;
  static constexpr unsigned max_event_channels = 1024;
  EventChannel event_channels[max_event_channels]{};
  unsigned valid_event_channels = evtchn::first_bucket_end(max_event_channels);  // the buckets Xen would have
  evtchn::Table channel_table() {
    return evtchn::Table{event_channels, max_event_channels, id, &valid_event_channels, dying()};
  }
  // The FIFO ABI's queues once the guest asked for them (EVTCHNOP_init_control): delivery then
  // goes there instead of the 2-level bitmaps (domain/event_fifo, event/event_channels_fifo).
  evtchn_fifo::DomainFifo fifo;
  static_assert(max_event_channels <= evtchn_fifo::kPortCapacity);
  // The console ring of a domain built at boot (start_info->console.domU), drained by the
  // hypervisor when the domain notifies `console_port` (domain_console/guest_console). Held from
  // attach until teardown: the hypervisor stores the ring's out_cons into it.
  mm::GuestFrameWriteRef console_ring;
  evtchn_port_t console_port = 0;
  uint32_t console_out_cons = 0;  // the hypervisor's own consumer index (the page's is the guest's to scribble)
  // XENMEM_set_memory_map's per-domain e820 (hypercall/memory_op): none set is Xen's -ENOSYS.
  memory::DomainMemoryMap memory_map;

  // Running: neither shut down nor crashed, nor being destroyed.
  bool alive() const { return state == DomainState::running && teardown.alive(); }
  bool dying() const { return !teardown.alive(); }
  bool paused() const { return controller_pause.paused(); }
  // Xen's domain_vcpu: the vCPU with this id if the domain has it (made by max_vcpus), or null.
  Vcpu* vcpu(uint64_t id) { return id < max_vcpus && vcpus[id].created ? &vcpus[id] : nullptr; }
  const Vcpu* vcpu(uint64_t id) const { return id < max_vcpus && vcpus[id].created ? &vcpus[id] : nullptr; }
  // Every vCPU it has, in id order (Xen's for_each_vcpu).
  template <typename Visit>
  void for_each_vcpu(Visit visit) {
    for (unsigned i = 0; i < max_vcpus; ++i)
      if (vcpus[i].created) visit(vcpus[i]);
  }
  template <typename Visit>
  void for_each_vcpu(Visit visit) const {
    for (unsigned i = 0; i < max_vcpus; ++i)
      if (vcpus[i].created) visit(vcpus[i]);
  }
};

inline vcpu_info_t* Vcpu::info() const {
  return registered_info ? registered_info : &domain->shared_info->vcpu_info[id];
}

namespace domains {
// The domain slots. Each Domain holds its event-channel table, FIFO queue state and its 8
// vCPUs' state (about 75 KiB), so the table is kept modest: 32 slots, about 2.3 MiB of .bss
// (raw storage, each slot constructed when created), dom0 included.
// Ids are independent of slots (createdomain chooses them as Xen does); a slot is reused once
// its domain is gone.
constexpr unsigned max_domains = 32;

// The vCPU whose state this CPU holds; null while the CPU idles. Inline: every trap asks. One
// per CPU, indexed by per_cpu::this_cpu(); each CPU writes only its own (under the hypervisor
// lock), other CPUs read it under that lock (sched/scheduler's placement).
namespace detail {
extern Vcpu* running[MAX_CPUS];
// Whether guests run on every online CPU (sched/scheduler, the boot option sched_smp=): set
// once at boot, before any guest runs. Off: every vCPU runs on CPU 0, as before.
extern bool vcpus_on_every_cpu;
}  // namespace detail
inline bool vcpus_on_every_cpu() { return detail::vcpus_on_every_cpu; }
// This CPU's index into the scheduler's per-CPU arrays: per_cpu::this_cpu() with guests on
// every CPU, else 0 (only CPU 0 runs guests), which costs a flag test rather than the stack
// arithmetic on every trap.
inline unsigned scheduling_cpu() { return vcpus_on_every_cpu() ? per_cpu::this_cpu() : 0; }
inline Vcpu* current() {
  // Written so that with sched_smp=0 it is a flag test and one load (an index computed either
  // way cost three more instructions on every use).
  if (vcpus_on_every_cpu()) [[unlikely]]
    return detail::running[per_cpu::this_cpu()];
  return detail::running[0];
}
inline Vcpu* running_on(unsigned cpu) { return detail::running[cpu]; }
inline void set_current(Vcpu* vcpu) { detail::running[scheduling_cpu()] = vcpu; }
// At boot, once the frame table exists and before any domain does: tells the floors below what
// they need to know of the domains (the frame table: whose page list a frame joins and what a
// released frame does to its domain; the trace records: who runs).
void init();
Domain* dom0();
// A new domain in a free slot, its vCPUs not yet made (max_vcpus does); null when no slot is
// free or `id` is taken or reserved. The rules createdomain applies first are domain_lifecycle's.
Domain* create(domid_t id, bool privileged);
// Gives the slot back (the domain is dead and nothing refers to it any more).
void release(Domain& domain);
Domain* find(domid_t id);
// Domain table slot `index` (0..max_domains-1) if it holds a domain: for iteration in a fixed
// order, which the round-robin scheduler relies on (slot order, not id order).
Domain* at(unsigned index);
bool any_alive();
// Whether some domain can still run: alive and unpaused, or paused while a privileged domain
// is alive to unpause it. When none can, the machine ends.
bool any_can_run();
template <typename Visit>
void for_each(Visit visit) {
  for (unsigned i = 0; i < max_domains; ++i)
    if (Domain* domain = at(i)) visit(*domain);
}
// Stops a domain for good with a message; the hypervisor carries on.
void crash(Domain& domain, const char* why);
void shutdown(Domain& domain, unsigned reason);
// Who is told that a domain crashed or shut down (Xen's VIRQ_DOM_EXC to the control domain's
// toolstack): the event channels, a floor above the domains, say so at boot.
using StopNotifier = void (*)();
void set_stop_notifier(StopNotifier notify);
}  // namespace domains
