// The FIFO event-channel ABI's rules (domain/event_fifo): the control block's placement, the
// event word's states (pending, masked, linked), the queues' HEAD and LINK as the guest sees
// them, priorities, events raised before their array page exists, and a guest that scribbles
// on its words.
#include <gtest/gtest.h>
#include <atomic>
#include <thread>
#include <vector>
#include "domain/event_fifo.h"

namespace evtchn_fifo {
namespace {
// Frames 1 (control block) and 2, 3 (array pages) of a tiny machine.
struct Fifo : ::testing::Test {
  alignas(4096) uint8_t memory[4 * kPageSize]{};
  DomainFifo fifo;
  xen_ulong_t pending_2level[16]{};
  static constexpr uint64_t kControlFrame = 1, kArrayFrame = 2, kSecondArrayFrame = 3;
  static constexpr uint32_t kOffset = 64;

  void start_fifo() { start(fifo, memory, kControlFrame, kOffset, pending_2level, 1024); }
  void start_with_page() {
    start_fifo();
    add_array_page(fifo, kArrayFrame);
  }
  evtchn_fifo_control_block& control() {
    return *reinterpret_cast<evtchn_fifo_control_block*>(memory + kControlFrame * kPageSize + kOffset);
  }
  event_word_t& word(unsigned port) { return reinterpret_cast<event_word_t*>(memory + kArrayFrame * kPageSize)[port]; }
  // What a guest does with the HEAD of a queue: clear LINKED (and LINK), return the next port.
  uint32_t consume(unsigned port) {
    const event_word_t before = word(port);
    word(port) = before & ~(kLinked | kLinkMask);
    return before & kLinkMask;
  }
};

TEST(FifoControlOffset, WithinThePageAndEightByteAligned) {
  EXPECT_EQ(check_control_offset(0), 0);
  EXPECT_EQ(check_control_offset(8), 0);
  EXPECT_EQ(check_control_offset(kPageSize - sizeof(evtchn_fifo_control_block)), 0);  // 4024
  EXPECT_EQ(check_control_offset(kPageSize - sizeof(evtchn_fifo_control_block) + 8), -XEN_EINVAL);
  EXPECT_EQ(check_control_offset(4), -XEN_EINVAL);
  EXPECT_EQ(check_control_offset(4092), -XEN_EINVAL);
  EXPECT_EQ(check_control_offset(1ull << 32), -XEN_EINVAL);
}

TEST_F(Fifo, AnEventBecomesTheHeadOfItsQueueAndAsksForAnUpcall) {
  start_with_page();
  EXPECT_TRUE(set_pending(fifo, 5));
  EXPECT_EQ(word(5), kPending | kLinked);
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 5u);
  EXPECT_EQ(control().ready, 1u << EVTCHN_FIFO_PRIORITY_DEFAULT);
}

TEST_F(Fifo, ASecondEventIsLinkedBehindTheFirstWithoutAnotherUpcall) {
  start_with_page();
  ASSERT_TRUE(set_pending(fifo, 5));
  EXPECT_FALSE(set_pending(fifo, 9));
  EXPECT_EQ(word(5), kPending | kLinked | 9u);
  EXPECT_EQ(word(9), kPending | kLinked);
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 5u);
}

TEST_F(Fifo, ALinkedEventIsNotLinkedTwice) {
  start_with_page();
  ASSERT_TRUE(set_pending(fifo, 5));
  ASSERT_FALSE(set_pending(fifo, 9));
  EXPECT_FALSE(set_pending(fifo, 5));
  EXPECT_EQ(word(5), kPending | kLinked | 9u);
  EXPECT_EQ(word(9), kPending | kLinked);
}

TEST_F(Fifo, AConsumedTailMakesTheNextEventTheHead) {
  start_with_page();
  ASSERT_TRUE(set_pending(fifo, 5));
  EXPECT_EQ(consume(5), 0u);
  control().ready = 0;  // the guest took the READY bit
  EXPECT_TRUE(set_pending(fifo, 9));
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 9u);
  EXPECT_EQ(word(5) & kLinkMask, 0u);
}

TEST_F(Fifo, NoUpcallWhileReadyIsStillSet) {
  start_with_page();
  ASSERT_TRUE(set_pending(fifo, 5));
  consume(5);
  EXPECT_FALSE(set_pending(fifo, 9));  // READY still set: the guest is still looking
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 9u);
}

TEST_F(Fifo, AMaskedEventIsPendingButNotLinkedUntilUnmasked) {
  start_with_page();
  word(5) = kMasked;
  EXPECT_FALSE(set_pending(fifo, 5));
  EXPECT_EQ(word(5), kMasked | kPending);
  EXPECT_EQ(control().ready, 0u);
  EXPECT_TRUE(unmask(fifo, 5));
  EXPECT_EQ(word(5), kPending | kLinked);
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 5u);
}

TEST_F(Fifo, UnmaskingAnEventNotPendingLinksNothing) {
  start_with_page();
  word(5) = kMasked;
  EXPECT_FALSE(unmask(fifo, 5));
  EXPECT_EQ(word(5), 0u);
  EXPECT_EQ(control().ready, 0u);
}

TEST_F(Fifo, PrioritiesPickTheQueue) {
  start_with_page();
  EXPECT_EQ(set_priority(fifo, 5, EVTCHN_FIFO_PRIORITY_MIN + 1), -XEN_EINVAL);
  EXPECT_EQ(set_priority(fifo, 5, 0xffffffffu), -XEN_EINVAL);
  EXPECT_EQ(set_priority(fifo, 5, EVTCHN_FIFO_PRIORITY_MAX), 0);
  EXPECT_TRUE(set_pending(fifo, 5));
  EXPECT_TRUE(set_pending(fifo, 6));  // default priority: another queue, its own READY bit
  EXPECT_EQ(control().head[0], 5u);
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 6u);
  EXPECT_EQ(control().ready, 1u | 1u << EVTCHN_FIFO_PRIORITY_DEFAULT);
}

TEST_F(Fifo, APortMovedToAnotherQueueLeavesItsOldQueueEmpty) {
  start_with_page();
  ASSERT_TRUE(set_pending(fifo, 5));  // tail of queue 7
  consume(5);
  control().ready = 0;
  ASSERT_EQ(set_priority(fifo, 5, 3), 0);
  EXPECT_TRUE(set_pending(fifo, 5));
  EXPECT_EQ(control().head[3], 5u);
  // Queue 7 is empty: port 9 becomes its HEAD instead of going behind 5, now on queue 3.
  set_pending(fifo, 9);
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 9u);
  EXPECT_EQ(word(5) & kLinkMask, 0u);
}

TEST_F(Fifo, ALinkedEventStaysInItsQueueWhenItsPriorityChanges) {
  start_with_page();
  ASSERT_TRUE(set_pending(fifo, 5));
  ASSERT_EQ(set_priority(fifo, 5, 1), 0);
  EXPECT_FALSE(set_pending(fifo, 5));
  EXPECT_EQ(control().head[1], 0u);
  EXPECT_EQ(control().ready, 1u << EVTCHN_FIFO_PRIORITY_DEFAULT);
}

TEST_F(Fifo, EventsRaisedBeforeTheirPageAreRaisedWhenItComes) {
  start_fifo();
  EXPECT_EQ(fifo.word(5), nullptr);
  EXPECT_FALSE(set_pending(fifo, 5));
  EXPECT_FALSE(is_pending(fifo, 5));
  EXPECT_TRUE(add_array_page(fifo, kArrayFrame));
  EXPECT_EQ(word(5), kPending | kLinked);
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 5u);
}

TEST_F(Fifo, TwoLevelPendingBitsAreCarriedOverAtStart) {
  pending_2level[0] = 1ul << 3 | 1ul << 0;  // port 0 never counts
  pending_2level[1] = 1ul << 2;             // port 66
  start_fifo();
  word(66) = kMasked;  // the guest's fresh page masks what it wants
  EXPECT_TRUE(add_array_page(fifo, kArrayFrame));
  EXPECT_EQ(word(0), 0u);
  EXPECT_EQ(word(3), kPending | kLinked);
  EXPECT_EQ(word(66), kPending | kMasked);
}

TEST_F(Fifo, AClosedPortForgetsADeferredEvent) {
  start_fifo();
  set_pending(fifo, 5);
  clear_pending(fifo, 5);
  EXPECT_FALSE(add_array_page(fifo, kArrayFrame));
  EXPECT_EQ(word(5), 0u);
}

TEST_F(Fifo, ClearPendingLeavesTheLinkToTheGuest) {
  start_with_page();
  set_pending(fifo, 5);
  clear_pending(fifo, 5);
  EXPECT_EQ(word(5), kLinked);
  EXPECT_TRUE(is_linked(fifo, 5));
  EXPECT_FALSE(is_pending(fifo, 5));
}

TEST_F(Fifo, TheArrayGrowsPageByPageUpToXensLimit) {
  start_fifo();
  EXPECT_EQ(fifo.word_count(), 0u);
  for (unsigned i = 0; i < kMaxArrayPages; ++i) {
    ASSERT_EQ(check_room_for_page(fifo), 0);
    add_array_page(fifo, i == 1 ? kSecondArrayFrame : kArrayFrame);
  }
  EXPECT_EQ(check_room_for_page(fifo), -XEN_ENOSPC);
  EXPECT_EQ(fifo.word_count(), unsigned(EVTCHN_FIFO_NR_CHANNELS));
  EXPECT_EQ(reinterpret_cast<uint8_t*>(fifo.word(kWordsPerPage + 2)), memory + kSecondArrayFrame * kPageSize + 8);
}

TEST_F(Fifo, PortsBeyondTheTableAreIgnored) {
  start_fifo();
  for (unsigned i = 0; i < 2; ++i) add_array_page(fifo, kArrayFrame);
  EXPECT_FALSE(set_pending(fifo, kPortCapacity));
  EXPECT_EQ(set_priority(fifo, kPortCapacity + 5, 2), 0);
  reset_port(fifo, kPortCapacity);
  clear_pending(fifo, kPortCapacity);
  EXPECT_EQ(word(0), 0u);  // port 1024 is word 0 of the second page (the same frame here)
}

TEST_F(Fifo, NothingHappensBeforeStart) {
  EXPECT_FALSE(set_pending(fifo, 5));
  EXPECT_FALSE(unmask(fifo, 5));
  EXPECT_FALSE(is_linked(fifo, 5));
  clear_pending(fifo, 5);
}

// A guest's garbage in its words: LINK values, BUSY, every bit. Nothing the hypervisor does
// depends on them beyond the flag bits; its own tails keep the queues.
TEST_F(Fifo, GarbageInTheWordsIsNeverFollowed) {
  start_with_page();
  word(5) = kLinkMask;  // unlinked, with a LINK pointing far away
  EXPECT_TRUE(set_pending(fifo, 5));
  EXPECT_EQ(word(5), kPending | kLinked | kLinkMask);
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 5u);
  word(9) = kBusy;
  EXPECT_FALSE(set_pending(fifo, 9));
  EXPECT_EQ(word(5), kPending | kLinked | 9u);  // the link replaced the garbage
  word(9) = 0xffffffffu;                        // every flag: linked, masked
  EXPECT_FALSE(set_pending(fifo, 9));
  EXPECT_EQ(word(9), 0xffffffffu);
  word(9) = kLinked | 3u;  // the tail linked to 3, not by us: the next link overwrites it
  EXPECT_FALSE(set_pending(fifo, 11));
  EXPECT_EQ(word(9), kLinked | 11u);
  EXPECT_EQ(fifo.vcpus[0].tails[EVTCHN_FIFO_PRIORITY_DEFAULT], 11u);
}

// A hostile guest flipping MASKED on the tail word as fast as it can while the hypervisor links
// behind it: every link ends after a bounded number of tries, linked or given up (counted),
// and never leaves BUSY set.
TEST_F(Fifo, ATailTheGuestKeepsChangingCostsBoundedTries) {
  start_with_page();
  std::atomic<bool> stop{false};
  std::thread guest([&] {
    while (!stop.load()) __atomic_fetch_xor(&word(5), kMasked, __ATOMIC_SEQ_CST);
  });
  constexpr unsigned kRounds = 2000;
  unsigned linked = 0;
  for (unsigned round = 0; round < kRounds; ++round) {
    __atomic_and_fetch(&word(5), kMasked, __ATOMIC_SEQ_CST);
    __atomic_or_fetch(&word(5), kPending | kLinked, __ATOMIC_SEQ_CST);
    fifo.vcpus[0].tails[EVTCHN_FIFO_PRIORITY_DEFAULT] = 5;
    word(6) = 0;
    EXPECT_FALSE(set_pending(fifo, 6));
    const event_word_t tail = __atomic_load_n(&word(5), __ATOMIC_SEQ_CST);
    EXPECT_EQ(tail & kBusy, 0u);
    linked += (tail & kLinkMask) == 6;
  }
  stop = true;
  guest.join();
  EXPECT_EQ(linked + fifo.links_given_up, kRounds);
}

TEST_F(Fifo, AResetPortHasTheDefaultPriorityAgain) {
  start_with_page();
  set_priority(fifo, 5, 2);
  reset_port(fifo, 5);
  EXPECT_TRUE(set_pending(fifo, 5));
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 5u);
}

TEST_F(Fifo, StopForgetsEverything) {
  start_with_page();
  set_pending(fifo, 5);
  stop(fifo);
  EXPECT_FALSE(fifo.active);
  EXPECT_EQ(fifo.array_pages, 0u);
  EXPECT_EQ(fifo.vcpus[0].tails[EVTCHN_FIFO_PRIORITY_DEFAULT], 0u);
  EXPECT_EQ(fifo.word(5), nullptr);
}

// Per vCPU: each vCPU has its own control block and queues (EVTCHNOP_init_control names it);
// an event goes to the queues of the vCPU its port notifies, and is dropped for a vCPU with no
// control block, as Xen's evtchn_fifo_set_pending drops it.
struct FifoVcpus : Fifo {
  static constexpr uint32_t kSecondOffset = 1024;  // vCPU 1's block in the same frame
  evtchn_fifo_control_block& control_of_1() {
    return *reinterpret_cast<evtchn_fifo_control_block*>(memory + kControlFrame * kPageSize + kSecondOffset);
  }
};

TEST_F(FifoVcpus, EachVcpuHasOneControlBlock) {
  start_with_page();
  EXPECT_TRUE(has_control_block(fifo, 0));
  EXPECT_FALSE(has_control_block(fifo, 1));
  EXPECT_EQ(add_control_block(fifo, 1, kControlFrame, kSecondOffset), 0);
  EXPECT_TRUE(has_control_block(fifo, 1));
  EXPECT_EQ(add_control_block(fifo, 1, kControlFrame, kSecondOffset), -XEN_EINVAL) << "a second one";
  EXPECT_EQ(add_control_block(fifo, 0, kControlFrame, kSecondOffset), -XEN_EINVAL);
  EXPECT_EQ(add_control_block(fifo, kMaxVcpus, kControlFrame, kSecondOffset), -XEN_ENOENT);
  EXPECT_FALSE(has_control_block(fifo, kMaxVcpus));
}

TEST_F(FifoVcpus, AnEventGoesToTheQueuesOfItsVcpu) {
  start_with_page();
  ASSERT_EQ(add_control_block(fifo, 1, kControlFrame, kSecondOffset), 0);
  EXPECT_TRUE(set_pending(fifo, 5, 1));
  EXPECT_EQ(control_of_1().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 5u);
  EXPECT_EQ(control_of_1().ready, 1u << EVTCHN_FIFO_PRIORITY_DEFAULT);
  EXPECT_EQ(control().ready, 0u) << "vCPU 0 is not told";
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 0u);
  EXPECT_TRUE(set_pending(fifo, 9, 0)) << "vCPU 0's queue is empty: its own HEAD and READY";
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 9u);
  EXPECT_EQ(word(5), kPending | kLinked) << "nothing linked behind vCPU 1's tail";
}

TEST_F(FifoVcpus, AnEventForAVcpuWithoutAControlBlockIsDropped) {
  start_with_page();
  EXPECT_FALSE(set_pending(fifo, 5, 2));
  EXPECT_EQ(word(5), 0u);
  EXPECT_FALSE(unmask(fifo, 5, 2));
}

// A port moved to another vCPU: its next link goes to the new vCPU's queue, and the old
// queue's tail is forgotten once the guest consumed it there.
TEST_F(FifoVcpus, APortMovedToAnotherVcpuLinksThereNext) {
  start_with_page();
  ASSERT_EQ(add_control_block(fifo, 1, kControlFrame, kSecondOffset), 0);
  ASSERT_TRUE(set_pending(fifo, 5, 0));
  consume(5);
  word(5) &= ~kPending;
  EXPECT_TRUE(set_pending(fifo, 5, 1));
  EXPECT_EQ(control_of_1().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 5u);
  EXPECT_EQ(fifo.vcpus[0].tails[EVTCHN_FIFO_PRIORITY_DEFAULT], 0u);
  EXPECT_EQ(fifo.vcpus[1].tails[EVTCHN_FIFO_PRIORITY_DEFAULT], 5u);
  control().ready = 0;
  EXPECT_TRUE(set_pending(fifo, 9, 0)) << "vCPU 0's queue is empty: 9 is not linked behind 5";
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 9u);
  EXPECT_EQ(word(5), kPending | kLinked);
}

TEST_F(FifoVcpus, DeferredEventsGoToTheVcpuTheirPortNotifiesWhenThePageComes) {
  start_fifo();
  ASSERT_EQ(add_control_block(fifo, 1, kControlFrame, kSecondOffset), 0);
  EXPECT_FALSE(set_pending(fifo, 5, 1));
  EXPECT_FALSE(set_pending(fifo, 6, 0));
  const VcpuOf odd_ports_on_1 = [](const void*, unsigned port) { return port % 2; };
  EXPECT_EQ(add_array_page(fifo, kArrayFrame, odd_ports_on_1), 3u) << "both vCPUs told";
  EXPECT_EQ(control_of_1().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 5u);
  EXPECT_EQ(control().head[EVTCHN_FIFO_PRIORITY_DEFAULT], 6u);
}

TEST_F(FifoVcpus, EveryControlBlockFrameIsHeld) {
  start_with_page();
  ASSERT_EQ(add_control_block(fifo, 3, kSecondArrayFrame, 0), 0);
  std::vector<uint64_t> frames;
  for_each_frame(fifo, [&](uint64_t mfn) { frames.push_back(mfn); });
  EXPECT_EQ(frames, (std::vector<uint64_t>{kControlFrame, kSecondArrayFrame, kArrayFrame}));
  stop(fifo);
  EXPECT_FALSE(has_control_block(fifo, 3));
}
}  // namespace
}  // namespace evtchn_fifo
