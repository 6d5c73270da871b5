#pragma once
// The generator of the fuzzer's operations (fuzz/generator/fuzz_model.h: generate() is the interface).
// One class, its methods by what they build:
//   fuzz_generate.cpp        the choice of operation; buffers, addresses, frames and entries
//   fuzz_generate_mmu.cpp    mmu_update, mmuext_op, update_va_mapping and multicall batches
//   fuzz_generate_calls.cpp  the arguments of every other hypercall
//   fuzz_generate_cpu.cpp    direct page-table stores and accesses, iret, RFLAGS, timers,
//                            port I/O and trapping instructions
//   fuzz_generate_hv.cpp     the frames the hypervisor writes for us, domain destruction races
// Every operation draws from Random::for_operation(seed, op); the rules that keep the fuzzer
// alive are applied here and checked again by check_rules (fuzz/generator/fuzz_rules.cpp).
#ifndef __XEN_TOOLS__
#define __XEN_TOOLS__ 1  // sysctl.h is the tools' interface
#endif
#include <stddef.h>
#include <stdint.h>
#include <xen/xen.h>
#include <xen/callback.h>
#include <xen/event_channel.h>
#include <xen/memory.h>
#include <xen/nmi.h>
#include <xen/physdev.h>
#include <xen/sched.h>
#include <xen/sysctl.h>
#include <xen/vcpu.h>
#include <xen/version.h>

#include "fuzz/generator/fuzz_entries.h"
#include "fuzz/generator/fuzz_model.h"

namespace lib::fuzz::detail {

inline constexpr uint64_t kPage = 4096;
inline constexpr uint64_t kHypervisorStart = 0xffff800000000000ull;
inline constexpr uint64_t kHypervisorEnd = 0xffff880000000000ull;  // exclusive
inline constexpr uint16_t kFlatKernelCs = 0xe033, kFlatKernelSs = 0xe02b, kFlatUserCs32 = 0xe023;

// Frames that are not RAM (or not in the frame table): devices the hypervisor must keep.
inline constexpr uint64_t kIoFrames[] = {0xfee00, 0xfec00, 0xfed00, 0xa0, 0xb8, 0xc0, 0xf0, 0xfffff, 0xe0000, 0xfebf0};

class Generator {
 public:
  Generator(const Pool& pool, const Options& options, uint64_t op)
      : pool_(pool), options_(options), random_(Random::for_operation(options.seed, op)) {}

  void run(Op& op);
  void finish();

 private:
  // ---- buffers -------------------------------------------------------------------------
  // `bytes` of the operation's buffer (8-aligned), or null when it is full.
  uint8_t* take(uint64_t bytes, uint64_t& va);
  void fill_random(uint8_t* at, uint64_t bytes);
  // Room at the end of the edge page for `bytes` (at most a page): they start so that only
  // the first bytes - skew are mapped and the rest falls into the unmapped page after it. The
  // caller writes all `bytes` into the staging area returned; finish() copies the mapped part.
  // One user per operation (null after that).
  uint8_t* edge_tail(uint64_t bytes, uint64_t skew, uint64_t& va);
  void copy_edge();

  // ---- addresses -----------------------------------------------------------------------
  bool on(Feature feature) const { return options_.enabled(feature); }
  uint64_t non_canonical();
  uint64_t hypervisor_va();
  // Where nothing is readable (or not for the guest): the hypervisor is asked to fail.
  uint64_t unreadable_va();
  // Where update_va_mapping must fail for want of tables (not the edge page's hole, which
  // has an L1: mapping something there would end the reads it is meant to stop).
  uint64_t untabled_va();
  // An address in the fuzzed range (the kernel L4's fuzz slots), biased to where the initial
  // tables map something.
  uint64_t fuzz_va();
  // A pointer the hypervisor may write `bytes` through: a fresh part of the buffer (filled
  // with random bytes, since some calls read before they write), the edge, or somewhere it
  // must refuse. Never the kernel's memory, never the fuzzed range.
  uint64_t write_pointer(uint64_t bytes);
  // A pointer the hypervisor only reads, where the content does not matter to the fuzzer's
  // safety (console text, vCPU masks, trap tables that are replaced afterwards).
  uint64_t read_pointer(uint64_t bytes);

  // ---- frames and entries --------------------------------------------------------------
  uint64_t scratch_table(unsigned& index);
  // A table of the given intended level, or any table if there is none.
  unsigned table_of_level(unsigned level);
  unsigned non_clone_table();
  uint64_t data_frame() { return pool_.data_mfn[random_.below(pool_.data_count)]; }
  uint64_t protected_frame(uint8_t* level = nullptr);
  // One the hypervisor may be asked to take a table type on (OtherFrame::read_only: never a
  // frame mapped read-only only); a frame not ours (level 0) if the draws find none.
  uint64_t typed_protected_frame(uint8_t* level = nullptr);
  uint64_t hypervisor_frame();
  uint64_t foreign_frame();
  uint64_t io_frame();
  // A frame that is neither scratch nor ours (the hypervisor must refuse most uses of it).
  // Never one of ours: a request naming it may be carried out as a plain write of data.
  uint64_t not_ours_frame();

  uint64_t leaf_flags();
  uint64_t table_flags();

  // A value for an entry of a table of `level`: plausible (a frame of the right kind with
  // the usual flags) more often than not, hostile otherwise.
  uint64_t entry_value(unsigned level);

  // A slot the fuzzer may write and the level of the table it is in.
  uint64_t writable_slot(unsigned& level);
  // An entry index in scratch table `table` (never the kernel slot of a clone; with
  // `span` > 1, a run of that many that avoids it).
  unsigned table_slot_index(unsigned table, bool misaligned, unsigned span = 1);
  // The value written to a slot of the fuzzer's: by the level of the table it is in, and
  // read-only for the direct-map slots of scratch tables (their mappings must stay unwritable).
  uint64_t value_for_slot(uint64_t machine_address, unsigned level);
  // A value for the direct-map entry of scratch frame `index` (tables first, then data): mostly
  // the frame itself again (so stores through it work more often than not), else another
  // frame; never writable for a table.
  uint64_t direct_map_value(unsigned index);
  // A hostile value for a protected slot: what it holds, or a change the hypervisor must refuse.
  uint64_t protected_value(const ProtectedSlot& slot);
  const ProtectedSlot* protected_slot();

  uint64_t foreign_domain();
  uint64_t batch_count(uint64_t typical_max);
  // Where a batch of `count` items of `size` bytes goes: mostly the buffer; a huge count
  // puts a few items at the end of the edge page (the hypervisor reads into the unmapped page).
  uint8_t* batch_list(uint64_t count, uint64_t size, uint64_t& va, uint64_t& written);
  // Where a list cannot be read (a readable page would be read as requests, whatever it holds).
  uint64_t hostile_list_pointer() { return unreadable_va(); }

  // ---- the MMU hypercalls ----------------------------------------------------------------
  void mmu_request(uint64_t& ptr, uint64_t& val);

  void mmu_update(Call& call);

  // One mmuext_op; sets restore bits for what it may change.
  void mmuext_request(mmuext_op_t& op, uint32_t& restore);
  uint64_t protected_frame_not_of_level(unsigned level);
  uint64_t protected_table_frame();

  void mmuext_op(Call& call, uint32_t& restore);

  // update_va_mapping: an address and the value for its L1 entry. An address in the fuzzed
  // range updates whatever L1 its path leads to now, protected tables included (a scratch
  // table may link one): the executor checks the path of a call it issues alone, but inside a
  // batch earlier entries may change it, so batches use the other addresses only.
  void va_mapping(Call& call, bool in_batch = false);
  const ProtectedSlot* protected_l1_slot();

  // ---- other hypercalls ----------------------------------------------------------------
  // Sub-op arguments with random high bits sometimes: a hypervisor that truncates them to 32
  // bits (as Xen's `int cmd` does) sees the low part, which the filters judge.
  uint64_t command(uint64_t low);
  void timer_pointer_args(Call& call, uint64_t command_value, uint64_t argument);

  // A block inside a batch could follow an entry that moved or cancelled the timer the
  // operation armed: batches yield instead.
  void sched_op_args(Call& call, Op& op, bool in_batch = false);
  uint64_t unreadable_va_no_user();

  void event_channel_args(Call& call);
  bool is_protected_port(uint32_t port) const;
  uint32_t unprotected_port(uint32_t port);

  void vcpu_op_args(Call& call, uint32_t& restore);

  void console_args(Call& call);

  void sysctl_args(Call& call, uint32_t& restore);

  void memory_op_args(Call& call);

  // Arguments for hypercall `number` (its low 32 bits), which is not one of the MMU calls.
  void call_args(uint32_t number, Op& op, Call& call, uint32_t& restore, bool in_batch);
  uint64_t random_arg();

  static void arm(Op& op, uint64_t delay_ns);
  static constexpr uint64_t kTimerDelays[] = {0, 1000, 100000, 1000000, 2000000};
  static constexpr uint64_t kVmAssists[] = {VMASST_TYPE_4gb_segments,
                                            VMASST_TYPE_4gb_segments_notify,
                                            VMASST_TYPE_writable_pagetables,
                                            VMASST_TYPE_pae_extended_cr3,
                                            VMASST_TYPE_architectural_iopl,
                                            VMASST_TYPE_runstate_update_flag,
                                            VMASST_TYPE_m2p_strict,
                                            31,
                                            33,
                                            63,
                                            64};

  static bool is_mmu_number(uint32_t number);

  // Any hypercall: its number (in or outside the table, possibly >= 2^32) and arguments.
  void any_call(Op& op, Call& call, uint32_t& restore, bool in_multicall);

  // ---- multicall -----------------------------------------------------------------------
  void multicall(Op& op, Call& call, uint32_t& restore, unsigned depth);
  void multicall_entry(Op& op, multicall_entry_t& entry, uint64_t list_va, uint64_t list_count, uint32_t& restore,
                       unsigned depth);

  // ---- direct page-table writes and accesses ---------------------------------------------
  void store_step(Step& step);
  void store_operand(Step& step, unsigned level);
  uint64_t load_va();
  void touch_steps(Op& op, unsigned count);
  // Both pagetable-write paths on the same table through two of its aliases: a store through
  // one (writable pagetables detach the table and make that alias's entry writable in place),
  // a store into the L1 holding that entry, a load through another alias, a reattach, and a
  // store through the other alias again: the sequences that leave stale writable entries
  // behind in a snapshot or in the TLB if the hypervisor does not re-validate them.
  void alias_sequence(Op& op);

  void ptwrite(Op& op);

  // ---- iret, rflags, sched, ports, instructions ------------------------------------------
  uint64_t hostile_rflags(bool allow_tf);
  void iret(Op& op);
  void rflags(Op& op);
  void sched(Op& op);
  void ports(Op& op);
  static bool dom0_may_write(uint16_t port, unsigned width);
  void insn(Op& op);

  // ---- the frames the hypervisor writes, domain destruction (fuzz_generate_hv.cpp) ---------
  void hv_frames(Op& op);
  void hv_step(Op& op, unsigned primary, uint32_t& unmapped);
  unsigned hv_frame_choice(unsigned primary);
  // An entry naming frame `frame` for a scratch table of `level` (writable only for scratch).
  void hv_entry(HvStep& step, unsigned level);
  void destruction(Op& op);
  DomStep race_step(uint8_t domain, bool racing);

  const Pool& pool_;
  const Options& options_;
  Random random_;
  uint64_t used_ = 0;
  // The multicall entries of this operation (all levels), for the pass that keeps an iret
  // entry out of a batch that also replaces the trap table or the callbacks.
  static constexpr unsigned kMaxGenerated = 128;
  multicall_entry_t* generated_[kMaxGenerated] = {};
  unsigned generated_count_ = 0;
  bool edge_used_ = false;
  uint64_t edge_mapped_ = 0;
  uint8_t staging_[kPage];
};

}  // namespace lib::fuzz::detail
