#pragma once
// The fuzzing domain's pure part (fuzz/fuzz*.cpp run it): what the fuzzer may aim at (the
// Pool), its options, and the operations it generates. Generation is pure and deterministic
// (a function of the pool, the options and Random::for_operation(seed, op)), so the host unit
// tests check the rules that keep the fuzzer alive on every generated operation:
//
//  - destructive writes (mmu_update requests, direct stores, CLEAR_PAGE/COPY_PAGE, M2P updates)
//    go only to the fuzzer's scratch frames and slots; protected tables get only values the
//    hypervisor must refuse (or the value they already hold);
//  - any entry that names one of our frames outside the scratch set is read-only, so nothing the
//    fuzzer maps lets a hypervisor write (through a pointer argument) reach the kernel;
//  - the kernel base pointer only ever names the kernel L4, a pinned clone of it (its kernel
//    slot is never written), or a frame that cannot be an L4;
//  - pointers the hypervisor may write through are never in protected memory; lists it reads
//    requests from are only in the operation's own buffer;
//  - hypercalls that would end or stall the domain (shutdown, watchdog, vCPU down, blocking
//    with no timer, closing the kernel's event channels...) are never issued with arguments
//    that could succeed, judged on the low 32 bits too (a hypervisor that truncates must not
//    turn a hostile value into a shutdown).
#include <stddef.h>
#include <stdint.h>

#include "fuzz/generator/fuzz_random.h"

namespace lib::fuzz {

// ---- Options -------------------------------------------------------------------------------

// What an operation may exercise; each can be left out with fuzz_skip=<name>[+<name>...].
enum Feature : unsigned {
  // Operation classes.
  kCall,       // random hypercalls (any number, random arguments)
  kMmu,        // structured mmu_update batches
  kMmuext,     // structured mmuext_op batches
  kVaMapping,  // update_va_mapping(_otherdomain)
  kMulticall,  // multicall batches of the above
  kPtwrite,    // direct stores into page tables (both PTE-write paths)
  kTouch,      // loads and stores through the fuzzed address range
  kIret,       // HYPERVISOR_iret with hostile frames (to a landing pad of ours)
  kRflags,     // hostile RFLAGS (NT, TF, AC, DF...) around a hypercall
  kSched,      // yield, block with a timer armed, timers
  kPorts,      // port I/O (dom0: only to ports the hypervisor must keep)
  kInsn,       // privileged / trapping instructions and software interrupts
  kHvFrames,   // the frames the hypervisor writes for us (console ring, shared_info, vCPU areas)
               // retyped, remapped and unmapped around the writes (fuzz/generator/fuzz_generate_hv.cpp)
  kDestroy,    // dom0: domains created, fed and destroyed while calls for them race the teardown
  kClassCount,
  // Hostile values inside the classes.
  kRaxHigh = kClassCount,  // hypercall numbers >= 2^32 (also multicall entry ops)
  kNested,                 // multicall entries that are multicall or iret
  kNt,                     // RFLAGS.NT
  kTf,                     // RFLAGS.TF
  kIretSelectors,          // iret frames with bad cs/ss
  kIretRip,                // iret frames with a non-canonical rip
  kIretRsp,                // iret frames with a bad rsp
  kIo,                     // entries mapping I/O frames (LAPIC, IO-APIC, beyond RAM)
  kHypervisorPointers,     // pointer arguments into the hypervisor's range
  kFuzzAreaPointers,       // pointer arguments into the fuzzed range (tables may be unhooked)
  kConsole,                // console_io writes (they print)
  kHugeCounts,             // batch counts >= 2^32
  kBasePointer,            // NEW_BASEPTR to a clone of the kernel L4
  kForeign,                // foreigndom / otherdomain values other than DOMID_SELF
  kHypervisorSlots,        // values for the hypervisor's L4 slots of the kernel L4
  kHugeTimers,             // timer periods of 2^62 ns and more (Xen refuses them)
  kAlias,                  // stores through read-only mappings of a table in the fuzzed range (and into their holder)
  kFeatureCount
};

const char* feature_name(Feature feature);
// Parses "nt+iret_selectors" into a mask of features (bit = 1 << Feature). Unknown names are
// reported through `unknown` (the first one), returning false.
bool parse_features(const char* text, uint64_t& mask, const char** unknown);

struct Options {
  uint64_t seed = 0;
  uint64_t start = 0;                 // first operation number
  uint64_t ops = 10000;               // how many operations
  uint64_t progress = 1000;           // a progress line every this many operations (0: none)
  uint64_t audit_every = 0;           // the frame audit every this many operations (0: only at the end)
  uint64_t audit_from = 0;            // ...from this operation on (to find, with fuzz_audit=1, where counts went wrong)
  uint64_t log_from = 1, log_to = 0;  // operations described before they run (empty: none)
  uint64_t skip = 0;                  // features left out (mask)
  // To cut one operation down to what makes it fail: only the steps of operation step_op
  // whose bit is set in step_mask run (a store sequence, or a multicall's entries).
  uint64_t step_op = ~0ull, step_mask = ~0ull;
  uint64_t only = 0;  // if not 0: the only operation classes (mask of classes)
  // fuzz_vcpus=<n>: the domain's vCPUs that run operation streams at once (fuzz/fuzz_smp.cpp).
  uint64_t vcpus = 1;
  bool enabled(Feature feature) const;
};

// Parses the fuzz_* words of a kernel command line ("fuzz=<seed>" must be present). False
// with a message in `error` (capacity bytes) on a bad value.
bool parse_options(const char* cmdline, Options& options, char* error, size_t capacity);
// "12" or "0x1f" or "1e6"-free plain numbers; false if not a number.
bool parse_number(const char* text, uint64_t& value);

// ---- What the fuzzer may aim at ------------------------------------------------------------

constexpr unsigned kMaxTables = 32;
constexpr unsigned kMaxData = 32;
constexpr unsigned kMaxProtectedSlots = 24;
constexpr unsigned kMaxProtectedFrames = 24;
constexpr unsigned kMaxOtherFrames = 24;
constexpr unsigned kMaxPorts = 16;  // several vCPUs: an IPI and a timer port each
constexpr unsigned kFuzzSlotCount = 2;
// The kernel's own L4 slot (0xffffffff80000000): kept in every clone of the kernel L4.
constexpr unsigned kKernelL4Slot = 511;
// The kernel L4 slots the fuzzer owns (their address ranges are the fuzzed range).
constexpr unsigned kFuzzL4Slots[kFuzzSlotCount] = {300, 301};
constexpr unsigned kFirstHypervisorSlot = 256, kLastHypervisorSlot = 271;

// A page-table slot the fuzzer must not change: where it is and what it holds now.
struct ProtectedSlot {
  uint64_t machine_address;
  uint64_t value;
  uint8_t level;    // 1..4
  bool maps_table;  // an L1 slot whose frame is a page table (RW must be refused)
  uint64_t va;      // for L1 slots: the address it maps (update_va_mapping), else 0
};

// A frame outside the scratch set, with what it is.
struct OtherFrame {
  uint64_t mfn;
  uint8_t level;  // protected table level (1..4), 0 for data/other
  // Mapped read-only only (the kernel's text page, the window's read-only page): no type of its own
  // refuses a table type, so a pin, a base pointer or an entry that could become a table
  // reference (an L2-L4 entry, or an L1 entry of a table retyped later) would have its
  // contents validated as a table, and Xen's L1 validation rewrites present entries in place
  // (adjust_guest_l1e) even when it then refuses: the kernel's code would change. Never named
  // so (entry_safe, check_mmuext).
  bool read_only = false;
};

// A frame the hypervisor writes on our behalf, and the kernel's own mapping of it (va, and the
// L1 slot holding it): the hv_frames class unmaps that mapping, retypes the frame and makes the
// hypervisor write it, then puts everything back. A correct hypervisor holds a writable type
// on a frame it writes (so the retyping is refused) or writes through our mappings (which no
// longer reach it): a table of ours must never change under it.
enum class HvFrameKind : uint8_t { console_ring, shared_info, runstate, time_area, hypercall_page, vcpu_info };
struct HvFrame {
  uint64_t mfn = 0;
  uint64_t va = 0;       // the kernel's mapping of it
  uint64_t slot_ma = 0;  // the L1 slot of that mapping
  HvFrameKind kind = HvFrameKind::console_ring;
  bool kernel_needs = false;  // the kernel cannot run a moment without its mapping (the hypercall page)
  bool read_only = false;     // mapped read-only only (kernel text): no type may be taken on it
  bool scratch = false;       // one of the scratch data frames (may be mapped writable anywhere)
};
constexpr unsigned kMaxHvFrames = 8;

// Consecutive machine frames [first, first + count).
struct FrameRun {
  uint64_t first = 0;
  uint64_t count = 0;
  constexpr bool contains(uint64_t mfn) const { return mfn >= first && mfn - first < count; }
};
constexpr unsigned kMaxOwnRuns = 4;

struct Pool {
  bool privileged = false;
  // The vCPUs running streams at once (Options::vcpus): the others' vCPUs and ports must stay
  // theirs (never taken down, their ports never moved, no area of theirs left registered).
  unsigned vcpus = 1;
  uint16_t domid = 0;         // our own domain id (0 for dom0; the boot domUs are 1..7)
  uint64_t max_ram_page = 0;  // XENMEM_maximum_ram_page
  // Our memory as runs of consecutive frames (the builder's one block, the initrd's frames
  // handed over apart from it); own_count is their total.
  FrameRun own_runs[kMaxOwnRuns] = {};
  unsigned own_run_count = 0;
  uint64_t own_count = 0;
  uint64_t shared_info_mfn = ~0ull;  // ours too: a store into it corrupts our own clock, nothing else
  // The kernel's text (write_protect_kernel_text): ours, mapped read-only only, so never named
  // where a table type could be taken (OtherFrame::read_only says why).
  FrameRun kernel_text[kMaxOwnRuns] = {};
  unsigned kernel_text_run_count = 0;

  // Scratch page-table frames (mapped read-only in the kernel's direct map at table_va):
  // tables [0, clone_count) are clones of the kernel L4 (pinned, slot 511 = the kernel's L3).
  uint64_t table_mfn[kMaxTables] = {};
  uint64_t table_va[kMaxTables] = {};
  uint8_t table_level[kMaxTables] = {};  // the level the fuzzer builds it as (1..4)
  unsigned table_count = 0;
  unsigned clone_count = 0;
  // Scratch data frames (mapped writable in the direct map at data_va).
  uint64_t data_mfn[kMaxData] = {};
  uint64_t data_va[kMaxData] = {};
  unsigned data_count = 0;
  // Slots of protected tables the fuzzer owns: the kernel L4's fuzz slots, and the direct-map
  // L1 slots of the scratch frames (index = table index, then kMaxTables + data index).
  uint64_t kernel_l4_mfn = 0;
  uint64_t fuzz_slot_ma[kFuzzSlotCount] = {};
  uint64_t direct_map_slot_ma[kMaxTables + kMaxData] = {};

  ProtectedSlot protected_slots[kMaxProtectedSlots] = {};
  unsigned protected_slot_count = 0;
  OtherFrame protected_frames[kMaxProtectedFrames] = {};  // our frames outside the scratch set
  unsigned protected_frame_count = 0;
  uint64_t hypervisor_mfns[kMaxOtherFrames] = {};  // the hypervisor's (its L4 slots' tables, low memory)
  unsigned hypervisor_mfn_count = 0;
  uint64_t foreign_mfns[kMaxOtherFrames] = {};  // RAM frames of no one or of another domain
  unsigned foreign_mfn_count = 0;
  uint16_t protected_ports[kMaxPorts] = {};  // event channels the kernel uses
  unsigned protected_port_count = 0;
  // The frames the hypervisor writes on our behalf (HvFrame), and the console's event channel
  // (a domU's; 0 for dom0, which has no ring).
  HvFrame hv_frames[kMaxHvFrames] = {};
  unsigned hv_frame_count = 0;
  uint32_t console_port = 0;

  // Memory the operation may use. The buffer is rewritten by every operation; the edge page is
  // followed by an unmapped page; text is printable; read_only is mapped read-only.
  uint8_t* buffer = nullptr;
  uint64_t buffer_va = 0;
  uint64_t buffer_size = 0;
  uint8_t* edge = nullptr;
  uint64_t edge_va = 0;      // one page; edge_va + 4096 is not mapped
  uint64_t unmapped_va = 0;  // a page nothing maps (no L1 for its 2 MiB either)
  uint64_t text_va = 0, text_size = 0;
  uint64_t read_only_va = 0;
  uint64_t kernel_image_va = 0, kernel_image_size = 0;  // read-only use only
  uint64_t stack_va = 0;                                // read-only use only
};

// ---- Operations ----------------------------------------------------------------------------

enum class OpKind : uint8_t {
  call,
  mmu,
  mmuext,
  va_mapping,
  multicall,
  ptwrite,
  touch,
  iret,
  rflags,
  sched,
  ports,
  insn,
  hv_frames,
  destroy
};

// CPU and domain state an operation may have changed, which the executor puts back after it.
enum Restore : uint32_t {
  kRestoreTraps = 1u << 0,       // set_trap_table(NULL) + the kernel's table
  kRestoreCallbacks = 1u << 1,   // the kernel's event/failsafe/syscall callbacks
  kRestoreFpu = 1u << 2,         // fpu_taskswitch(0)
  kRestoreSegments = 1u << 3,    // FS, GS bases and the user GS selector to 0
  kRestoreVmAssist = 1u << 4,    // every VM assist off again
  kRestoreTimers = 1u << 5,      // periodic timer stopped, one-shot cancelled
  kRestoreIopl = 1u << 6,        // PHYSDEVOP_set_iopl 0
  kRestoreBase = 1u << 7,        // MMUEXT_NEW_BASEPTR kernel L4
  kRestoreTbuf = 1u << 8,        // trace buffers disabled
  kRestoreDebugRegs = 1u << 9,   // DR7 = 0
  kRestoreLdt = 1u << 10,        // MMUEXT_SET_LDT 0
  kRestoreVcpuAreas = 1u << 11,  // runstate / time areas unregistered
  kRestoreNmi = 1u << 12,        // NMI callback unregistered
  kRestoreGdt = 1u << 13,        // set_gdt with no frames (the hypervisor's reserved entries only)
};

// A hypercall: rax and the argument registers (a multicall entry uses all six).
struct Call {
  uint64_t number = 0;
  uint64_t args[6] = {};
};

// Stores into a page table (arch probes: each may fault).
enum class StoreKind : uint8_t {
  mov64,
  mov32_low,
  mov32_high,
  mov16,
  mov8,
  xchg,
  cmpxchg,
  or64,
  and64,
  bts,
  btr,
  misaligned,
  rep_stos,
  movnti
};
// Through which address a store reaches the table: its read-only direct-map mapping, or a
// read-only mapping of it in the fuzzed range (the executor finds them: Step::alias picks one,
// else it falls back to the direct map). alias_holder stores instead into the L1 that holds
// that alias's mapping entry, at that entry (writable pagetables make it writable in place
// when the aliased table is detached).
enum class StorePath : uint8_t { direct_map, alias, alias_holder };

struct Step {
  // alias_load: a load through the `alias`-th read-only mapping of scratch table `table`;
  // rebuild: the scratch tables back towards the initial tree (the executor knows it).
  enum class Kind : uint8_t { store, load, touch_store, settle, alias_load, rebuild } kind = Kind::settle;
  StoreKind store = StoreKind::mov64;
  StorePath path = StorePath::direct_map;
  uint8_t alias = 0;     // which of the table's aliases (modulo how many there are)
  uint8_t table = 0;     // store / alias_load: scratch table index
  uint16_t slot = 0;     // store: entry index
  uint64_t value = 0;    // store / touch_store value
  uint64_t operand = 0;  // cmpxchg: expected value; bts/btr: bit; rep_stos: count
  uint64_t va = 0;       // load / touch_store address
};
constexpr unsigned kMaxSteps = 12;

// The frame HYPERVISOR_iret pops (Xen's struct iret_context), with where rip and rsp point
// resolved by the executor.
struct IretFrame {
  enum class Rip : uint8_t { landing, non_canonical, unmapped, hypervisor } rip = Rip::landing;
  enum class Rsp : uint8_t { landing_stack, misaligned, unmapped, non_canonical, hypervisor } rsp = Rsp::landing_stack;
  uint64_t rax = 0, r11 = 0, rcx = 0, flags = 0, cs = 0, rflags = 0, ss = 0;
  uint64_t number = 23;  // rax of the syscall: __HYPERVISOR_iret, or an alias of it
};

struct PortAccess {
  uint16_t port = 0;
  uint8_t width = 1;  // 1, 2, 4
  bool out = false;
  bool string = false;  // ins/outs (rep, with count)
  uint32_t value = 0;
  uint64_t count = 1;
  uint32_t iopl = 1;  // set with PHYSDEVOP_set_iopl before (restored after)
};

enum class InsnKind : uint8_t {
  int_n,
  int3,
  into,
  hlt,
  cli,
  sti,
  rdmsr,
  wrmsr,
  mov_cr3,
  mov_cr0_read,
  rdpmc,
  lgdt,
  lidt,
  invlpg,
  wbinvd,
  cpuid,
  ud2,
  swapgs,
  rdtscp,
  icebp,
  count
};
struct Insn {
  InsnKind kind = InsnKind::cpuid;
  uint8_t vector = 0;
  uint64_t rax = 0, rcx = 0, rdx = 0;
};

// One step of an hv_frames operation, on frame `frame` of Pool::hv_frames.
struct HvStep {
  enum class Kind : uint8_t {
    prepare,        // the frame's contents made table-like first (console: drained, text cleared;
                    // a scratch area frame zeroed)
    unmap_own,      // the kernel's own mapping of it removed
    remap_own,      // ... and put back
    pin,            // MMUEXT_PIN_L<level>_TABLE
    unpin,          // MMUEXT_UNPIN_TABLE
    set_gdt,        // HYPERVISOR_set_gdt with it as the one frame (kRestoreGdt)
    map_fuzz,       // an L1 entry of a scratch L1 (table, slot) mapping it (writable: scratch only)
    link,           // an entry of a scratch table of `level` naming it (a table of the level below)
    unmap_fuzz,     // that entry cleared again
    register_area,  // VCPUOP_register_runstate / time memory area at its kernel address
    notify,         // EVTCHNOP_send on the console's port (the hypervisor drains the ring)
    yield,          // SCHEDOP_yield: a runstate change, the areas updated
    block,          // SCHEDOP_block with the timer armed: time and vcpu_info updates
    send,           // EVTCHNOP_send on one of the kernel's ports: pending bits set for us
    count
  } kind = Kind::yield;
  uint8_t frame = 0;
  uint8_t level = 1;
  bool writable = false;
  uint8_t table = 0;  // map_fuzz / link / unmap_fuzz
  uint16_t slot = 0;
  uint32_t port = 0;   // send
  uint64_t value = 0;  // map_fuzz / link: the entry written
};
constexpr unsigned kMaxHvSteps = 12;

// One step of a destroy operation (dom0), on domain kDestroyDomains[domain]. Steps marked
// `racing` run from the timer's event between the continuations of the next destroy step (the
// destroy is preempted when the timer fires), the others in order.
struct DomStep {
  enum class Kind : uint8_t {
    create,         // XEN_DOMCTL_createdomain with that id
    max_mem,        // XEN_DOMCTL_max_mem (`count` KiB)
    populate,       // XENMEM_populate_physmap on its behalf (`count` extents of `order`)
    decrease,       // XENMEM_decrease_reservation of one of its frames
    hold,           // one of its frames mapped by a foreign mmu_update (the domain cannot go)
    release,        // that mapping removed
    destroy,        // XEN_DOMCTL_destroydomain (timer armed `delay_ns` ahead: continuations)
    alloc_unbound,  // EVTCHNOP_alloc_unbound for it (dom = it, remote dom0), or of dom0's for it
    bind,           // EVTCHNOP_bind_interdomain to a port allocated in it
    foreign_map,    // mmu_update of a scratch L1 slot with its frame, foreigndom = it
    pin,            // mmuext_op PIN_L1_TABLE of its frame, foreigndom = it
    recreate,       // createdomain with the same id, then: the new domain owns nothing (no pages,
                    // no open port): nothing of the dead one reached it
    count
  } kind = Kind::create;
  uint8_t domain = 0;
  uint8_t order = 0;
  bool racing = false;
  bool remote = false;  // alloc_unbound: dom0's port for it instead of its port for dom0
  uint32_t count = 0;
  uint64_t delay_ns = 0;
};
constexpr unsigned kMaxDomSteps = 16;
// The ids the destroy class creates (never a boot domain's: those are 0..7).
constexpr uint16_t kDestroyDomains[] = {0x7a1, 0x7a2};
constexpr unsigned kDestroyDomainCount = 2;

struct Op {
  OpKind kind = OpKind::call;
  uint32_t restore = 0;
  bool arm_timer = false;  // arm the one-shot timer arm_timer_ns ahead first (the op may block)
  uint64_t arm_timer_ns = 0;
  Call call;            // call, mmu, mmuext, va_mapping, multicall, sched, rflags
  uint64_t rflags = 0;  // rflags: the value loaded (popf) before the call
  // A multicall with an iret entry: Xen runs iret inside a batch (and ends the batch there),
  // reading its context at the caller's stack pointer, so the call is made with the stack
  // pointer at `iret` (a context that returns to the landing pad), as the iret class does.
  bool iret_frame = false;
  Step steps[kMaxSteps];
  unsigned step_count = 0;
  IretFrame iret;
  PortAccess port;
  Insn insn;
  HvStep hv[kMaxHvSteps];
  unsigned hv_count = 0;
  DomStep dom[kMaxDomSteps];
  unsigned dom_count = 0;
};

const char* op_kind_name(OpKind kind);

// Builds operation number `op` of the campaign into `out`, writing its buffers into the pool's
// buffer and edge pages. Classes left out by the options are never chosen (if every class is
// left out the operation is a settle).
void generate(const Pool& pool, const Options& options, uint64_t op, Op& out);

// One line (or a few, separated by "\n  ") describing an operation, for fuzz_log: the call
// with its arguments and the requests of its batches, decoded from the buffers.
size_t describe(const Pool& pool, const Op& op, char* text, size_t capacity);

// ---- Checks of generated operations (used by the unit tests and the executor's self-check) --

// What a generated operation would write, judged before it runs: an empty string if it keeps
// the rules above, else the first rule it breaks.
const char* check_rules(const Pool& pool, const Op& op);

// Helpers of the rules, exposed for the tests.
bool is_scratch_frame(const Pool& pool, uint64_t mfn);
bool is_scratch_table_slot(const Pool& pool, uint64_t machine_address);  // writable by the fuzzer
bool is_own_frame(const Pool& pool, uint64_t mfn);
bool is_read_only_frame(const Pool& pool, uint64_t mfn);  // the kernel's text or a read_only protected frame
// The rules of the two classes of fuzz/generator/fuzz_generate_hv.cpp (fuzz/generator/fuzz_rules_hv.cpp).
const char* check_hv_frames(const Pool& pool, const Op& op);
const char* check_destroy(const Pool& pool, const Op& op);
const char* hv_frame_name(HvFrameKind kind);
const char* hv_step_name(HvStep::Kind kind);
const char* dom_step_name(DomStep::Kind kind);

}  // namespace lib::fuzz
