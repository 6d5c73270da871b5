// The arguments of every hypercall other than the MMU ones (fuzz/generator/fuzz_generator.h), by number:
// random where nothing can go wrong for the fuzzer, shaped where a value could end or stall
// the domain (shutdown, watchdog, vCPU down, event channels of the kernel, blocking, ...), and
// any number at all (outside the table, or >= 2^32) with the arguments of its low 32 bits.
#include "fuzz/generator/fuzz_generator.h"

namespace lib::fuzz::detail {

uint64_t Generator::command(uint64_t low) {
  return random_.percent(10) ? (low & 0xffffffffull) | (random_.between(1, 0xffffffffull) << 32) : low;
}

void Generator::timer_pointer_args(Call& call, uint64_t command_value, uint64_t argument) {
  call.args[0] = command(command_value);
  call.args[1] = argument;
}

void Generator::sched_op_args(Call& call, Op& op, bool in_batch) {
  static const unsigned kWeights[] = {20, 14, 8, 6, 6, 6, 6, 4, 6};
  unsigned cmd = random_.weighted(kWeights, 9);
  if (in_batch && cmd == SCHEDOP_block) cmd = SCHEDOP_yield;
  uint64_t va = 0;
  switch (cmd) {
    case SCHEDOP_yield: call.args[1] = random_.next(); break;
    case SCHEDOP_block:
      arm(op, random_.pick(kTimerDelays));
      call.args[1] = random_.next();
      break;
    case SCHEDOP_shutdown:  // only where the reason cannot be read: the call must fail
      call.args[1] = unreadable_va_no_user();
      break;
    case SCHEDOP_poll:
      if (auto* poll = reinterpret_cast<sched_poll_t*>(take(sizeof(sched_poll_t), va))) {
        uint64_t ports_va;
        auto* ports = reinterpret_cast<evtchn_port_t*>(take(4 * sizeof(evtchn_port_t), ports_va));
        if (ports)
          for (unsigned i = 0; i < 4; ++i) ports[i] = evtchn_port_t(random_.below(1100));
        set_xen_guest_handle(poll->ports, ports ? ports : reinterpret_cast<evtchn_port_t*>(unreadable_va()));
        poll->nr_ports = unsigned(random_.coin() ? random_.below(5) : random_.next());
        poll->timeout = random_.between(1, 1000);  // absolute ns: long past, so it cannot wait
        call.args[1] = va;
      } else {
        call.args[1] = unreadable_va_no_user();
      }
      break;
    case SCHEDOP_remote_shutdown:
      if (auto* remote = reinterpret_cast<sched_remote_shutdown_t*>(take(sizeof(sched_remote_shutdown_t), va))) {
        static const domid_t kAbsent[] = {5, 6, 7, 9, 100, 0x7ff5, 0x7ff3, DOMID_INVALID};
        remote->domain_id = random_.pick(kAbsent);
        remote->reason = unsigned(random_.next());
        call.args[1] = va;
      } else {
        call.args[1] = unreadable_va_no_user();
      }
      break;
    case SCHEDOP_shutdown_code:  // Xen keeps the first code it is given for the domain's end: unreadable only
      call.args[1] = unreadable_va_no_user();
      break;
    case SCHEDOP_watchdog:
      if (auto* watchdog = reinterpret_cast<sched_watchdog_t*>(take(sizeof(sched_watchdog_t), va))) {
        watchdog->id = uint32_t(random_.between(1, 0xffffffffull));  // never 0: that creates one
        watchdog->timeout = 0;                                       // and 0 deletes
        call.args[1] = va;
      } else {
        call.args[1] = unreadable_va_no_user();
      }
      break;
    case SCHEDOP_pin_override: call.args[1] = write_pointer(8); break;
    default:
      cmd = unsigned(random_.between(8, 0xffffffffull));
      call.args[1] = write_pointer(16);
      break;
  }
  call.args[0] = command(cmd);
}

uint64_t Generator::unreadable_va_no_user() {
  // The user half is unmapped only while no user base is shared with the kernel: keep to
  // addresses that are never readable.
  switch (random_.below(4)) {
    case 0: return pool_.unmapped_va + random_.below(kPage);
    case 1: return pool_.edge_va + kPage + random_.below(kPage - 8);
    case 2: return non_canonical();
    default: return on(kHypervisorPointers) ? hypervisor_va() | 0xfff000ull : random_.below(kPage);
  }
}

void Generator::event_channel_args(Call& call) {
  static const unsigned kWeights[] = {4, 6, 3, 8, 8, 6, 4, 4, 5, 8, 2, 0, 2, 3, 2, 3};
  unsigned cmd = random_.weighted(kWeights, 16);
  if (cmd == 15) cmd = unsigned(random_.between(15, 0xffffffffull));
  uint64_t va = 0;
  uint8_t* at = take(32, va);
  if (!at) {
    call.args[0] = command(cmd);
    call.args[1] = unreadable_va_no_user();
    return;
  }
  fill_random(at, 32);
  auto* words = reinterpret_cast<uint32_t*>(at);
  auto port = [&]() -> uint32_t {
    uint32_t value = uint32_t(random_.coin() ? random_.below(64) : random_.below(1100));
    if (random_.percent(5)) value = uint32_t(random_.next());
    return value;
  };
  switch (cmd) {
    case EVTCHNOP_bind_interdomain: {
      auto* bind = reinterpret_cast<evtchn_bind_interdomain_t*>(at);
      bind->remote_dom = domid_t(random_.coin() ? random_.below(3) : random_.bits(16));
      bind->remote_port = port();
      break;
    }
    case EVTCHNOP_bind_virq: {
      auto* bind = reinterpret_cast<evtchn_bind_virq_t*>(at);
      bind->virq = uint32_t(random_.coin() ? random_.below(26) : random_.next());
      bind->vcpu = uint32_t(random_.percent(80) ? 0 : random_.next());
      break;
    }
    case EVTCHNOP_close: words[0] = unprotected_port(port()); break;
    case EVTCHNOP_send:
    case EVTCHNOP_unmask: words[0] = port(); break;
    case EVTCHNOP_status: {
      auto* status = reinterpret_cast<evtchn_status_t*>(at);
      status->dom = domid_t(random_.coin() ? DOMID_SELF : random_.bits(16));
      status->port = port();
      break;
    }
    case EVTCHNOP_alloc_unbound: {
      auto* alloc = reinterpret_cast<evtchn_alloc_unbound_t*>(at);
      alloc->dom = domid_t(random_.coin() ? DOMID_SELF : random_.bits(16));
      alloc->remote_dom = domid_t(random_.coin() ? random_.below(3) : random_.bits(16));
      break;
    }
    case EVTCHNOP_bind_vcpu: {
      auto* bind = reinterpret_cast<evtchn_bind_vcpu_t*>(at);
      bind->port = port();
      // With several vCPUs a kernel port belongs to the vCPU it is bound to: none is moved.
      if (pool_.vcpus > 1) bind->port = unprotected_port(bind->port);
      if (is_protected_port(bind->port)) bind->vcpu = 0;  // re-binding the kernel's port to vCPU 0 changes nothing
      break;
    }
    case EVTCHNOP_reset: {  // never our own domain: that closes the kernel's channels
      static const domid_t kOthers[] = {5, 7, 0x7ff5, DOMID_INVALID, DOMID_IO, DOMID_XEN};
      reinterpret_cast<evtchn_reset_t*>(at)->dom = random_.pick(kOthers);
      break;
    }
    default: break;
  }
  call.args[0] = command(cmd);
  call.args[1] = va;
}

bool Generator::is_protected_port(uint32_t port) const {
  for (unsigned i = 0; i < pool_.protected_port_count; ++i)
    if (pool_.protected_ports[i] == port) return true;
  return false;
}

uint32_t Generator::unprotected_port(uint32_t port) {
  while (is_protected_port(port)) port = uint32_t(random_.between(64, 1100));
  return port;
}

void Generator::vcpu_op_args(Call& call, uint32_t& restore) {
  static const unsigned kWeights[] = {3, 3, 0, 8, 6, 4, 6, 4, 8, 4, 0, 2, 3, 3, 4};
  unsigned cmd = random_.weighted(kWeights, 15);
  if (cmd == 14) cmd = unsigned(random_.between(14, 0xffffffffull));
  uint64_t vcpu = random_.percent(80) ? 0 : (random_.coin() ? random_.between(1, 8) : random_.next());
  uint64_t va = 0;
  switch (cmd) {
    case VCPUOP_set_periodic_timer:
    case VCPUOP_set_singleshot_timer: {
      restore |= kRestoreTimers;
      uint8_t* at = take(16, va);
      if (at) {
        fill_random(at, 16);
        auto* words = reinterpret_cast<uint64_t*>(at);
        static const uint64_t kNs[] = {0, 1, 999999, 1000000, 1000001, 10000000, ~0ull};
        words[0] = random_.coin() ? random_.pick(kNs) : random_.next();
        if (cmd == VCPUOP_set_singleshot_timer) words[1] = random_.below(4);  // flags
        if (cmd == VCPUOP_set_periodic_timer && !on(kHugeTimers)) words[0] &= (1ull << 62) - 1;
      } else {
        va = unreadable_va_no_user();
      }
      break;
    }
    case VCPUOP_register_runstate_memory_area:
    case VCPUOP_register_vcpu_time_memory_area:
      restore |= kRestoreVcpuAreas;
      va = write_pointer(64);
      break;
    case VCPUOP_stop_periodic_timer:
    case VCPUOP_stop_singleshot_timer:
      restore |= kRestoreTimers;
      va = random_.next();
      break;
    case VCPUOP_send_nmi:
      restore |= kRestoreNmi;
      va = random_.next();
      break;
    default: va = write_pointer(256); break;
  }
  // The other vCPUs running streams are never taken down, and get no area the hypervisor would
  // go on writing (only vCPU 0's are put back).
  bool others = uint32_t(vcpu) >= 1 && uint32_t(vcpu) < pool_.vcpus;  // judged as the hypervisor reads it
  if (others && (cmd == VCPUOP_down || cmd == VCPUOP_register_runstate_memory_area ||
                 cmd == VCPUOP_register_vcpu_time_memory_area))
    vcpu = 0;
  call.args[0] = command(cmd);
  call.args[1] = vcpu;
  call.args[2] = va;
}

void Generator::console_args(Call& call) {
  unsigned choice = unsigned(random_.below(100));
  if (!on(kConsole) || choice < 25) {  // read, or unknown commands
    call.args[0] = command(random_.coin() ? CONSOLEIO_read : random_.between(2, 0xffffffffull));
    call.args[1] = random_.below(256);
    call.args[2] = write_pointer(256);
    return;
  }
  call.args[0] = command(CONSOLEIO_write);
  if (choice < 70) {  // printable text, short
    uint64_t offset = random_.below(pool_.text_size);
    call.args[1] = random_.below(pool_.text_size - offset > 48 ? 48 : pool_.text_size - offset);
    call.args[2] = pool_.text_va + offset;
  } else if (choice < 85) {  // text that runs into the unmapped page
    uint64_t length = random_.between(1, 40);
    uint64_t va = 0;
    if (uint8_t* at = edge_tail(length, 0, va)) {
      for (uint64_t i = 0; i < length; ++i) at[i] = uint8_t('a' + random_.below(26));
      call.args[1] = length + random_.between(1, 100000);
      call.args[2] = va;
    } else {
      call.args[1] = random_.between(1, 100000);
      call.args[2] = unreadable_va_no_user();
    }
  } else if (choice < 90 && on(kFuzzAreaPointers)) {
    call.args[1] = random_.below(24);
    call.args[2] = fuzz_va();
  } else {
    call.args[1] = random_.coin() ? random_.below(4096) : random_.next();
    call.args[2] = unreadable_va_no_user();
  }
}

void Generator::sysctl_args(Call& call, uint32_t& restore) {
  uint64_t va = 0;
  auto* request = reinterpret_cast<xen_sysctl_t*>(take(sizeof(xen_sysctl_t), va));
  if (!request) {
    call.args[0] = unreadable_va_no_user();
    return;
  }
  fill_random(reinterpret_cast<uint8_t*>(request), sizeof(*request));
  request->interface_version = random_.percent(85) ? XEN_SYSCTL_INTERFACE_VERSION : uint32_t(random_.next());
  unsigned choice = unsigned(random_.below(100));
  if (choice < 50) {
    request->cmd = XEN_SYSCTL_perfc_op;
    request->u.perfc_op.cmd = random_.percent(80) ? XEN_SYSCTL_PERFCOP_query : uint32_t(random_.below(4));
    // The query writes every counter: room for a hundred of each.
    set_xen_guest_handle(request->u.perfc_op.desc,
                         reinterpret_cast<xen_sysctl_perfc_desc_t*>(
                             random_.coin() ? 0 : write_pointer(100 * sizeof(xen_sysctl_perfc_desc_t))));
    set_xen_guest_handle(request->u.perfc_op.val,
                         reinterpret_cast<xen_sysctl_perfc_val_t*>(
                             random_.coin() ? 0 : write_pointer(100 * sizeof(xen_sysctl_perfc_val_t))));
  } else if (choice < 85) {
    restore |= kRestoreTbuf;
    request->cmd = XEN_SYSCTL_tbuf_op;
    request->u.tbuf_op.cmd = uint32_t(random_.below(8));
    set_xen_guest_handle(request->u.tbuf_op.cpu_mask.bitmap, reinterpret_cast<uint8_t*>(read_pointer(16)));
    request->u.tbuf_op.cpu_mask.nr_bits = uint32_t(random_.coin() ? random_.below(130) : random_.next());
    request->u.tbuf_op.size = uint32_t(random_.coin() ? random_.below(64) : random_.next());
  } else {
    uint32_t cmd = uint32_t(random_.coin() ? random_.below(64) : random_.next());
    if (cmd == 0x8000) cmd = 0x8001;  // the audit runs when the fuzzer asks for it, not at random
    request->cmd = cmd;
  }
  call.args[0] = va;
}

void Generator::memory_op_args(Call& call) {
  static const unsigned kSafe[] = {XENMEM_maximum_ram_page,
                                   XENMEM_current_reservation,
                                   XENMEM_maximum_reservation,
                                   XENMEM_machphys_mfn_list,
                                   8,
                                   XENMEM_memory_map,
                                   XENMEM_machine_memory_map,
                                   XENMEM_machphys_mapping,
                                   XENMEM_set_memory_map,
                                   XENMEM_maximum_gpfn,
                                   XENMEM_get_pod_target,
                                   XENMEM_get_sharing_freed_pages,
                                   XENMEM_get_sharing_shared_pages,
                                   XENMEM_machphys_compat_mfn_list,
                                   XENMEM_get_vnumainfo,
                                   XENMEM_reserved_device_memory_map,
                                   29,
                                   40,
                                   63};
  uint64_t cmd = random_.pick(kSafe);
  if (random_.percent(10)) cmd |= random_.between(1, 0xffffff) << 6;  // a continuation index above the command
  call.args[0] = command(cmd);
  uint64_t va = 0;
  uint8_t* at = take(64, va);
  if (!at) {
    call.args[1] = unreadable_va_no_user();
    return;
  }
  fill_random(at, 64);
  auto* domid = reinterpret_cast<uint16_t*>(at);
  if (random_.percent(70)) *domid = random_.coin() ? DOMID_SELF : pool_.domid;
  // Memory maps: a count and a buffer the hypervisor writes.
  auto* map = reinterpret_cast<xen_memory_map_t*>(at);
  if ((cmd & 0x3f) == XENMEM_memory_map || (cmd & 0x3f) == XENMEM_machine_memory_map) {
    map->nr_entries = unsigned(random_.coin() ? random_.below(8) : random_.next());
    set_xen_guest_handle(map->buffer, reinterpret_cast<void*>(write_pointer(8 * 24)));
  }
  call.args[1] = va;
}

void Generator::call_args(uint32_t number, Op& op, Call& call, uint32_t& restore, bool in_batch) {
  for (uint64_t& arg : call.args) arg = random_arg();
  uint64_t va = 0;
  switch (number) {
    case __HYPERVISOR_set_trap_table: {
      restore |= kRestoreTraps;
      unsigned choice = unsigned(random_.below(100));
      if (choice < 10) {
        call.args[0] = 0;
      } else if (choice < 70) {
        uint64_t count = random_.between(1, 8);
        bool terminated = random_.percent(70);
        uint8_t* at =
            terminated ? take((count + 1) * sizeof(trap_info_t), va) : edge_tail(count * sizeof(trap_info_t), 0, va);
        if (!at) {
          terminated = true;
          at = take((count + 1) * sizeof(trap_info_t), va);
        }
        if (!at) {
          call.args[0] = 0;
          break;
        }
        auto* traps = reinterpret_cast<trap_info_t*>(at);
        for (uint64_t i = 0; i < count; ++i) {
          traps[i].vector = uint8_t(random_.next());
          traps[i].flags = uint8_t(random_.next());
          traps[i].cs = uint16_t(random_.coin() ? kFlatKernelCs : random_.next());
          traps[i].address = random_.coin() ? pool_.kernel_image_va + random_.below(pool_.kernel_image_size)
                                            : (random_.coin() ? non_canonical() : random_.next());
          if (traps[i].address == 0) traps[i].address = 1;
        }
        if (terminated) traps[count] = trap_info_t{};
        call.args[0] = va;
      } else {
        call.args[0] = read_pointer(256);
      }
      break;
    }
    case __HYPERVISOR_set_gdt: {
      uint64_t count = random_.between(1, 16);
      auto* frames = reinterpret_cast<uint64_t*>(take(count * 8, va));
      if (frames)
        for (uint64_t i = 0; i < count; ++i) frames[i] = random_.coin() ? data_frame() : not_ours_frame();
      call.args[0] = frames ? va : unreadable_va_no_user();
      call.args[1] = random_.coin() ? random_.below(count * 512 + 2) : random_.next();
      break;
    }
    case __HYPERVISOR_stack_switch:
      call.args[0] = random_.coin() ? kFlatKernelSs : random_.next();
      call.args[1] = random_.coin() ? pool_.stack_va + random_.below(kPage) : random_.next();
      break;
    case __HYPERVISOR_set_callbacks:
      restore |= kRestoreCallbacks;
      for (unsigned i = 0; i < 3; ++i)
        call.args[i] = random_.coin() ? pool_.kernel_image_va + random_.below(pool_.kernel_image_size) : random_.next();
      break;
    case __HYPERVISOR_fpu_taskswitch:
      restore |= kRestoreFpu;
      call.args[0] = random_.coin() ? random_.below(2) : random_.next();
      break;
    case __HYPERVISOR_sched_op_compat: {
      static const uint64_t kCommands[] = {
          SCHEDOP_yield, SCHEDOP_block, SCHEDOP_poll, SCHEDOP_shutdown_code, 7, 8, 100};
      uint64_t cmd = random_.pick(kCommands);
      if (cmd == SCHEDOP_block && in_batch) cmd = SCHEDOP_yield;
      if (cmd == SCHEDOP_block) arm(op, random_.pick(kTimerDelays));
      call.args[0] = command(cmd);
      break;
    }
    case __HYPERVISOR_platform_op:
    case __HYPERVISOR_xsm_op:
    case __HYPERVISOR_domctl:
    case __HYPERVISOR_hvm_op:
    case __HYPERVISOR_xenoprof_op:
    case __HYPERVISOR_argo_op:
    case __HYPERVISOR_xenpmu_op:
    case __HYPERVISOR_dm_op:
    case __HYPERVISOR_hypfs_op:
    case 38: {
      uint8_t* at = take(256, va);
      if (at) {
        fill_random(at, 256);
        reinterpret_cast<uint32_t*>(at)[random_.below(2)] =
            uint32_t(random_.below(0x20));  // a plausible version or command
      }
      uint64_t pointer = at ? va : unreadable_va_no_user();
      call.args[0] = random_.coin() ? pointer : command(random_.below(32));
      call.args[1] = random_.coin() ? pointer : write_pointer(256);
      call.args[2] = write_pointer(64);
      break;
    }
    case __HYPERVISOR_set_debugreg:
      restore |= kRestoreDebugRegs;
      call.args[0] = random_.coin() ? random_.below(8) : random_.next();
      break;
    case __HYPERVISOR_get_debugreg: call.args[0] = random_.coin() ? random_.below(8) : random_.next(); break;
    case __HYPERVISOR_update_descriptor:
      call.args[0] = (random_.coin() ? data_frame() : not_ours_frame()) * kPage + random_.below(512) * 8;
      break;
    case __HYPERVISOR_memory_op: memory_op_args(call); break;
    case __HYPERVISOR_set_timer_op:
      restore |= kRestoreTimers;
      call.args[0] = random_.coin() ? random_.below(1000000000) : random_.next();
      break;
    case __HYPERVISOR_event_channel_op_compat: {
      uint8_t* at = take(40, va);
      if (at) {
        Call inner;
        event_channel_args(inner);
        fill_random(at, 40);
        *reinterpret_cast<uint32_t*>(at) = uint32_t(inner.args[0]);
        if (reinterpret_cast<uint32_t*>(at)[0] == EVTCHNOP_close ||
            reinterpret_cast<uint32_t*>(at)[0] == EVTCHNOP_reset ||
            reinterpret_cast<uint32_t*>(at)[0] == EVTCHNOP_init_control)
          reinterpret_cast<uint32_t*>(at)[0] = EVTCHNOP_send;
      }
      call.args[0] = at ? va : unreadable_va_no_user();
      break;
    }
    case __HYPERVISOR_xen_version:
      call.args[0] = command(random_.coin() ? random_.below(12) : random_.next());
      call.args[1] = write_pointer(1024);
      break;
    case __HYPERVISOR_console_io: console_args(call); break;
    case __HYPERVISOR_physdev_op_compat:
    case __HYPERVISOR_physdev_op: {
      restore |= kRestoreIopl;
      uint8_t* at = take(64, va);
      uint64_t cmd = random_.percent(40) ? PHYSDEVOP_set_iopl : random_.below(32);
      if (at) {
        fill_random(at, 64);
        if (number == __HYPERVISOR_physdev_op_compat) {
          reinterpret_cast<uint32_t*>(at)[0] = uint32_t(cmd);
          reinterpret_cast<uint32_t*>(at)[1] = uint32_t(random_.below(5));
        } else if (cmd == PHYSDEVOP_set_iopl) {
          reinterpret_cast<uint32_t*>(at)[0] = uint32_t(random_.coin() ? random_.below(5) : random_.next());
        }
      }
      call.args[0] = number == __HYPERVISOR_physdev_op_compat ? (at ? va : unreadable_va_no_user()) : command(cmd);
      call.args[1] = at ? va : unreadable_va_no_user();
      break;
    }
    case __HYPERVISOR_grant_table_op:
      // The count is how many structures the hypervisor reads and writes back from the
      // pointer on: a big one only where nothing can be written.
      call.args[0] = command(random_.below(16));
      if (random_.percent(80)) {
        call.args[1] = write_pointer(4 * 64);
        call.args[2] = random_.below(5);
      } else {
        call.args[1] = unreadable_va_no_user();
        call.args[2] = random_.next();
      }
      break;
    case __HYPERVISOR_vm_assist:
      restore |= kRestoreVmAssist | kRestoreBase;  // m2p_strict changes what a base switch installs
      call.args[0] = command(random_.below(3));
      call.args[1] = random_.coin() ? random_.pick(kVmAssists) : random_.next();
      break;
    case __HYPERVISOR_vcpu_op: vcpu_op_args(call, restore); break;
    case __HYPERVISOR_set_segment_base:
      restore |= kRestoreSegments;
      call.args[0] = command(random_.below(6));
      call.args[1] = random_.coin() ? random_.next() : (random_.coin() ? non_canonical() : random_.bits(16));
      break;
    case __HYPERVISOR_nmi_op: {
      restore |= kRestoreNmi;
      call.args[0] = command(random_.below(3));
      uint8_t* at = take(16, va);
      if (at) {
        fill_random(at, 16);
        if (random_.coin())
          *reinterpret_cast<uint64_t*>(at) = pool_.kernel_image_va + random_.below(pool_.kernel_image_size);
      }
      call.args[1] = at ? va : unreadable_va_no_user();
      break;
    }
    case __HYPERVISOR_sched_op: sched_op_args(call, op, in_batch); break;
    case __HYPERVISOR_callback_op: {
      restore |= kRestoreCallbacks | kRestoreNmi;
      call.args[0] = command(random_.below(3));
      uint8_t* at = take(sizeof(callback_register_t), va);
      if (at) {
        auto* cb = reinterpret_cast<callback_register_t*>(at);
        cb->type = uint16_t(random_.coin() ? random_.below(8) : random_.next());
        cb->flags = uint16_t(random_.next());
        cb->address = random_.coin() ? pool_.kernel_image_va + random_.below(pool_.kernel_image_size) : random_.next();
      }
      call.args[1] = at ? va : read_pointer(sizeof(callback_register_t));
      break;
    }
    case __HYPERVISOR_event_channel_op: event_channel_args(call); break;
    case __HYPERVISOR_sysctl: sysctl_args(call, restore); break;
    case __HYPERVISOR_kexec_op: {
      // Never KEXEC_CMD_kexec (0) nor the loads (1, 4): dom0's kexec is a trusted interface
      // that takes a kernel image (Xen 4.17 faults on a random kexec_load_v1).
      static const uint64_t kCommands[] = {2, 3, 5, 6, 7, 8, 100};
      call.args[0] = command(random_.pick(kCommands));
      call.args[1] = write_pointer(64);
      break;
    }
    default:
      for (unsigned i = 0; i < 3; ++i)
        if (random_.coin()) call.args[i] = write_pointer(64);
      break;
  }
}

uint64_t Generator::random_arg() {
  switch (random_.below(6)) {
    case 0: return random_.below(16);
    case 1: return random_.next();
    case 2: return ~0ull - random_.below(16);
    case 3: return unreadable_va_no_user();
    default: return random_.bits(unsigned(random_.between(1, 40)));
  }
}

void Generator::arm(Op& op, uint64_t delay_ns) {
  op.arm_timer = true;
  op.arm_timer_ns = delay_ns;
}

bool Generator::is_mmu_number(uint32_t number) {
  return number == __HYPERVISOR_mmu_update || number == __HYPERVISOR_mmuext_op ||
         number == __HYPERVISOR_update_va_mapping || number == __HYPERVISOR_update_va_mapping_otherdomain ||
         number == __HYPERVISOR_multicall;
}

void Generator::any_call(Op& op, Call& call, uint32_t& restore, bool in_multicall) {
  uint64_t number;
  unsigned choice = unsigned(random_.below(100));
  if (choice < 70)
    number = random_.below(43);
  else if (choice < 80)
    number = random_.between(43, 63);
  else if (choice < 88)
    number = random_.coin() ? random_.between(64, 1000) : random_.between(64, 0xffffffffull);
  else
    number = random_.below(43);
  if (number == __HYPERVISOR_iret) number = __HYPERVISOR_xen_version;  // iret has its own class
  uint32_t low = uint32_t(number);
  if (is_mmu_number(low) && (in_multicall || low == __HYPERVISOR_multicall)) low = __HYPERVISOR_xen_version;
  switch (low) {
    case __HYPERVISOR_mmu_update: mmu_update(call); break;
    case __HYPERVISOR_mmuext_op: mmuext_op(call, restore); break;
    case __HYPERVISOR_update_va_mapping:
    case __HYPERVISOR_update_va_mapping_otherdomain: va_mapping(call, in_multicall); break;
    default:
      call_args(low, op, call, restore, in_multicall);
      call.number = low;
      break;
  }
  // High bits: Xen compares the whole register (-ENOSYS); a hypervisor that truncates runs
  // the low part, whose arguments were made safe above.
  if (on(kRaxHigh) && choice >= 88)
    call.number = (call.number & 0xffffffffull) | (random_.between(1, 0xffffffffull) << 32);
  else if (on(kRaxHigh) && random_.percent(1))
    call.number = random_.next() & ~0xffffffffull;  // low part 0: set_trap_table
  if ((call.number & 0xffffffffull) == 0 && call.number != 0) restore |= kRestoreTraps;
}

}  // namespace lib::fuzz::detail
