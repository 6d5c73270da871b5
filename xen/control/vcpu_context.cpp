#include "control/vcpu_context.h"

namespace control {
namespace {
constexpr uint16_t guest_kernel_rpl = 3;  // 64-bit PV kernels run in ring 3
constexpr uint64_t max_ldt_entries = 8192;
constexpr uint64_t max_gdt_frames = 16;  // sizeof gdt_frames
constexpr unsigned long pv64_vm_assists = (1UL << VMASST_TYPE_4gb_segments) | (1UL << VMASST_TYPE_4gb_segments_notify) |
                                          (1UL << VMASST_TYPE_writable_pagetables) |
                                          (1UL << VMASST_TYPE_pae_extended_cr3) |
                                          (1UL << VMASST_TYPE_architectural_iopl) |
                                          (1UL << VMASST_TYPE_runstate_update_flag) | (1UL << VMASST_TYPE_m2p_strict);

// Xen's __fixup_guest_selector: an RPL below the guest kernel's is raised to it.
template <typename Selector>
void fix(Selector& selector) {
  if ((selector & 3) < guest_kernel_rpl) selector = Selector((selector & ~Selector(3)) | guest_kernel_rpl);
}

bool addresses_canonical(const vcpu_guest_context& c) {
  if (!canonical(c.user_regs.rip) || !canonical(c.user_regs.rsp) || !canonical(c.kernel_sp)) return false;
  if (c.ldt_ents && !canonical(c.ldt_base)) return false;
  if (!canonical(c.fs_base) || !canonical(c.gs_base_kernel) || !canonical(c.gs_base_user)) return false;
  if (!canonical(c.event_callback_eip) || !canonical(c.syscall_callback_eip) || !canonical(c.failsafe_callback_eip))
    return false;
  for (const trap_info& trap : c.trap_ctxt)
    if (!canonical(trap.address)) return false;
  return true;
}

// Xen's __addr_ok: the lower half, or above the hypervisor's range (HYPERVISOR_VIRT_END).
bool address_ok(uint64_t address) { return address < (1ULL << 47) || address >= 0xffff880000000000ULL; }

// An initialised vCPU keeps its page tables and descriptor tables (Xen: -EOPNOTSUPP).
bool same_tables(const vcpu_guest_context& c, const VcpuTablesNow& now) {
  bool same = kernel_l4_of(c) == now.kernel_l4_mfn && (c.ctrlreg[3] & 0xfff) == 0;
  if (now.user_l4_mfn == 0)
    same = same && c.ctrlreg[1] == 0 && (c.flags & VGCF_in_kernel);
  else
    same = same && c.ctrlreg[1] == now.user_l4_mfn << 12;
  same = same && c.gdt_ents == now.gdt_entries;
  for (unsigned i = 0; same && i < (now.gdt_entries + 511) / 512; ++i) same = c.gdt_frames[i] == now.gdt_frames[i];
  same = same && c.ldt_ents == now.ldt_entries;
  return same && (now.ldt_entries == 0 || c.ldt_base == now.ldt_base);
}
}  // namespace

bool canonical(uint64_t address) {
  int64_t value = int64_t(address);
  return (value >> 47) == 0 || (value >> 47) == -1;
}

void fix_guest_selectors(vcpu_guest_context& c) {
  fix(c.user_regs.ss);
  fix(c.user_regs.cs);
  fix(c.kernel_ss);
  for (trap_info& trap : c.trap_ctxt) fix(trap.cs);
}

long check_vcpu_context(const vcpu_guest_context& c, uint32_t vcpu_id, const VcpuTablesNow& now) {
  if (!addresses_canonical(c)) return -XEN_EINVAL;
  if (!address_ok(c.ldt_base)) return -XEN_EINVAL;
  if (c.ldt_base & 0xfff) return -XEN_EINVAL;
  if (c.ldt_ents > max_ldt_entries) return -XEN_EINVAL;
  if (vcpu_id == 0 && (c.vm_assist & ~pv64_vm_assists)) return -XEN_EINVAL;
  if ((c.gdt_ents + 511) / 512 > max_gdt_frames) return -XEN_EINVAL;
  if (now.initialised) return same_tables(c, now) ? 0 : -XEN_EOPNOTSUPP;
  if (!(c.flags & VGCF_in_kernel) && !c.ctrlreg[1]) return -XEN_EINVAL;
  return 0;
}

long check_address_size(uint32_t size) {
  if (size == pv_address_size) return 0;
  return size == 32 ? -XEN_EOPNOTSUPP : -XEN_EINVAL;
}
}  // namespace control
