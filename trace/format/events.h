// Event numbers: Xen's own where Xen traces the same thing, ours (class TRC_GEN, subclass 4,
// "TRC_PVHV") for what Xen never traced. Payloads are documented in trace/EVENTS.md.
// Freestanding.
#pragma once
#include "trace/format/record_header.h"

namespace trace::events {

// Xen's numbers, as 64-bit PV Xen writes them (TRC_64_FLAG set where addresses are 64-bit).
constexpr uint32_t kLostRecords = TRC_LOST_RECORDS;
constexpr uint32_t kWrapBuffer = TRC_TRACE_WRAP_BUFFER;
constexpr uint32_t kCpuChange = TRC_TRACE_CPU_CHANGE;
constexpr uint32_t kPvPageFault = TRC_PV_PAGE_FAULT | TRC_64_FLAG;          // eip64, addr64, ec
constexpr uint32_t kPvPtwrEmulation = TRC_PV_PTWR_EMULATION | TRC_64_FLAG;  // pte64, addr64, eip64
constexpr uint32_t kPvHypercallV2 = TRC_PV_HYPERCALL_V2;
constexpr uint32_t kPvHypercallSubcall = TRC_PV_HYPERCALL_SUBCALL;
constexpr uint32_t kSchedContinueRunning = TRC_SCHED_CONTINUE_RUNNING;  // vcpu | dom << 16
constexpr uint32_t kSchedSwitch = TRC_SCHED_SWITCH;                     // prev dom, vcpu, next dom, vcpu
constexpr uint32_t kSchedSwitchInfPrev = TRC_SCHED_SWITCH_INFPREV;      // dom, vcpu, ran ns
constexpr uint32_t kSchedSwitchInfNext = TRC_SCHED_SWITCH_INFNEXT;      // dom, vcpu, waited ns, slice ns
constexpr uint32_t kSchedSwitchInfCont = TRC_SCHED_SWITCH_INFCONT;      // dom, vcpu, ran ns, slice ns
constexpr uint32_t kSchedWake = TRC_SCHED_WAKE;                         // dom, vcpu
constexpr uint32_t kSchedBlock = TRC_SCHED_BLOCK;                       // dom, vcpu
constexpr uint32_t kSchedYield = TRC_SCHED_YIELD;                       // dom, vcpu

// Runstate changes encode old and new runstate in the event number (as Xen's scheduler does):
// TRC_SCHED_RUNSTATE_CHANGE | old << 8 | new << 4.
constexpr uint32_t sched_runstate_change(unsigned old_state, unsigned new_state) {
  return TRC_SCHED_RUNSTATE_CHANGE | ((old_state & 0xf) << 8) | ((new_state & 0xf) << 4);
}

// Our subclass. TRC_GEN's records all use subclass 0xf, so subclass 0x4 of class TRC_GEN is
// unused by Xen. Staying inside class TRC_GEN means Xen's own xenalyze reads our files without
// complaint (it treats unknown TRC_GEN events as generic records); a new class bit would make
// it stop with "unexpected number bits in evt.main". Xen's trace mask still filters the
// subclass independently (bit 14 of the mask).
constexpr uint32_t kPvhvSubclass = 0x00014000;

constexpr uint32_t kPtwrUnhook = kPvhvSubclass + 0x01;          // l1 mfn64, l2 slot
constexpr uint32_t kPtwrRehook = kPvhvSubclass + 0x02;          // l1 mfn64, changed, revalidated, refused
constexpr uint32_t kPtwrDetachInactive = kPvhvSubclass + 0x03;  // l1 mfn64
constexpr uint32_t kTlbFlush = kPvhvSubclass + 0x04;            // scope, reason
constexpr uint32_t kInvlpg = kPvhvSubclass + 0x05;              // va64
constexpr uint32_t kPtwrSlotEvict = kPvhvSubclass + 0x06;       // l1 mfn64, slot
constexpr uint32_t kAuditResult = kPvhvSubclass + 0x07;         // frames, mismatches
constexpr uint32_t kOperationBegin = kPvhvSubclass + 0x08;      // kind, id
constexpr uint32_t kOperationEnd = kPvhvSubclass + 0x09;        // kind, id
constexpr uint32_t kTscFrequency = kPvhvSubclass + 0x0a;        // hz64
constexpr uint32_t kCaptureDrain = kPvhvSubclass + 0x0b;        // start tsc64, bytes (written by dom0)
// A page fault the PTE-write paths take over (a guest kernel's write to one of its validated
// page tables), written when the hypervisor starts handling it. Xen records TRC_PV_PAGE_FAULT
// only for faults it bounces to the guest, so nothing in its format says which fault started
// an emulation or a detach; this does, and the analyser pairs only these.
constexpr uint32_t kPteWriteFault = kPvhvSubclass + 0x0c;  // rip64, address64, table mfn64
// ptwr=adaptive changed the path of an L1's writes (AdaptiveSwitch: 1 to emulation, its
// detach periods changed few entries; 2 to detaching, a run of writes), with the changed
// entries of the last period (1) or the run's length (2).
constexpr uint32_t kPtwrAdaptive = kPvhvSubclass + 0x0d;  // l1 mfn64, switch, detail
// TLB flushes across CPUs (xen/memory/boot_memory.cpp, flush_tlb_cpus; cross_cpu::flush_tlb_mask). Xen 4.17
// records neither: these are ours. The sender's record is in its CPU's buffer, each remote
// CPU's in its own, so a multi-CPU trace shows who asked and when each target flushed.
constexpr uint32_t kFlushIpiSend = kPvhvSubclass + 0x0e;     // target CPUs (bit n = CPU n), flush clock now
constexpr uint32_t kFlushIpiReceive = kPvhvSubclass + 0x0f;  // sender CPU, flush clock tick of this flush

enum class FlushScope : uint32_t { local = 0, all = 1 };

// Why a TLB flush happened: lets the analyser attribute flush cost to the PTE-write path.
enum class FlushReason : uint32_t {
  unhook = 1,         // an L2 slot was cleared to detach an L1
  rehook = 2,         // an L2 slot was restored
  guest_request = 3,  // mmuext_op TLB_FLUSH_* or update_va_mapping flags
  base_pointer = 4,   // new CR3 / NEW_BASEPTR
  validation = 5,     // page-type change needing a flush
  other = 15,
};

// Marked operations (kind in OPERATION_BEGIN/END): what the guest said it was about to do.
enum class OperationKind : uint32_t { fork = 1, exec = 2, exit = 3, other = 15 };

constexpr bool is_pvhv(uint32_t event) { return (event & 0x0ffff000u) == kPvhvSubclass; }

// Number of extra words each of our events carries (0 for events we do not define).
constexpr unsigned pvhv_extra_words(uint32_t event) {
  switch (event) {
    case kPtwrUnhook: return 3;
    case kPtwrRehook: return 5;
    case kPtwrDetachInactive: return 2;
    case kTlbFlush: return 2;
    case kInvlpg: return 2;
    case kPtwrSlotEvict: return 3;
    case kAuditResult: return 2;
    case kOperationBegin: return 2;
    case kOperationEnd: return 2;
    case kTscFrequency: return 2;
    case kCaptureDrain: return 3;
    case kPteWriteFault: return 6;
    case kPtwrAdaptive: return 4;
    case kFlushIpiSend: return 2;
    case kFlushIpiReceive: return 2;
    default: return 0;
  }
}

}  // namespace trace::events
