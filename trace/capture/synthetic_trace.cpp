#include "trace/capture/synthetic_trace.h"

#include "trace/capture/trace_writer.h"
#include "trace/format/ring.h"

#include <xen/xen.h>

namespace trace {
namespace {

class Producer {
public:
    Producer(const SyntheticOptions& o, TraceWriter& writer)
        : o_(o), writer_(writer), data_(o.ring_bytes / 4 + 1), ring_(&header_, data_.data(), o.ring_bytes)
    {
        ring_.reset();
    }

    void emit(uint32_t event, std::initializer_list<uint32_t> extra)
    {
        tsc_ += 1000;
        ring_.write(make_record(event, tsc_, extra.begin(), unsigned(extra.size())), {0, 0});
    }

    void emit64(uint32_t event, uint64_t a, std::initializer_list<uint32_t> more = {})
    {
        uint32_t words[7] = {uint32_t(a), uint32_t(a >> 32)};
        unsigned n = 2;
        for (uint32_t w : more)
            words[n++] = w;
        tsc_ += 1000;
        ring_.write(make_record(event, tsc_, words, n), {0, 0});
    }

    void drain()
    {
        std::vector<uint8_t> window(o_.ring_bytes);
        uint32_t n = ring_.copy_out(window.data(), o_.ring_bytes);
        if (n)
            writer_.window(0, window.data(), n);
    }

    void fork(unsigned id);

private:
    const SyntheticOptions& o_;
    TraceWriter& writer_;
    t_buf header_{};
    std::vector<uint32_t> data_;
    TraceRing ring_;
    uint64_t tsc_ = 1000000;
};

void Producer::fork(unsigned id)
{
    using namespace events;
    emit(kOperationBegin, {uint32_t(OperationKind::fork), id});
    emit(kPvHypercallV2, {uint32_t(__HYPERVISOR_mmuext_op | TRC_PV_HYPERCALL_V2_ARG_32(1)), 1u});
    for (unsigned t = 0; t < o_.tables_per_fork; ++t) {
        uint64_t mfn = 0x1000 + id * 16 + t;
        uint64_t va = 0x400000ull + t * 0x200000;
        if (o_.writable) {
            emit(kPvPageFault, {uint32_t(0x401000), 0, uint32_t(va), 0, 3});
            emit64(kPtwrUnhook, mfn, {t});
            emit(kTlbFlush, {uint32_t(FlushScope::local), uint32_t(FlushReason::unhook)});
            emit64(kPtwrRehook, mfn, {o_.ptes_per_table, o_.ptes_per_table, 0});
        } else {
            for (unsigned p = 0; p < o_.ptes_per_table; ++p) {
                emit(kPvPageFault, {uint32_t(0x401000), 0, uint32_t(va + p * 8), 0, 3});
                uint32_t words[6] = {0x1067 + p, 0, uint32_t(va + p * 8), 0, 0x401000, 0};
                tsc_ += 1000;
                ring_.write(make_record(kPvPtwrEmulation, tsc_, words, 6), {0, 0});
            }
        }
    }
    if (o_.mid_fork_drain_cycles) {  // dom0 copied records out in the middle of the fork
        uint64_t start = tsc_ + 1000;
        tsc_ += o_.mid_fork_drain_cycles;
        emit64(kCaptureDrain, start, {4096});
    }
    emit(kTlbFlush, {uint32_t(FlushScope::all), uint32_t(FlushReason::base_pointer)});
    emit(kOperationEnd, {uint32_t(OperationKind::fork), id});
}

} // namespace

std::vector<uint8_t> make_synthetic_trace(const SyntheticOptions& o)
{
    TraceWriter writer;
    RecordFields hz;
    hz.event = events::kTscFrequency;
    hz.extra_count = 2;
    hz.extra[0] = uint32_t(o.tsc_hz);
    hz.extra[1] = uint32_t(o.tsc_hz >> 32);
    writer.window(0, std::vector<RecordFields>{hz});
    Producer producer(o, writer);
    for (unsigned i = 0; i < o.forks; ++i) {
        producer.fork(i);
        if (o.drain_each_fork)
            producer.drain();
    }
    producer.drain(); // frees the ring, so the audit record is preceded by any lost-records marker
    producer.emit(events::kAuditResult, {1024, 0});
    producer.drain();
    return writer.bytes();
}

} // namespace trace
