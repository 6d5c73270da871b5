// pvhvd's build of a domain, as libxl orders it for PV (server.h).
#include "tools/daemon/server.h"

namespace pvhv::daemon::server {

// libxl's order for a PV domain, on a link thread (minutes: every frame crosses the relay):
// createdomain with the uuid as handle and maxvcpus, max_vcpus (the vCPUs made), cpus= / cpus_soft=
// (each vCPU's affinity), max_mem (+1 MiB
// slack, LIBXL_MAXMEM_CONSTANT), the memory map, the builder (vCPU 0's context only: the guest
// brings the others up itself, told which by cpu/<i>/availability), the console port bound in
// dom0 and its ring mapped (ring_page.h), the domain introduced to the store, unpause. The record is written
// "building" once the domain exists, "running" once it runs; a failure destroys the domain.
void Daemon::build(DomainRecord record, std::function<void(std::optional<Failure>)> done) {
  std::string uuid = record.uuid;
  records_[uuid] = record;
  save(record);
  struct Built {
    std::optional<Failure> failure;
    uint32_t domid = 0;
    pvhv_pv_built layout{};
    uint32_t local_port = 0;
    uint32_t console_handle = 0;  // the console ring held (ring_page.h)
    std::string console_unheld;   // why it is not
    xc_domaininfo_t info{};       // as the create leaves it, for the view
  };
  auto config = record.config;
  bool paused = record.paused_at_create;
  auto on_domid = [this, uuid](uint32_t domid) {
    asio::post(io_, [this, uuid, domid] {
      auto it = records_.find(uuid);
      if (it == records_.end()) return;
      it->second.domid = domid;
      save(it->second);
    });
  };
  on_link(
      [this, config, paused, on_domid]() {
        Built out;
        std::vector<uint8_t> kernel, ramdisk;
        if (!read_file(config.kernel, kernel)) {
          out.failure = Failure{errno ? errno : kEnoent, "kernel \"" + config.kernel + "\": " + std::strerror(errno)};
          return out;
        }
        if (!config.ramdisk.empty() && !read_file(config.ramdisk, ramdisk)) {
          out.failure = Failure{errno ? errno : kEnoent, "ramdisk \"" + config.ramdisk + "\": " + std::strerror(errno)};
          return out;
        }
        uint64_t memory_kb = config.memory_mib * 1024, maxmem_kb = config.maxmem_mib * 1024;
        xc_physinfo_t physinfo{};
        if (xc_physinfo(xen_.xch, &physinfo) != 0) {
          out.failure = xc_failure("xc_physinfo");
          return out;
        }
        if (physinfo.free_pages * 4 < memory_kb + 1024) {  // xl's words when the memory is not there
          out.failure = Failure{kEnomem, "failed to free memory for the domain"};
          return out;
        }
        xen_domctl_createdomain create;
        pvhv_pv_createdomain_defaults(&create);
        auto handle = parse_uuid(config.uuid);
        for (size_t i = 0; i < 16; ++i) create.handle[i] = (*handle)[i];
        create.max_vcpus = config.maxvcpus;
        uint32_t domid = 0;
        if (xc_domain_create(xen_.xch, &domid, &create) != 0) {
          out.failure = xc_failure("xc_domain_create");
          return out;
        }
        out.domid = domid;
        on_domid(domid);
        auto fail = [&](const std::string& what) {
          out.failure = xc_failure(what);
          int saved = errno;
          xc_domain_destroy(xen_.xch, domid);
          errno = saved;
          return out;
        };
        if (xc_domain_max_vcpus(xen_.xch, domid, config.maxvcpus) != 0) return fail("xc_domain_max_vcpus");
        // xl.cfg's cpus / cpus_soft, as libxl__build_pre sets them after max_vcpus.
        if (auto failure = apply_config_affinity(xen_, domid, config.maxvcpus, config.cpus, config.cpus_soft)) {
          fail("affinity");
          out.failure = *failure;
          return out;
        }
        if (!config.ptwr_mode.empty())  // xl.cfg's ptwr_mode= (ptwr_mode.h)
          if (auto failure = apply_config_ptwr_mode(xen_.xch, domid, config.ptwr_mode)) {
            fail("ptwr_mode");
            out.failure = *failure;
            return out;
          }
        if (xc_domain_setmaxmem(xen_.xch, domid, maxmem_kb + 1024) != 0) return fail("xc_domain_setmaxmem");
        if (xc_domain_set_memmap_limit(xen_.xch, domid, maxmem_kb + 1024) != 0)
          return fail("xc_domain_set_memmap_limit");
        pvhv_pv_image image{kernel.data(),
                            kernel.size(),
                            ramdisk.empty() ? nullptr : ramdisk.data(),
                            ramdisk.size(),
                            config.cmdline.c_str(),
                            memory_kb,
                            0,
                            0};
        if (pvhv_build_pv_domain(xen_.xch, domid, &image, &out.layout) != 0) {
          std::string message = out.layout.message;
          fail("pvhv_build_pv_domain");
          out.failure->message = "xc_dom_build failed: " + message;
          return out;
        }
        if (pvhv_xc_evtchn_bind_interdomain(xen_.xch, domid, out.layout.console_port, &out.local_port) != 0)
          return fail("binding the console port");
        // The console ring held as xenconsoled holds it, before the guest first runs.
        out.console_handle = hold_ring(xen_.xch, domid, out.layout.console_mfn, out.console_unheld);
        // libxl's order: the domain's nodes written and the domain introduced before it runs.
        xenstore::DomainSpec spec{
            domid,           config.name, config.uuid, memory_kb, out.layout.console_port, out.layout.console_mfn,
            config.maxvcpus, config.vcpus};
        if (auto failure = introduce(spec, {domid, out.layout.xenstore_mfn, out.layout.store_port, 0}, nullptr)) {
          fail("xenstore");
          out.failure = failure;
          return out;
        }
        if (!paused && xc_domain_unpause(xen_.xch, domid) != 0) return fail("xc_domain_unpause");
        if (xc_domain_getinfolist(xen_.xch, domid, 1, &out.info) != 1 || out.info.domain != domid) {
          out.info = xc_domaininfo_t{};  // the next list tells the rest
          out.info.domain = domid;
          for (size_t i = 0; i < 16; ++i) out.info.handle[i] = create.handle[i];
        }
        return out;
      },
      [this, uuid, done](Built built) {
        auto it = records_.find(uuid);
        if (built.failure && built.domid && link_lost()) {
          // The domain is half built and cannot be destroyed now: its record says "building",
          // so the reconnect's reconcile destroys it, as a restarted daemon does.
          log("%s: d%u half built when the relay link dropped: destroyed once it is back",
              it != records_.end() ? it->second.name.c_str() : uuid.c_str(), built.domid);
          return done(built.failure);
        }
        if (built.failure) {
          // What the build held: the xenstore ring (introduced), the console's port and ring.
          if (built.domid) release_backends(built.domid);
          let_go({built.local_port}, {built.console_handle}, {});
          if (it != records_.end()) {
            remove_record(options_.state_dir, uuid);
            records_.erase(it);
          }
          return done(built.failure);
        }
        if (it == records_.end()) return done(Failure{kEio, "record lost"});
        DomainRecord& record = it->second;
        record.domid = built.domid;
        record.state = RecordState::running;
        record.console_mfn = built.layout.console_mfn;
        record.console_port = built.layout.console_port;
        record.store_mfn = built.layout.xenstore_mfn;
        record.store_port = built.layout.store_port;
        add_history(record, unix_ns(), record.paused_at_create ? "running (paused)" : "running");
        save(record);
        if (!built.console_handle)
          log("%s: console: %s; read by copies", record.name.c_str(), built.console_unheld.c_str());
        consoles_[built.domid] = new_console(record.name, built.layout.console_mfn, built.layout.console_port,
                                             built.local_port, built.console_handle);
        view_.created(built.info);
        log("%s: d%u built (%lu frames written)", record.name.c_str(), built.domid,
            (unsigned long)built.layout.pages_written);
        done(std::nullopt);
      });
}

}  // namespace pvhv::daemon::server
