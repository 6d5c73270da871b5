// fuzz_vcpus=<n>: the fuzzing domain on n vCPUs. vCPU 0 runs the campaign's own stream (every
// class, its checks as with one vCPU); vCPUs 1..n-1 are brought up as the kernel brings up its
// own (kernel/smp/vcpus.h) and each runs a stream of its own at the same time: the mmu and
// mmuext classes (mmu_update batches, pins and unpins, base pointers, flushes...) of seed
// `seed ^ (k << 56)` for vCPU k, on the same pool of scratch tables and frames, so they race
// vCPU 0's direct stores, relinks and pins and each other's. Each has its own operation buffer
// and edge page (window pages) and a copy of the pool that names them; the rules are the
// pool's, checked before every operation as on vCPU 0.
//
// The streams meet at a barrier every fuzz_audit operations (vCPU 0 hands each other vCPU its
// next segment, runs its own, then waits for all of them): the audit and the checks of the
// address space run there, with nothing in flight. What a racing operation returns cannot be
// predicted, so the other vCPUs check what holds whatever the order: the hypervisor answers
// 0 or one of Xen's error codes, and operations that cannot fail for any interleaving (local
// flushes) succeed.
#include <stdint.h>
#include <xen/xen.h>

#include "arch/xen.h"
#include "kernel/console/console.h"
#include "kernel/console/panic.h"
#include "kernel/smp/vcpus.h"
#include "fuzz/fuzz_internal.h"
#include "fuzz/generator/fuzz_entries.h"
#include "lib/atomic.h"
#include "pv-kernel-patches/pv_ops.h"

extern "C" long fuzz_hypercall(uint64_t call, uint64_t, uint64_t);

namespace kernel::fuzz {
namespace {

using namespace lib::fuzz;

// vCPU k's pages in the window: four buffer pages, the edge page, then a hole left unmapped.
constexpr uint64_t kRacerPages = kWindowVa + 0x100000, kRacerStride = 0x10000;
constexpr uint64_t kRacerBufferSize = 4 * 4096, kRacerEdge = kRacerBufferSize;
// How long vCPU 0 waits at a barrier (guest time; -icount makes it instruction counts).
constexpr uint64_t kWindowWritable = 0x63;  // present, writable, accessed, dirty
constexpr uint64_t kBarrierNs = 300'000'000'000ull;

// What Xen's mmu_update and mmuext_op may answer (negated): EPERM, ENOENT, ESRCH, EINTR,
// EAGAIN, ENOMEM, EACCES, EFAULT, EBUSY, EEXIST, EXDEV, EINVAL, ENOSPC, ERANGE, EDEADLK, ENOSYS,
// EILSEQ, EOPNOTSUPP. Anything else (a positive value, -ERESTART leaking out, a made-up code)
// is a wrong answer.
constexpr int kLegalErrors[] = {1, 2, 3, 4, 11, 12, 13, 14, 16, 17, 18, 22, 28, 34, 35, 38, 84, 95};

struct Racer {
  Pool pool;
  Options options;
  Op op;
  RacerStats stats;
  uint64_t first = 0, count = 0;
  bool lost = false;  // missed a barrier: no more segments for it
};

Racer racers[kMaxVcpus];
unsigned racer_count = 0;  // vCPUs in all (vCPU 0 included)

bool legal(long rc) {
  if (rc == 0) return true;
  for (int e : kLegalErrors)
    if (rc == -e) return true;
  return false;
}

void record(Racer& r, uint64_t n, long rc) {
  unsigned bucket = rc >= 0 ? (rc == 0 ? 0 : kAnswerBuckets - 1)
                            : (-rc < long(kAnswerBuckets - 1) ? unsigned(-rc) : kAnswerBuckets - 1);
  ++r.stats.answers[bucket];
  if (rc < 0) ++r.stats.errors;
  if (legal(rc)) return;
  if (r.stats.illegal++ < 4) {
    print(
        "fuzz: vCPU %u op %lu: the hypervisor answered %ld (not one of Xen's answers): call %lx (%lx, %lx, %lx, %lx)\n",
        unsigned(&r - racers), n, rc, r.op.call.number, r.op.call.args[0], r.op.call.args[1], r.op.call.args[2],
        r.op.call.args[3]);
  }
}

// The state an mmuext operation may have left on this vCPU, put back (vCPU 0's restore() does
// the same for its own).
void put_back_own_state(const Campaign& c) {
  pv::ops.raw_mmuext(MMUEXT_NEW_USER_BASEPTR, 0);
  pv::ops.raw_mmuext(MMUEXT_NEW_BASEPTR, c.pool.kernel_l4_mfn);
  mmuext_op_t op{};
  op.cmd = MMUEXT_SET_LDT;
  arch::hypercall(__HYPERVISOR_mmuext_op, reinterpret_cast<uint64_t>(&op), 1, 0, DOMID_SELF);
}

// The direct-map slots of the scratch frames are the fuzzer's to write, but vCPU 0 reads the
// scratch tables through those addresses between its checks and its stores (rebuild, store,
// the walks), which only holds while nobody else unmaps them: the other vCPUs' batches that
// write one of them are not run (counted as skipped). Requests are read where the batch is.
const uint8_t* batch_bytes(const Racer& r, uint64_t va, uint64_t bytes) {
  const Pool& p = r.pool;
  if (va >= p.buffer_va && va - p.buffer_va + bytes <= p.buffer_size) return p.buffer + (va - p.buffer_va);
  if (va >= p.edge_va && va - p.edge_va + bytes <= 4096) return p.edge + (va - p.edge_va);
  return nullptr;
}

bool writes_direct_map(const Racer& r) {
  if (r.op.kind != OpKind::mmu) return false;
  const uint64_t va = r.op.call.args[0], count = r.op.call.args[1];
  for (uint64_t i = 0; i < count && i < 512; ++i) {
    const uint8_t* bytes = batch_bytes(r, va + i * 16, 16);
    if (!bytes) break;  // the hypervisor stops there too (a fault)
    uint64_t ptr;
    __builtin_memcpy(&ptr, bytes, 8);
    ptr &= ~7ull;
    for (unsigned k = 0; k < kMaxTables + kMaxData; ++k)
      if (r.pool.direct_map_slot_ma[k] && ptr == r.pool.direct_map_slot_ma[k]) return true;
  }
  return false;
}

// One segment of vCPU `id`'s stream (runs on that vCPU).
long run_segment(uint64_t id) {
  Racer& r = racers[id];
  const Campaign& c = campaign;
  for (uint64_t n = r.first; n < r.first + r.count; ++n) {
    generate(r.pool, r.options, n, r.op);
    if (r.op.kind != OpKind::mmu && r.op.kind != OpKind::mmuext) {
      ++r.stats.other;
      continue;
    }
    if (*check_rules(r.pool, r.op)) {
      ++r.stats.rejected;
      continue;
    }
    if (writes_direct_map(r)) {
      ++r.stats.skipped;
      continue;
    }
    ++r.stats.ops;
    long rc = fuzz_hypercall(reinterpret_cast<uint64_t>(&r.op.call), 0, 0);
    record(r, n, rc);
    if (r.op.restore & (kRestoreBase | kRestoreLdt)) put_back_own_state(c);
    // A local flush cannot fail whatever the others do.
    mmuext_op_t flush{};
    flush.cmd = MMUEXT_TLB_FLUSH_LOCAL;
    long flushed = arch::hypercall(__HYPERVISOR_mmuext_op, reinterpret_cast<uint64_t>(&flush), 1, 0, DOMID_SELF);
    if (flushed != 0 && r.stats.illegal++ < 4)
      print("fuzz: vCPU %u op %lu: a local TLB flush answered %ld\n", unsigned(id), n, flushed);
  }
  put_back_own_state(c);
  return 0;
}

}  // namespace

bool smp_start(Campaign& c) {
  unsigned wanted = unsigned(c.options.vcpus);
  racer_count = 1;
  if (wanted <= 1) return true;
  unsigned have = smp::vcpu_count();
  if (have < wanted) {
    print("fuzz: fuzz_vcpus=%u but the domain has %u vCPUs\n", wanted, have);
    return false;
  }
  if (long rc = smp::init(); rc != 0) {
    print("fuzz: vCPU 0's IPI port: %ld\n", rc);
    return false;
  }
  for (unsigned id = 1; id < wanted; ++id) {
    smp::StartSteps steps = smp::start(id);
    if (!steps.ok()) {
      print("fuzz: vCPU %u not brought up (%ld %ld %ld %ld %ld)\n", id, steps.bind_ipi, steps.bind_timer,
            steps.register_info, steps.initialise, steps.up);
      return false;
    }
  }
  racer_count = wanted;
  return true;
}

void smp_prepare(Campaign& c) {
  for (unsigned id = 1; id < racer_count; ++id) {
    Racer& r = racers[id];
    r.pool = c.pool;
    r.options = c.options;
    r.options.seed = c.options.seed ^ (uint64_t(id) << 56);
    r.options.only = (1ull << kMmu) | (1ull << kMmuext);
    uint64_t base = kRacerPages + (id - 1) * kRacerStride;
    for (uint64_t page = 0; page <= kRacerEdge; page += 4096) map_window_page(base + page, kWindowWritable);
    r.pool.buffer = reinterpret_cast<uint8_t*>(base);
    r.pool.buffer_va = base;
    r.pool.buffer_size = kRacerBufferSize;
    r.pool.edge = reinterpret_cast<uint8_t*>(base + kRacerEdge);
    r.pool.edge_va = base + kRacerEdge;
    if (leaf_entry(c, base + kRacerEdge + 4096) & 1) panic("fuzz: vCPU %u's hole is mapped", id);
  }
  if (racer_count > 1)
    print(
        "fuzz: %u vCPUs: vCPU 0 runs seed 0x%lx, vCPU k the mmu and mmuext classes of seed 0x%lx ^ (k << 56), "
        "meeting every %lu operations\n",
        racer_count, c.options.seed, c.options.seed, c.options.audit_every);
}

void smp_post(uint64_t first, uint64_t count) {
  for (unsigned id = 1; id < racer_count; ++id) {
    Racer& r = racers[id];
    if (r.lost) continue;
    r.first = first;
    r.count = count;
    smp::post(id, run_segment, id);
  }
}

void smp_barrier(Campaign& c, uint64_t op) {
  for (unsigned id = 1; id < racer_count; ++id) {
    Racer& r = racers[id];
    if (r.lost) continue;
    long result;
    uint64_t deadline = smp::now_ns() + kBarrierNs;
    bool done = false;
    // Short waits: a lost wake-up costs one of them, not the whole deadline.
    while (!(done = smp::wait(id, result, 10'000'000)) && smp::now_ns() < deadline) {
    }
    if (!done) {
      r.lost = true;
      ++c.stats.barriers_missed;
      print("fuzz: vCPU %u did not reach the barrier after op %lu (segment %lu-%lu)\n", id, op, r.first,
            r.first + r.count - 1);
    }
  }
}

RacerStats smp_totals() {
  RacerStats total;
  for (unsigned id = 1; id < racer_count; ++id) {
    const RacerStats& s = racers[id].stats;
    total.ops += s.ops;
    total.errors += s.errors;
    total.illegal += s.illegal;
    total.rejected += s.rejected;
    total.other += s.other;
    total.skipped += s.skipped;
    for (unsigned i = 0; i < kAnswerBuckets; ++i) total.answers[i] += s.answers[i];
  }
  return total;
}

unsigned smp_vcpus() { return racer_count; }

void smp_report(Campaign& c) {
  if (racer_count <= 1) return;
  RacerStats t = smp_totals();
  print(
      "fuzz: smp: %u vCPUs, %lu operations on vCPUs 1-%u (%lu errors), %lu wrong answers, %lu refused, "
      "%lu barriers missed, %lu skipped (writing a direct-map slot)\n",
      racer_count, t.ops, racer_count - 1, t.errors, t.illegal, t.rejected, c.stats.barriers_missed, t.skipped);
  print("fuzz: smp answers:");
  for (unsigned i = 0; i < kAnswerBuckets; ++i)
    if (t.answers[i]) print(" %s%u:%lu", i == 0 ? "" : "-", i, t.answers[i]);
  print("\n");
}

}  // namespace kernel::fuzz
