// The pure process logic of the guest kernel: the process table and wait4's rules, the
// copy-on-write fault decision and the initial user stack layout.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernel/process/copy_on_write.h"
#include "kernel/process/process_table.h"
#include "kernel/process/user_stack.h"

using lib::FaultAction;
using lib::PageTableEntry;
using lib::ProcessState;
using lib::ProcessTable;
using lib::WaitResult;

TEST(guest_process_table, PidsStartAtOneAndGrow) {
  ProcessTable table;
  int init = table.create(0);
  EXPECT_EQ(table[init].pid, 1);
  int child = table.create(1);
  EXPECT_EQ(table[child].pid, 2);
  EXPECT_EQ(table[child].parent, 1);
  EXPECT_EQ(table[child].state, ProcessState::runnable);
  EXPECT_EQ(table.find(2), child);
  EXPECT_EQ(table.find(3), -1);
  EXPECT_EQ(table.live_count(), 2);
}

TEST(guest_process_table, ReapedPidsAreNotReusedAtOnce) {
  ProcessTable table;
  table.create(0);
  int child = table.create(1);
  table.exit(child, lib::wait_status_exited(0));
  table.release(child);
  int next = table.create(1);
  EXPECT_EQ(table[next].pid, 3);
}

TEST(guest_process_table, FullTableRefusesToCreate) {
  ProcessTable table;
  for (int i = 0; i < ProcessTable::kCapacity; ++i) ASSERT_GE(table.create(0), 0);
  EXPECT_EQ(table.create(0), -1);
}

TEST(guest_process_table, WaitFindsZombieChildrenOnly) {
  ProcessTable table;
  int init = table.create(0);
  EXPECT_EQ(table.wait(init, -1).kind, WaitResult::no_children);
  int a = table.create(1);
  int b = table.create(1);
  EXPECT_EQ(table.wait(init, -1).kind, WaitResult::would_block);
  EXPECT_EQ(table.exit(b, lib::wait_status_exited(5)), init);
  WaitResult any = table.wait(init, -1);
  EXPECT_EQ(any.kind, WaitResult::reaped);
  EXPECT_EQ(any.slot, b);
  EXPECT_EQ(table.wait(init, table[a].pid).kind, WaitResult::would_block) << "a is still alive";
  EXPECT_EQ(table.wait(init, 999).kind, WaitResult::no_children) << "not our child";
  EXPECT_EQ(table.wait(a, -1).kind, WaitResult::no_children) << "a has no children";
}

TEST(guest_process_table, OrphansGoToInit) {
  ProcessTable table;
  int init = table.create(0);
  int parent = table.create(1);
  int child = table.create(table[parent].pid);
  table.exit(child, lib::wait_status_signaled(11));  // a zombie orphaned below
  table.exit(parent, lib::wait_status_exited(0));
  EXPECT_EQ(table[child].parent, 1);
  WaitResult result = table.wait(init, table[child].pid);
  EXPECT_EQ(result.kind, WaitResult::reaped);
  EXPECT_EQ(table[result.slot].wait_status, 11);
}

TEST(guest_process_table, RoundRobinSkipsBlockedAndZombies) {
  ProcessTable table;
  int a = table.create(0);
  int b = table.create(1);
  int c = table.create(1);
  table[a].state = ProcessState::blocked;
  EXPECT_EQ(table.next_runnable(a), b);
  EXPECT_EQ(table.next_runnable(b), c);
  EXPECT_EQ(table.next_runnable(c), b);
  table.exit(b, 0);
  EXPECT_EQ(table.next_runnable(c), c);
  table.exit(c, 0);
  EXPECT_EQ(table.next_runnable(c), -1);
}

TEST(guest_wait_status, EncodedAsLinux) {
  EXPECT_EQ(lib::wait_status_exited(3), 0x300);
  EXPECT_EQ(lib::wait_status_signaled(11), 11);
  EXPECT_EQ(lib::shell_status(lib::wait_status_exited(3)), 3);
  EXPECT_EQ(lib::shell_status(lib::wait_status_signaled(11)), 139);
}

namespace {
constexpr uint64_t kUserPage = PageTableEntry::kPresent | PageTableEntry::kUser;
const PageTableEntry kWritable = PageTableEntry::make(lib::Mfn{42}, kUserPage | PageTableEntry::kWritable);
const PageTableEntry kReadOnly = PageTableEntry::make(lib::Mfn{42}, kUserPage);
}  // namespace

TEST(guest_copy_on_write, ForkSharesWritablePagesReadOnlyAndMarked) {
  PageTableEntry shared = lib::shared_after_fork(kWritable);
  EXPECT_FALSE(shared.writable());
  EXPECT_TRUE(shared.raw() & lib::kCopyOnWrite);
  EXPECT_EQ(shared.mfn(), kWritable.mfn());
  EXPECT_EQ(lib::shared_after_fork(kReadOnly).raw(), kReadOnly.raw()) << "text stays as it is";
  EXPECT_EQ(lib::shared_after_fork(shared).raw(), shared.raw()) << "forking again";
}

TEST(guest_copy_on_write, FaultDecisions) {
  PageTableEntry cow = lib::shared_after_fork(kWritable);
  EXPECT_EQ(lib::fault_action(cow, true, false, 2), FaultAction::copy);
  EXPECT_EQ(lib::fault_action(cow, true, false, 1), FaultAction::make_writable);
  EXPECT_EQ(lib::fault_action(cow, false, false, 2), FaultAction::spurious);
  EXPECT_EQ(lib::fault_action(kReadOnly, true, true, 1), FaultAction::segfault) << "read-only text";
  EXPECT_EQ(lib::fault_action(PageTableEntry(), false, true, 0), FaultAction::demand_zero);
  EXPECT_EQ(lib::fault_action(PageTableEntry(), true, false, 0), FaultAction::segfault);
  EXPECT_EQ(lib::fault_action(kWritable, true, false, 1), FaultAction::spurious);
}

TEST(guest_copy_on_write, PrivateCopyIsWritableAndUnmarked) {
  PageTableEntry cow = lib::shared_after_fork(kWritable);
  PageTableEntry copy = lib::private_writable(cow, lib::Mfn{77});
  EXPECT_TRUE(copy.writable());
  EXPECT_TRUE(copy.present());
  EXPECT_TRUE(copy.user());
  EXPECT_FALSE(copy.raw() & lib::kCopyOnWrite);
  EXPECT_EQ(copy.mfn(), lib::Mfn{77});
}

namespace {
struct Stack {
  static constexpr uint64_t kTop = 0x7ffffffff000;
  static constexpr size_t kSize = 8192;
  std::vector<uint8_t> image = std::vector<uint8_t>(kSize, 0);
  uint64_t word(uint64_t address) const {
    uint64_t value;
    std::memcpy(&value, &image[address - (kTop - kSize)], 8);
    return value;
  }
  const char* string(uint64_t address) const { return reinterpret_cast<const char*>(&image[address - (kTop - kSize)]); }
};
}  // namespace

TEST(guest_user_stack, LaysOutArgcArgvEnvpAuxvAsLinux) {
  const char* argv[] = {"sh", "-c", "hello"};
  const char* envp[] = {"PATH=/bin"};
  const uint64_t auxv[][2] = {{6, 4096}, {9, 0x401000}};
  lib::UserStackInput input{argv, 3, envp, 1, auxv, 2, {}};
  for (int i = 0; i < 16; ++i) input.random[i] = static_cast<uint8_t>(i + 1);
  Stack stack;
  lib::UserStackLayout layout = lib::build_user_stack(input, Stack::kTop, stack.image.data(), Stack::kSize);
  ASSERT_NE(layout.rsp, 0u);
  EXPECT_EQ(layout.rsp % 16, 0u) << "the ABI wants rsp 16-aligned at entry";
  EXPECT_EQ(stack.word(layout.rsp), 3u);
  EXPECT_EQ(layout.argv, layout.rsp + 8);
  EXPECT_STREQ(stack.string(stack.word(layout.argv)), "sh");
  EXPECT_STREQ(stack.string(stack.word(layout.argv + 8)), "-c");
  EXPECT_STREQ(stack.string(stack.word(layout.argv + 16)), "hello");
  EXPECT_EQ(stack.word(layout.argv + 24), 0u);
  EXPECT_EQ(layout.envp, layout.argv + 32);
  EXPECT_STREQ(stack.string(stack.word(layout.envp)), "PATH=/bin");
  EXPECT_EQ(stack.word(layout.envp + 8), 0u);
  EXPECT_EQ(layout.auxv, layout.envp + 16);
  EXPECT_EQ(stack.word(layout.auxv), 6u);
  EXPECT_EQ(stack.word(layout.auxv + 8), 4096u);
  EXPECT_EQ(stack.word(layout.auxv + 16), 9u);
  EXPECT_EQ(stack.word(layout.auxv + 32), lib::kAtRandomKey);
  EXPECT_EQ(stack.word(layout.auxv + 40), layout.random);
  EXPECT_EQ(stack.word(layout.auxv + 48), 0u) << "AT_NULL";
  EXPECT_EQ(layout.random % 16, 0u);
  EXPECT_EQ(stack.image[layout.random - (Stack::kTop - Stack::kSize)], 1);
  EXPECT_EQ(stack.word(Stack::kTop - 8), 0u);
  EXPECT_GT(stack.word(layout.argv), layout.random) << "strings above the random bytes";
  EXPECT_LT(stack.word(layout.envp), Stack::kTop);
}

TEST(guest_user_stack, RefusesWhatDoesNotFit) {
  std::string big(9000, 'x');
  const char* argv[] = {big.c_str()};
  lib::UserStackInput input{argv, 1, nullptr, 0, nullptr, 0, {}};
  Stack stack;
  EXPECT_EQ(lib::build_user_stack(input, Stack::kTop, stack.image.data(), Stack::kSize).rsp, 0u);
}

TEST(guest_user_stack, EmptyArgvAndEnvp) {
  lib::UserStackInput input{nullptr, 0, nullptr, 0, nullptr, 0, {}};
  Stack stack;
  lib::UserStackLayout layout = lib::build_user_stack(input, Stack::kTop, stack.image.data(), Stack::kSize);
  ASSERT_NE(layout.rsp, 0u);
  EXPECT_EQ(stack.word(layout.rsp), 0u);
  EXPECT_EQ(stack.word(layout.rsp + 8), 0u);
  EXPECT_EQ(stack.word(layout.rsp + 16), 0u);
  EXPECT_EQ(stack.word(layout.rsp + 24), lib::kAtRandomKey);
}
