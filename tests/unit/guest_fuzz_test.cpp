// The fuzzing domain's pure part (guest/fuzz/generator/): the seeded random numbers, the options,
// and the generated operations: deterministic per (seed, operation), every class and hostile
// kind present, the skip options honoured, and the rules that keep the fuzzer alive kept on
// every operation of long runs (check_rules, which re-derives them from the buffers).
#include <gtest/gtest.h>
#include <xen/xen.h>
#include <xen/sched.h>
#include <xen/event_channel.h>
#include <xen/vcpu.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "guest/fuzz/generator/fuzz_entries.h"
#include "guest/fuzz/generator/fuzz_model.h"
#include "guest/fuzz/generator/fuzz_random.h"

using namespace lib::fuzz;

namespace {

constexpr uint64_t kVirtBase = 0xffffffff80000000ull;
constexpr uint64_t kOwnFirst = 0x1000, kOwnCount = 16384;

// A pool laid out as the kernel lays it out (fuzz/fuzz.cpp), with made-up frame numbers.
struct TestPool {
  Pool pool;
  std::vector<uint8_t> buffer = std::vector<uint8_t>(16384);
  std::vector<uint8_t> edge = std::vector<uint8_t>(4096);

  TestPool(bool privileged = true) {
    pool.privileged = privileged;
    pool.domid = privileged ? 0 : 1;
    pool.max_ram_page = 0x1ffdf;
    pool.own_runs[0] = {kOwnFirst, kOwnCount};
    pool.own_run_count = 1;
    pool.own_count = kOwnCount;
    auto va_of = [](uint64_t mfn) { return kVirtBase + ((mfn - kOwnFirst) << 12); };
    pool.table_count = kMaxTables;
    pool.clone_count = 2;
    for (unsigned i = 0; i < kMaxTables; ++i) {
      pool.table_mfn[i] = 0x2000 + i;
      pool.table_va[i] = va_of(pool.table_mfn[i]);
      pool.table_level[i] = i < 2 ? 4 : i < 6 ? 3 : i < 14 ? 2 : 1;
    }
    pool.data_count = kMaxData;
    for (unsigned i = 0; i < kMaxData; ++i) {
      pool.data_mfn[i] = 0x2100 + i;
      pool.data_va[i] = va_of(pool.data_mfn[i]);
    }
    pool.kernel_l4_mfn = 0x11b5;
    const uint64_t kernel_l1 = 0x11b8;
    for (unsigned i = 0; i < kFuzzSlotCount; ++i)
      pool.fuzz_slot_ma[i] = pool.kernel_l4_mfn * 4096 + kFuzzL4Slots[i] * 8;
    for (unsigned i = 0; i < kMaxTables; ++i) pool.direct_map_slot_ma[i] = 0x1300 * 4096ull + i * 8;
    for (unsigned i = 0; i < kMaxData; ++i) pool.direct_map_slot_ma[kMaxTables + i] = 0x1301 * 4096ull + i * 8;
    const OtherFrame frames[] = {{pool.kernel_l4_mfn, 4},
                                 {0x11b6, 3},
                                 {0x11b7, 2},
                                 {kernel_l1, 1},
                                 {0x1300, 1},
                                 {0x1000, 0},
                                 {0x1001, 0},
                                 {0x1100, 0},
                                 {0x11bb, 0}};
    for (const OtherFrame& frame : frames) pool.protected_frames[pool.protected_frame_count++] = frame;
    const ProtectedSlot slots[] = {
        {pool.kernel_l4_mfn * 4096 + 511 * 8, 0x11b6067, 4, false, 0},
        {pool.kernel_l4_mfn * 4096 + 256 * 8, 0x50063, 4, false, 0},
        {0x11b6 * 4096ull + 510 * 8, 0x11b7067, 3, false, 0},
        {0x11b7 * 4096ull + 0 * 8, 0x11b8067, 2, false, 0},
        {kernel_l1 * 4096 + 1 * 8, 0x1001067, 1, false, kVirtBase + 0x1000},
        {kernel_l1 * 4096 + 0x1b5 * 8, 0x11b5025, 1, true, kVirtBase + 0x1b5000},
    };
    for (const ProtectedSlot& slot : slots) pool.protected_slots[pool.protected_slot_count++] = slot;
    const uint64_t hypervisor[] = {0x50, 0x51, 0x100, 0x2f1};
    for (uint64_t mfn : hypervisor) pool.hypervisor_mfns[pool.hypervisor_mfn_count++] = mfn;
    const uint64_t foreign[] = {0x8000, 0x8001, 0x9abc};
    for (uint64_t mfn : foreign) pool.foreign_mfns[pool.foreign_mfn_count++] = mfn;
    pool.protected_ports[pool.protected_port_count++] = 1;
    pool.buffer = buffer.data();
    pool.buffer_va = kVirtBase + 0x180000;
    pool.buffer_size = buffer.size();
    pool.edge = edge.data();
    pool.edge_va = kVirtBase + 0x3f801000;
    pool.unmapped_va = kVirtBase + 0x3f600000;
    pool.text_va = kVirtBase + 0x3f800000;
    pool.text_size = 4096;
    pool.read_only_va = kVirtBase + 0x3f803000;
    pool.kernel_image_va = kVirtBase;
    pool.kernel_image_size = 0x1b0000;
    pool.stack_va = kVirtBase + 0x1a0000;
    // The frames the hypervisor writes: a domU's console ring (and its port), shared_info, two
    // scratch data frames as the vCPU areas, the hypercall page (in the kernel's text).
    auto hv = [&](HvFrameKind kind, uint64_t mfn, uint64_t va, bool needs, bool read_only, bool scratch) {
      HvFrame& frame = pool.hv_frames[pool.hv_frame_count++];
      frame.kind = kind;
      frame.mfn = mfn;
      frame.va = va;
      frame.slot_ma = kernel_l1 * 4096 + ((va >> 12) & 511) * 8;
      frame.kernel_needs = needs;
      frame.read_only = read_only;
      frame.scratch = scratch;
    };
    if (!privileged) {
      hv(HvFrameKind::console_ring, 0x11bc, va_of(0x11bc), false, false, false);
      pool.console_port = 2;
      pool.protected_ports[pool.protected_port_count++] = 2;
    }
    hv(HvFrameKind::shared_info, 0x11bd, kVirtBase + 0x1bd000, false, false, false);
    pool.shared_info_mfn = 0x11bd;
    hv(HvFrameKind::runstate, pool.data_mfn[0], pool.data_va[0], false, false, true);
    hv(HvFrameKind::time_area, pool.data_mfn[1], pool.data_va[1], false, false, true);
    hv(HvFrameKind::hypercall_page, 0x1002, kVirtBase + 0x2000, true, true, false);
    pool.protected_frames[pool.protected_frame_count++] = {0x1002, 0, true};  // kernel text: read-only only
    hv(HvFrameKind::vcpu_info, 0x11be, va_of(0x11be), true, false, false);
  }
};

Options options_with(uint64_t seed, const char* skip = "") {
  Options options;
  options.seed = seed;
  const char* unknown = nullptr;
  EXPECT_TRUE(parse_features(skip, options.skip, &unknown));
  return options;
}

std::string text_of(const Pool& pool, const Op& op) {
  char text[8192];
  describe(pool, op, text, sizeof(text));
  return text;
}

// Every hypercall number an operation issues, multicall entries included (one level down).
void collect_numbers(const Pool& pool, uint64_t number, const uint64_t* args, std::vector<uint64_t>& out,
                     int depth = 0) {
  out.push_back(number);
  if (uint32_t(number) != __HYPERVISOR_multicall || depth > 1) return;
  for (uint64_t i = 0; i < args[1] && i < 64; ++i) {
    uint64_t va = args[0] + i * sizeof(multicall_entry_t);
    const uint8_t* at = nullptr;
    if (va >= pool.buffer_va && va + sizeof(multicall_entry_t) <= pool.buffer_va + pool.buffer_size)
      at = pool.buffer + (va - pool.buffer_va);
    if (va >= pool.edge_va && va + sizeof(multicall_entry_t) <= pool.edge_va + 4096)
      at = pool.edge + (va - pool.edge_va);
    if (!at) break;
    multicall_entry_t entry;
    std::memcpy(&entry, at, sizeof(entry));
    uint64_t entry_args[6];
    for (int a = 0; a < 6; ++a) entry_args[a] = entry.args[a];
    if (uint32_t(entry.op) == __HYPERVISOR_multicall && entry.args[0] == args[0]) {
      out.push_back(entry.op);
      continue;
    }
    collect_numbers(pool, entry.op, entry_args, out, depth + 1);
  }
}

}  // namespace

TEST(guest_fuzz_random, SameSeedAndOperationSameStream) {
  Random a = Random::for_operation(42, 1000), b = Random::for_operation(42, 1000);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
  Random c = Random::for_operation(42, 1001), d = Random::for_operation(43, 1000);
  Random e = Random::for_operation(42, 1000);
  int same_c = 0, same_d = 0;
  for (int i = 0; i < 100; ++i) {
    uint64_t value = e.next();
    same_c += c.next() == value;
    same_d += d.next() == value;
  }
  EXPECT_EQ(same_c, 0);
  EXPECT_EQ(same_d, 0);
}

TEST(guest_fuzz_random, KnownValuesDoNotChange) {
  // Replays of recorded failures depend on the streams staying what they were.
  Random random = Random::for_operation(1, 0);
  const uint64_t first = random.next();
  Random again(0);
  EXPECT_NE(first, again.next());
  uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 0xe220a8397b1dcdafull);  // the published first output for seed 0
}

TEST(guest_fuzz_random, RangesAndWeights) {
  Random random(7);
  std::set<uint64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    uint64_t value = random.below(10);
    ASSERT_LT(value, 10u);
    seen.insert(value);
    uint64_t between = random.between(5, 9);
    ASSERT_GE(between, 5u);
    ASSERT_LE(between, 9u);
  }
  EXPECT_EQ(seen.size(), 10u);
  const unsigned weights[] = {0, 3, 0, 1};
  int counts[4] = {};
  for (int i = 0; i < 10000; ++i) ++counts[random.weighted(weights, 4)];
  EXPECT_EQ(counts[0], 0);
  EXPECT_EQ(counts[2], 0);
  EXPECT_GT(counts[1], counts[3] * 2);
  EXPECT_EQ(random.below(0), 0u);
}

TEST(guest_fuzz_options, ParsesTheCommandLine) {
  Options options;
  char error[128];
  ASSERT_TRUE(
      parse_options("fuzz=0x2a fuzz_ops=5000 fuzz_start=100 fuzz_audit=1000 fuzz_log=120-130 "
                    "fuzz_skip=nt+rax_high fuzz_progress=50",
                    options, error, sizeof(error)))
      << error;
  EXPECT_EQ(options.seed, 42u);
  EXPECT_EQ(options.ops, 5000u);
  EXPECT_EQ(options.start, 100u);
  EXPECT_EQ(options.audit_every, 1000u);
  EXPECT_EQ(options.progress, 50u);
  EXPECT_EQ(options.log_from, 120u);
  EXPECT_EQ(options.log_to, 130u);
  EXPECT_FALSE(options.enabled(kNt));
  EXPECT_FALSE(options.enabled(kRaxHigh));
  EXPECT_TRUE(options.enabled(kTf));
  // Every feature has a name that parses back to it.
  for (unsigned f = 0; f < kFeatureCount; ++f) {
    uint64_t mask = 0;
    ASSERT_TRUE(parse_features(feature_name(Feature(f)), mask, nullptr)) << f;
    EXPECT_EQ(mask, 1ull << f);
  }
  ASSERT_TRUE(parse_options("fuzz=7 fuzz_only=mmu+ptwrite", options, error, sizeof(error)));
  EXPECT_TRUE(options.enabled(kMmu));
  EXPECT_FALSE(options.enabled(kCall));
  EXPECT_TRUE(options.enabled(kNt));  // only= restricts classes, not hostile values
  ASSERT_TRUE(parse_options("fuzz=7 fuzz_log=9", options, error, sizeof(error)));
  EXPECT_EQ(options.log_from, 9u);
  EXPECT_EQ(options.log_to, 9u);
}

TEST(guest_fuzz_options, RefusesBadValues) {
  Options options;
  char error[128];
  EXPECT_FALSE(parse_options("fuzz_ops=5", options, error, sizeof(error)));
  EXPECT_FALSE(parse_options("fuzz=abc", options, error, sizeof(error)));
  EXPECT_FALSE(parse_options("fuzz=1 fuzz_ops=1e6", options, error, sizeof(error)));
  EXPECT_FALSE(parse_options("fuzz=1 fuzz_skip=nt+bogus", options, error, sizeof(error)));
  EXPECT_NE(std::string(error).find("bogus"), std::string::npos);
  EXPECT_FALSE(parse_options("fuzz=1 fuzz_only=nt", options, error, sizeof(error)));
  EXPECT_FALSE(parse_options("fuzz=1 fuzz_log=9-3", options, error, sizeof(error)));
  uint64_t value;
  EXPECT_FALSE(parse_number("99999999999999999999", value));
  EXPECT_TRUE(parse_number("0xffffffffffffffff", value));
  EXPECT_EQ(value, ~0ull);
}

TEST(guest_fuzz_generate, DeterministicPerSeedAndOperation) {
  TestPool first, second;
  Options options = options_with(0x5eed);
  for (uint64_t n = 0; n < 2000; ++n) {
    Op a, b;
    generate(first.pool, options, n, a);
    generate(second.pool, options, n, b);
    ASSERT_EQ(text_of(first.pool, a), text_of(second.pool, b)) << "op " << n;
  }
  // Operation 1500 is the same whether or not the ones before it were generated.
  TestPool fresh;
  Op late, again;
  generate(fresh.pool, options, 1500, late);
  generate(first.pool, options, 1500, again);
  EXPECT_EQ(text_of(fresh.pool, late), text_of(first.pool, again));
}

// Recorded findings name (seed, operation): they replay only while the generator draws the
// same operations. This digest of the first operations of one seed changes when it does not;
// then update it, and know that recorded seeds and operation numbers no longer apply.
TEST(guest_fuzz_generate, OperationStreamsAreStable) {
  TestPool test;
  Options options = options_with(0x2026);
  uint64_t digest = 0xcbf29ce484222325ull;  // FNV-1a over the descriptions
  for (uint64_t n = 0; n < 5000; ++n) {
    Op op;
    generate(test.pool, options, n, op);
    for (char c : text_of(test.pool, op)) digest = (digest ^ uint8_t(c)) * 0x100000001b3ull;
  }
  EXPECT_EQ(digest, 0x3ec8499f45f06df0ull) << std::hex << digest;
}

TEST(guest_fuzz_generate, KeepsTheRulesOnLongRuns) {
  for (bool privileged : {true, false}) {
    TestPool test(privileged);
    for (uint64_t seed : {1ull, 0xdeadbeefull, 0x1234567890abcdefull}) {
      Options options = options_with(seed);
      for (uint64_t n = 0; n < 30000; ++n) {
        Op op;
        generate(test.pool, options, n, op);
        const char* problem = check_rules(test.pool, op);
        ASSERT_STREQ(problem, "") << "seed " << seed << " op " << n << ": " << text_of(test.pool, op);
      }
    }
  }
}

// The kernel maps its text read-only (write_protect_kernel_text): its frames hold no type that
// would refuse a table type, so a pin, a base pointer or an entry naming one would have its
// contents validated, and Xen 4.17's L1 validation rewrites present entries in place even when
// it refuses (the campaign on Xen once rewrote the hypercall page: set_trap_table -ENOSYS).
// A pool whose kernel text (0x1000-0x103f) and text page (0x1001) are so.
struct ReadOnlyTextPool : TestPool {
  static constexpr uint64_t kTextPage = 0x1001, kOtherText = 0x1020;
  ReadOnlyTextPool() {
    pool.kernel_text[0] = {0x1000, 0x40};
    pool.kernel_text_run_count = 1;
    for (unsigned i = 0; i < pool.protected_frame_count; ++i)
      if (pool.protected_frames[i].mfn == kTextPage) pool.protected_frames[i].read_only = true;
    for (unsigned i = 0; i < pool.protected_slot_count; ++i)
      if ((pool.protected_slots[i].value >> 12) == kTextPage) pool.protected_slots[i].value = (kTextPage << 12) | 0x25;
  }
};

// Every frame an operation asks the hypervisor to take a table type on, or names in an entry.
void frames_named(const Pool& pool, const Op& op, std::vector<uint64_t>& typed, std::vector<uint64_t>& in_entries) {
  auto in_buffer = [&](uint64_t va, uint64_t bytes) -> const uint8_t* {
    if (va >= pool.buffer_va && va + bytes <= pool.buffer_va + pool.buffer_size)
      return pool.buffer + (va - pool.buffer_va);
    return nullptr;
  };
  if (op.kind == OpKind::mmuext) {
    for (uint64_t i = 0; i < op.call.args[1] && i < 64; ++i) {
      const uint8_t* at = in_buffer(op.call.args[0] + i * sizeof(mmuext_op_t), sizeof(mmuext_op_t));
      if (!at) break;
      mmuext_op_t ext;
      std::memcpy(&ext, at, sizeof(ext));
      if (ext.cmd <= MMUEXT_PIN_L4_TABLE || ext.cmd == MMUEXT_NEW_BASEPTR || ext.cmd == MMUEXT_NEW_USER_BASEPTR)
        typed.push_back(ext.arg1.mfn);
    }
  }
  if (op.kind == OpKind::mmu) {
    for (uint64_t i = 0; i < op.call.args[1] && i < 64; ++i) {
      const uint8_t* at = in_buffer(op.call.args[0] + i * sizeof(mmu_update_t), sizeof(mmu_update_t));
      if (!at) break;
      mmu_update_t request;
      std::memcpy(&request, at, sizeof(request));
      if ((request.ptr & 7) != MMU_MACHPHYS_UPDATE && is_scratch_table_slot(pool, request.ptr & ~7ull))
        in_entries.push_back((request.val & kAddressBits) >> 12);
    }
  }
  if (op.kind == OpKind::va_mapping) {
    bool kernel_mapping = false;  // a kernel L1 entry given its own value again (never retyped)
    for (unsigned i = 0; i < pool.protected_slot_count; ++i)
      kernel_mapping |= pool.protected_slots[i].va == (op.call.args[0] & ~4095ull) &&
                        pool.protected_slots[i].value == op.call.args[1];
    if (!kernel_mapping) in_entries.push_back((op.call.args[1] & kAddressBits) >> 12);
  }
  if (op.kind == OpKind::ptwrite || op.kind == OpKind::touch)
    for (unsigned i = 0; i < op.step_count; ++i)
      if (op.steps[i].kind == Step::Kind::store || op.steps[i].kind == Step::Kind::touch_store)
        in_entries.push_back((op.steps[i].value & kAddressBits) >> 12);
}

TEST(guest_fuzz_generate, NeverNamesTheKernelTextWhereATypeCouldBeTaken) {
  for (bool privileged : {true, false}) {
    // The same pool with the text page mapped writable names it in both roles (so the
    // read-only pool's zero counts below are the generator's doing, not chance).
    TestPool writable_text(privileged);
    ReadOnlyTextPool test;
    test.pool.privileged = privileged;
    test.pool.domid = writable_text.pool.domid;
    unsigned writable_typed = 0, writable_in_entries = 0;
    for (uint64_t seed : {1ull, 0x7e57ull, 0x1234567890abcdefull}) {
      Options options = options_with(seed);
      for (uint64_t n = 0; n < 30000; ++n) {
        Op op;
        generate(test.pool, options, n, op);
        const char* problem = check_rules(test.pool, op);
        ASSERT_STREQ(problem, "") << "seed " << seed << " op " << n << ": " << text_of(test.pool, op);
        std::vector<uint64_t> typed, in_entries;
        frames_named(test.pool, op, typed, in_entries);
        for (uint64_t mfn : typed)
          ASSERT_FALSE(is_read_only_frame(test.pool, mfn)) << "op " << n << ": " << text_of(test.pool, op);
        for (uint64_t mfn : in_entries)
          ASSERT_FALSE(is_read_only_frame(test.pool, mfn)) << "op " << n << ": " << text_of(test.pool, op);

        Op other;
        generate(writable_text.pool, options, n, other);
        typed.clear();
        in_entries.clear();
        frames_named(writable_text.pool, other, typed, in_entries);
        for (uint64_t mfn : typed) writable_typed += mfn == ReadOnlyTextPool::kTextPage;
        for (uint64_t mfn : in_entries) writable_in_entries += mfn == ReadOnlyTextPool::kTextPage;
      }
    }
    EXPECT_GT(writable_typed, 0u);
    EXPECT_GT(writable_in_entries, 0u);
  }
}

TEST(guest_fuzz_rules, TheKernelTextIsNeverNamedWhereATypeCouldBeTaken) {
  ReadOnlyTextPool test;
  const Pool& pool = test.pool;
  for (uint64_t mfn : {ReadOnlyTextPool::kTextPage, ReadOnlyTextPool::kOtherText}) {
    EXPECT_TRUE(is_read_only_frame(pool, mfn));
    EXPECT_TRUE(is_own_frame(pool, mfn));
    EXPECT_FALSE(entry_safe(pool, (mfn << 12) | kPresentBit)) << "read-only, present";
    EXPECT_FALSE(entry_safe(pool, (mfn << 12) | kUserBit)) << "not present: an or may set P";
    const uint64_t sanitized = sanitize_entry(pool, (mfn << 12) | kTableBits);
    EXPECT_TRUE(entry_safe(pool, sanitized));
    EXPECT_EQ(sanitized & kAddressBits, 0u);
    EXPECT_EQ(sanitized & ~kAddressBits, kTableBits & ~kWritableBit);
  }
  EXPECT_FALSE(is_read_only_frame(pool, 0x1100));  // a protected frame mapped writable
  EXPECT_TRUE(entry_safe(pool, (0x1100ull << 12) | kPresentBit));
  EXPECT_EQ(sanitize_entry(pool, (0x1100ull << 12) | kTableBits), (0x1100ull << 12) | (kTableBits & ~kWritableBit));

  Op ext_op;
  ext_op.kind = OpKind::mmuext;
  ext_op.restore = kRestoreBase;
  ext_op.call.number = __HYPERVISOR_mmuext_op;
  ext_op.call.args[0] = pool.buffer_va;
  ext_op.call.args[1] = 1;
  auto* ext = reinterpret_cast<mmuext_op_t*>(pool.buffer);
  for (unsigned cmd :
       {MMUEXT_PIN_L1_TABLE, MMUEXT_PIN_L2_TABLE, MMUEXT_PIN_L4_TABLE, MMUEXT_NEW_BASEPTR, MMUEXT_NEW_USER_BASEPTR}) {
    *ext = mmuext_op_t{};
    ext->cmd = cmd;
    ext->arg1.mfn = ReadOnlyTextPool::kTextPage;
    EXPECT_STRNE(check_rules(pool, ext_op), "") << "cmd " << cmd << " of the text page";
    ext->arg1.mfn = ReadOnlyTextPool::kOtherText;
    EXPECT_STRNE(check_rules(pool, ext_op), "") << "cmd " << cmd << " of other text";
    ext->arg1.mfn = 0x1100;  // mapped writable: its Writable type refuses every table type
    if (cmd != MMUEXT_NEW_BASEPTR) {
      EXPECT_STREQ(check_rules(pool, ext_op), "") << "cmd " << cmd;
    }
  }

  Op mmu;
  mmu.kind = OpKind::mmu;
  mmu.call.number = __HYPERVISOR_mmu_update;
  mmu.call.args[0] = pool.buffer_va;
  mmu.call.args[1] = 1;
  mmu.call.args[3] = DOMID_SELF;
  auto* request = reinterpret_cast<mmu_update_t*>(pool.buffer);
  request->ptr = pool.table_mfn[8] * 4096 + 5 * 8;  // a scratch L2
  request->val = (ReadOnlyTextPool::kTextPage << 12) | (kTableBits & ~kWritableBit);
  EXPECT_STRNE(check_rules(pool, mmu), "");
  request->val = (0x1100ull << 12) | (kTableBits & ~kWritableBit);
  EXPECT_STREQ(check_rules(pool, mmu), "");

  Op store;
  store.kind = OpKind::ptwrite;
  store.step_count = 1;
  store.steps[0].kind = Step::Kind::store;
  store.steps[0].table = 20;  // a scratch L1: a later pin may make it an L2
  store.steps[0].slot = 3;
  store.steps[0].value = (ReadOnlyTextPool::kOtherText << 12) | kPresentBit;
  EXPECT_STRNE(check_rules(pool, store), "");
  store.steps[0].value = (0x1100ull << 12) | kPresentBit;
  EXPECT_STREQ(check_rules(pool, store), "");
}

TEST(guest_fuzz_generate, CoversEveryClassAndHostileKind) {
  TestPool test;
  Options options = options_with(99);
  std::set<int> kinds, stores, mmuext_commands;
  bool high_number = false, nested = false, iret_bad_selector = false, nt = false, reserved_bits = false;
  bool protected_target = false, huge_count = false, foreign = false, holder = false, alias_load = false;
  for (uint64_t n = 0; n < 20000; ++n) {
    Op op;
    generate(test.pool, options, n, op);
    kinds.insert(int(op.kind));
    std::vector<uint64_t> numbers;
    if (op.kind <= OpKind::multicall || op.kind == OpKind::rflags || op.kind == OpKind::sched)
      collect_numbers(test.pool, op.call.number, op.call.args, numbers);
    for (uint64_t number : numbers) high_number |= number >> 32 != 0;
    if (op.kind == OpKind::multicall) {
      for (size_t i = 1; i < numbers.size(); ++i) {
        nested |= uint32_t(numbers[i]) == __HYPERVISOR_multicall || uint32_t(numbers[i]) == __HYPERVISOR_iret;
      }
    }
    if (op.kind == OpKind::iret) iret_bad_selector |= (op.iret.cs & ~3ull) != 0xe030 || op.iret.ss != 0xe02b;
    nt |=
        (op.kind == OpKind::rflags && (op.rflags & kNtFlag)) || (op.kind == OpKind::iret && (op.iret.rflags & kNtFlag));
    if (op.kind == OpKind::ptwrite) {
      for (unsigned i = 0; i < op.step_count; ++i) {
        alias_load |= op.steps[i].kind == Step::Kind::alias_load;
        if (op.steps[i].kind != Step::Kind::store) continue;
        stores.insert(int(op.steps[i].store));
        holder |= op.steps[i].path == StorePath::alias_holder;
        uint64_t value = op.steps[i].value;
        reserved_bits |= (value & 0x000fff0000000000ull) != 0;
        uint64_t mfn = (value & kAddressBits) >> 12;
        protected_target |= is_own_frame(test.pool, mfn) && !is_scratch_frame(test.pool, mfn) && (value & kPresentBit);
      }
    }
    if (op.kind == OpKind::mmuext) {
      if (op.call.args[0] >= test.pool.buffer_va && op.call.args[0] < test.pool.buffer_va + test.pool.buffer_size) {
        const auto* ops =
            reinterpret_cast<const mmuext_op_t*>(test.pool.buffer + (op.call.args[0] - test.pool.buffer_va));
        for (uint64_t i = 0; i < op.call.args[1] && i < 8; ++i) mmuext_commands.insert(int(ops[i].cmd));
      }
    }
    if (op.kind == OpKind::mmu || op.kind == OpKind::mmuext) {
      huge_count |= op.call.args[1] > 0xffffffffull || op.call.args[1] == 0xffffffffull;
      foreign |= op.call.args[3] != DOMID_SELF;
    }
  }
  EXPECT_EQ(kinds.size(), unsigned(kClassCount));
  EXPECT_EQ(stores.size(), 14u);
  for (int cmd : {MMUEXT_PIN_L1_TABLE, MMUEXT_PIN_L4_TABLE, MMUEXT_UNPIN_TABLE, MMUEXT_NEW_BASEPTR,
                  MMUEXT_NEW_USER_BASEPTR, MMUEXT_CLEAR_PAGE, MMUEXT_COPY_PAGE, MMUEXT_SET_LDT, MMUEXT_INVLPG_MULTI})
    EXPECT_TRUE(mmuext_commands.count(cmd)) << "mmuext cmd " << cmd;
  EXPECT_TRUE(high_number);
  EXPECT_TRUE(nested);
  EXPECT_TRUE(iret_bad_selector);
  EXPECT_TRUE(nt);
  EXPECT_TRUE(reserved_bits);
  EXPECT_TRUE(protected_target);
  EXPECT_TRUE(huge_count);
  EXPECT_TRUE(foreign);
  EXPECT_TRUE(holder);
  EXPECT_TRUE(alias_load);
}

TEST(guest_fuzz_generate, SkipOptionsLeaveTheirKindOut) {
  TestPool test;
  Options options = options_with(5, "nt+rax_high+nested+iret_selectors+huge_count+foreign+alias");
  for (uint64_t n = 0; n < 20000; ++n) {
    Op op;
    generate(test.pool, options, n, op);
    for (unsigned i = 0; i < op.step_count; ++i) {
      ASSERT_NE(op.steps[i].kind, Step::Kind::alias_load);
      if (op.steps[i].kind == Step::Kind::store) {
        ASSERT_EQ(op.steps[i].path, StorePath::direct_map);
      }
    }
    std::vector<uint64_t> numbers;
    if (op.kind <= OpKind::multicall || op.kind == OpKind::rflags || op.kind == OpKind::sched)
      collect_numbers(test.pool, op.call.number, op.call.args, numbers);
    for (size_t i = 0; i < numbers.size(); ++i) {
      ASSERT_EQ(numbers[i] >> 32, 0u) << text_of(test.pool, op);
      if (i > 0 && op.kind == OpKind::multicall) {
        ASSERT_TRUE(uint32_t(numbers[i]) != __HYPERVISOR_iret && uint32_t(numbers[i]) != __HYPERVISOR_multicall)
            << text_of(test.pool, op);
      }
    }
    if (op.kind == OpKind::rflags) {
      ASSERT_FALSE(op.rflags & kNtFlag);
    }
    if (op.kind == OpKind::iret) {
      ASSERT_FALSE(op.iret.rflags & kNtFlag);
      ASSERT_EQ(op.iret.ss, 0xe02bu);
      ASSERT_EQ(op.iret.cs & ~3ull, 0xe030u);
      ASSERT_EQ(op.iret.number, uint64_t(__HYPERVISOR_iret));
    }
    if (op.kind == OpKind::mmu || op.kind == OpKind::mmuext) {
      ASSERT_LE(op.call.args[1], 64u);
      ASSERT_EQ(op.call.args[3], uint64_t(DOMID_SELF));
    }
  }
  Options no_new = options_with(5, "hv_frames+destroy");
  for (uint64_t n = 0; n < 5000; ++n) {
    Op op;
    generate(test.pool, no_new, n, op);
    ASSERT_TRUE(op.kind != OpKind::hv_frames && op.kind != OpKind::destroy);
  }
  Options no_ptwrite = options_with(5, "ptwrite");
  for (uint64_t n = 0; n < 2000; ++n) {
    Op op;
    generate(test.pool, no_ptwrite, n, op);
    ASSERT_NE(op.kind, OpKind::ptwrite);
  }
  Options only;
  only.seed = 5;
  only.only = (1ull << kMmu) | (1ull << kIret);
  for (uint64_t n = 0; n < 2000; ++n) {
    Op op;
    generate(test.pool, only, n, op);
    ASSERT_TRUE(op.kind == OpKind::mmu || op.kind == OpKind::iret);
  }
}

TEST(guest_fuzz_generate, Dom0PortWritesOnlyReachHypervisorPorts) {
  TestPool test(true);
  Options options = options_with(11);
  options.only = 1ull << kPorts;
  int writes = 0;
  for (uint64_t n = 0; n < 5000; ++n) {
    Op op;
    generate(test.pool, options, n, op);
    if (!op.port.out) continue;
    ++writes;
    for (unsigned i = 0; i < op.port.width; ++i) ASSERT_TRUE(hypervisor_owned_port(uint16_t(op.port.port + i)));
  }
  EXPECT_GT(writes, 1000);
}

// fuzz_vcpus: vCPU 0's stream (every class) and the other vCPUs' (mmu and mmuext only, seeds
// of their own) keep the rules of a pool that runs on four vCPUs.
TEST(guest_fuzz_generate, KeepsTheRulesOnSeveralVcpus) {
  TestPool test(true);
  test.pool.vcpus = 4;
  for (uint64_t vcpu = 0; vcpu < 4; ++vcpu) {
    Options options = options_with(0x2026 ^ (vcpu << 56));
    options.vcpus = 4;
    if (vcpu) options.only = (1ull << kMmu) | (1ull << kMmuext);
    for (uint64_t n = 0; n < 20000; ++n) {
      Op op;
      generate(test.pool, options, n, op);
      ASSERT_STREQ(check_rules(test.pool, op), "") << "vCPU " << vcpu << " op " << n << ": " << text_of(test.pool, op);
    }
  }
}

TEST(guest_fuzz_rules, SeveralVcpusKeepTheirVcpusAndPorts) {
  TestPool test(true);
  // Another vCPU's runstate area: fine with one vCPU (that vCPU does not exist), not beside it.
  Op area;
  area.kind = OpKind::call;
  area.restore = kRestoreVcpuAreas;
  area.call.number = __HYPERVISOR_vcpu_op;
  area.call.args[0] = VCPUOP_register_runstate_memory_area;
  area.call.args[1] = 2;
  area.call.args[2] = test.pool.buffer_va;
  EXPECT_STREQ(check_rules(test.pool, area), "");
  // A kernel port moved to vCPU 0, and the kernel L4 as a user base: the same.
  Op bind;
  bind.kind = OpKind::call;
  bind.call.number = __HYPERVISOR_event_channel_op;
  bind.call.args[0] = EVTCHNOP_bind_vcpu;
  bind.call.args[1] = test.pool.buffer_va + 64;
  auto* request = reinterpret_cast<evtchn_bind_vcpu_t*>(test.pool.buffer + 64);
  request->port = test.pool.protected_ports[0];
  request->vcpu = 0;
  EXPECT_STREQ(check_rules(test.pool, bind), "");
  Op user;
  user.kind = OpKind::mmuext;
  user.call.number = __HYPERVISOR_mmuext_op;
  auto* ext = reinterpret_cast<mmuext_op_t*>(test.pool.buffer + 128);
  *ext = mmuext_op_t{};
  ext->cmd = MMUEXT_NEW_USER_BASEPTR;
  ext->arg1.mfn = test.pool.kernel_l4_mfn;
  user.call.args[0] = test.pool.buffer_va + 128;
  user.call.args[1] = 1;
  user.call.args[3] = DOMID_SELF;
  EXPECT_STREQ(check_rules(test.pool, user), "");
  test.pool.vcpus = 4;
  EXPECT_STRNE(check_rules(test.pool, area), "");
  EXPECT_STRNE(check_rules(test.pool, bind), "");
  EXPECT_STRNE(check_rules(test.pool, user), "");
  area.call.args[1] = 4;  // beyond the running vCPUs
  EXPECT_STREQ(check_rules(test.pool, area), "");
}

TEST(guest_fuzz_rules, CatchBrokenOperations) {
  TestPool test;
  Op op;
  op.kind = OpKind::ptwrite;
  op.step_count = 1;
  op.steps[0].kind = Step::Kind::store;
  op.steps[0].table = 0;  // a clone of the kernel L4
  op.steps[0].slot = kKernelL4Slot;
  EXPECT_STRNE(check_rules(test.pool, op), "");
  op.steps[0].slot = 3;
  op.steps[0].value = (0x1001ull << 12) | kPresentBit | kWritableBit;  // a protected frame, writable
  EXPECT_STRNE(check_rules(test.pool, op), "");
  op.steps[0].value = (0x1001ull << 12) | kPresentBit;
  EXPECT_STREQ(check_rules(test.pool, op), "");

  Op call;
  call.kind = OpKind::call;
  call.call.number = 0x10000001dull;  // sched_op through a truncating hypervisor
  call.call.args[0] = SCHEDOP_shutdown;
  call.call.args[1] = test.pool.buffer_va;
  EXPECT_STRNE(check_rules(test.pool, call), "");
  call.call.args[1] = test.pool.unmapped_va;
  EXPECT_STREQ(check_rules(test.pool, call), "");

  Op base;
  base.kind = OpKind::mmuext;
  base.restore = kRestoreBase;
  base.call.number = __HYPERVISOR_mmuext_op;
  auto* ext = reinterpret_cast<mmuext_op_t*>(test.pool.buffer);
  *ext = mmuext_op_t{};
  ext->cmd = MMUEXT_NEW_BASEPTR;
  ext->arg1.mfn = test.pool.table_mfn[5];  // a scratch table that is no clone
  base.call.args[0] = test.pool.buffer_va;
  base.call.args[1] = 1;
  EXPECT_STRNE(check_rules(test.pool, base), "");
  ext->arg1.mfn = test.pool.table_mfn[1];
  EXPECT_STREQ(check_rules(test.pool, base), "");

  // A readable page is read as requests, whatever it holds: only the buffers, or nowhere.
  Op batch;
  batch.kind = OpKind::multicall;
  batch.call.number = __HYPERVISOR_multicall;
  batch.call.args[0] = test.pool.read_only_va;
  batch.call.args[1] = 3;
  EXPECT_STRNE(check_rules(test.pool, batch), "");
  batch.call.args[0] = test.pool.unmapped_va;
  EXPECT_STREQ(check_rules(test.pool, batch), "");

  // The edge page's hole is unreadable, but it has an L1: nothing may be mapped there.
  Op hole;
  hole.kind = OpKind::va_mapping;
  hole.call.number = __HYPERVISOR_update_va_mapping;
  hole.call.args[0] = test.pool.edge_va + 4096 + 0x80;
  hole.call.args[1] = (test.pool.data_mfn[0] << 12) | 3;
  EXPECT_STRNE(check_rules(test.pool, hole), "");
  hole.call.args[0] = test.pool.unmapped_va;
  EXPECT_STREQ(check_rules(test.pool, hole), "");
}

TEST(guest_fuzz_entries, StoreResults) {
  Step step;
  step.kind = Step::Kind::store;
  uint64_t current[2] = {0x1111222233334444ull, 0x5555666677778888ull}, result[8];
  step.store = StoreKind::mov32_low;
  step.value = 0xaaaaaaaabbbbbbbbull;
  ASSERT_EQ(store_result(step, current, result), 1u);
  EXPECT_EQ(result[0], 0x11112222bbbbbbbbull);
  step.store = StoreKind::mov32_high;
  store_result(step, current, result);
  EXPECT_EQ(result[0], 0xaaaaaaaa33334444ull);
  step.store = StoreKind::misaligned;
  step.operand = 4;
  ASSERT_EQ(store_result(step, current, result), 2u);
  EXPECT_EQ(result[0], 0xbbbbbbbb33334444ull);
  EXPECT_EQ(result[1], 0x55556666aaaaaaaaull);
  step.store = StoreKind::cmpxchg;
  step.operand = kUseCurrent;
  store_result(step, current, result);
  EXPECT_EQ(result[0], step.value);
  step.operand = 1;
  store_result(step, current, result);
  EXPECT_EQ(result[0], current[0]);
  step.store = StoreKind::btr;
  step.operand = 2;
  store_result(step, current, result);
  EXPECT_EQ(result[0], current[0] & ~4ull);
  TestPool test;
  EXPECT_FALSE(entry_safe(test.pool, (0x1001ull << 12) | 3));
  EXPECT_TRUE(entry_safe(test.pool, (0x2100ull << 12) | 3));
  EXPECT_TRUE(entry_safe(test.pool, (0x9000ull << 12) | 3));  // not ours: the hypervisor decides
  EXPECT_EQ(sanitize_entry(test.pool, (0x1001ull << 12) | 3), (0x1001ull << 12) | 1);
}

TEST(guest_fuzz_describe, NamesTheCallAndItsRequests) {
  TestPool test;
  Options options = options_with(3);
  options.only = 1ull << kMmu;
  bool listed = false;
  for (uint64_t n = 0; n < 50 && !listed; ++n) {
    Op op;
    generate(test.pool, options, n, op);
    std::string text = text_of(test.pool, op);
    EXPECT_EQ(text.rfind("mmu hypercall 0x1(", 0), 0u) << text;
    listed |= text.find("] ptr 0x") != std::string::npos;
  }
  EXPECT_TRUE(listed);
}

// The hv_frames class: every step kind appears; the kernel keeps what it runs on; no type on a
// frame mapped read-only only; nothing unmasks events while shared_info is unmapped; a domU's
// console ring is retyped and notified.
TEST(guest_fuzz_hv_frames, CoversTheStepsAndKeepsTheKernelAlive) {
  for (bool privileged : {true, false}) {
    TestPool test(privileged);
    Options options = options_with(0x4f);
    options.only = 1ull << kHvFrames;
    std::set<int> kinds;
    bool console_pinned = false, console_notified_after_pin = false;
    for (uint64_t n = 0; n < 20000; ++n) {
      Op op;
      generate(test.pool, options, n, op);
      ASSERT_EQ(op.kind, OpKind::hv_frames);
      ASSERT_STREQ(check_rules(test.pool, op), "") << text_of(test.pool, op);
      bool pinned = false;
      for (unsigned i = 0; i < op.hv_count; ++i) {
        const HvStep& step = op.hv[i];
        const HvFrame& frame = test.pool.hv_frames[step.frame];
        kinds.insert(int(step.kind));
        ASSERT_FALSE(frame.kernel_needs && step.kind == HvStep::Kind::unmap_own);
        ASSERT_FALSE(frame.read_only && (step.kind == HvStep::Kind::pin || step.kind == HvStep::Kind::set_gdt ||
                                         step.kind == HvStep::Kind::link || step.kind == HvStep::Kind::map_fuzz));
        if (frame.kind == HvFrameKind::console_ring && step.kind == HvStep::Kind::pin) pinned = console_pinned = true;
        if (pinned && step.kind == HvStep::Kind::notify) console_notified_after_pin = true;
      }
    }
    EXPECT_EQ(kinds.size(), unsigned(HvStep::Kind::count) - (privileged ? 1u : 0u));  // dom0: no console
    EXPECT_EQ(console_pinned, !privileged);
    EXPECT_EQ(console_notified_after_pin, !privileged);
  }
}

// The destroy class: dom0's only, on the class's own domain ids, racing steps before a destroy.
TEST(guest_fuzz_destroy, RacesTheTeardownOfItsOwnDomains) {
  TestPool dom0(true), domu(false);
  Options options = options_with(0xd1e);
  options.only = 1ull << kDestroy;
  std::set<int> kinds;
  unsigned racing = 0, recreated = 0;
  for (uint64_t n = 0; n < 5000; ++n) {
    Op op;
    generate(dom0.pool, options, n, op);
    ASSERT_EQ(op.kind, OpKind::destroy);
    ASSERT_STREQ(check_rules(dom0.pool, op), "") << text_of(dom0.pool, op);
    bool destroyed = false;
    for (unsigned i = 0; i < op.dom_count; ++i) {
      kinds.insert(int(op.dom[i].kind));
      ASSERT_LT(op.dom[i].domain, kDestroyDomainCount);
      if (op.dom[i].racing) {
        ASSERT_FALSE(destroyed) << "a racing step after the destroy";
        ++racing;
      }
      destroyed |= op.dom[i].kind == DomStep::Kind::destroy;
      recreated += op.dom[i].kind == DomStep::Kind::recreate;
    }
    ASSERT_TRUE(destroyed);
    Op other;
    generate(domu.pool, options, n, other);
    ASSERT_NE(other.kind, OpKind::destroy);  // a domU has no domain control
  }
  EXPECT_EQ(kinds.size(), unsigned(DomStep::Kind::count));
  EXPECT_GT(racing, 5000u);
  EXPECT_GT(recreated, 3000u);
  for (uint16_t id : kDestroyDomains) EXPECT_GE(id, 8u);  // never a boot domain
}

TEST(guest_fuzz_rules, CatchBrokenHvFramesAndDestroyOperations) {
  TestPool test(false);
  auto one = [](HvStep::Kind kind, uint8_t frame) {
    Op op;
    op.kind = OpKind::hv_frames;
    op.hv_count = 1;
    op.hv[0].kind = kind;
    op.hv[0].frame = frame;
    return op;
  };
  // Frames: 0 console ring, 1 shared_info, 2 runstate, 3 time area, 4 hypercall page.
  EXPECT_STRNE(check_rules(test.pool, one(HvStep::Kind::unmap_own, 4)), "");
  EXPECT_STREQ(check_rules(test.pool, one(HvStep::Kind::unmap_own, 0)), "");
  EXPECT_STRNE(check_rules(test.pool, one(HvStep::Kind::pin, 4)), "");
  Op pin = one(HvStep::Kind::pin, 0);
  pin.hv[0].level = 1;
  EXPECT_STREQ(check_rules(test.pool, pin), "");
  Op gdt = one(HvStep::Kind::set_gdt, 0);
  EXPECT_STRNE(check_rules(test.pool, gdt), "");
  gdt.restore = kRestoreGdt;
  EXPECT_STREQ(check_rules(test.pool, gdt), "");
  Op map = one(HvStep::Kind::map_fuzz, 0);
  map.hv[0].table = 20;
  map.hv[0].slot = 3;
  map.hv[0].value = (0x11bcull << 12) | kPresentBit | kWritableBit;  // the console ring writable
  EXPECT_STRNE(check_rules(test.pool, map), "");
  map.hv[0].value &= ~kWritableBit;
  EXPECT_STREQ(check_rules(test.pool, map), "");
  map.hv[0].table = 0;
  map.hv[0].slot = kKernelL4Slot;  // a clone's kernel slot
  EXPECT_STRNE(check_rules(test.pool, map), "");
  Op area = one(HvStep::Kind::register_area, 1);  // over shared_info
  area.restore = kRestoreVcpuAreas;
  EXPECT_STRNE(check_rules(test.pool, area), "");
  area.hv[0].frame = 2;
  EXPECT_STREQ(check_rules(test.pool, area), "");
  Op block = one(HvStep::Kind::unmap_own, 1);
  block.hv_count = 2;
  block.hv[1].kind = HvStep::Kind::block;
  block.arm_timer = true;
  EXPECT_STRNE(check_rules(test.pool, block), "");  // the upcall would read an unmapped shared_info
  block.hv[0].kind = HvStep::Kind::yield;
  EXPECT_STREQ(check_rules(test.pool, block), "");

  Op destroy;
  destroy.kind = OpKind::destroy;
  destroy.dom_count = 1;
  destroy.dom[0].kind = DomStep::Kind::destroy;
  EXPECT_STREQ(check_rules(test.pool, destroy), "");
  destroy.dom[0].domain = kDestroyDomainCount;  // no domain of the class's
  EXPECT_STRNE(check_rules(test.pool, destroy), "");
  destroy.dom[0].domain = 0;
  destroy.dom[0].kind = DomStep::Kind::populate;
  destroy.dom[0].order = 9;
  destroy.dom[0].count = 64;
  EXPECT_STRNE(check_rules(test.pool, destroy), "");
}
