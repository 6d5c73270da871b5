// pvhvd's side of the guests' xenstore: the service started, domains introduced (released with
// their console: Daemon::release_backends, daemon.cpp), libxl's PV control (server.h).
#include "tools/daemon/server.h"

namespace pvhv::daemon::server {

void Daemon::start_xenstore() {
  xenstore_.set_poll_ms(options_.xenstore_poll_ms);
  xenstore_.start(
      io_, pool_, xen_.xch,
      [this](StoreIncident incident) {  // recorded where the domain's administrator looks
        log("d%u: %s", incident.domid, incident.text.c_str());
        auto* record = record_of(incident.domid);
        if (!record) return;
        add_history(*record, unix_ns(), incident.text);
        save(*record);
        append_console(incident.domid, "[pvhvd] " + incident.text + "\n");
      },
      [this](uint32_t domid, Json state) {
        if (auto* record = record_of(domid)) {
          record->xenstore_state = std::move(state);
          save(*record);
        }
      });
}

// On a link thread or at attach: dom0's port bound to the domain's store port, the ring page
// mapped for good (as xenstored maps it at INTRODUCE), the domain introduced to the store with
// its nodes.
std::optional<Failure> Daemon::introduce(xenstore::DomainSpec spec, StoreRing ring, const Json* saved) {
  if (pvhv_xc_evtchn_bind_interdomain(xen_.xch, spec.domid, ring.remote_port, &ring.local_port) != 0)
    return xc_failure("binding the xenstore port");
  std::string why;
  ring.handle = hold_ring(xen_.xch, spec.domid, ring.mfn, why);
  if (!ring.handle) log("d%u: xenstore: %s; read by copies", spec.domid, why.c_str());
  if (xenstore_.serves(spec.domid)) {  // the link reconnected: the store kept the domain as it was
    xenstore_.rebind(spec.domid, ring.local_port, ring.handle);
    return std::nullopt;
  }
  if (int err = xenstore_.add_domain(spec, ring, saved)) {
    release_ring(xen_.xch, ring.handle);
    pvhv_xc_evtchn_close(xen_.xch, ring.local_port);
    return Failure{err, "xenstore: introducing d" + std::to_string(spec.domid) + ": " + std::strerror(err)};
  }
  return std::nullopt;
}

// libxl's PV control (libxl__domain_pvcontrol): control/shutdown written, the guest's
// acknowledgement (the node emptied) awaited for 60 s. A guest whose xenbus never came up (no
// control/feature-<cmd> = 1) has no PV control here: xl's -F then falls back to
// SCHEDOP_remote_shutdown, where Xen's xl sends an HVM guest an ACPI button event.
void Daemon::ask_guest(uint32_t domid, bool reboot, bool fallback, AskDone done) {
  const std::string cmd = reboot ? "reboot" : "poweroff";
  const std::string control = xenstore::domain_path(domid) + "/control/";
  if (xenstore_.serves(domid) && xenstore_.read(control + "feature-" + cmd).value_or("") == "1") {
    xenstore_.write(control + "shutdown", cmd);
    return xenstore_.await_ack(control + "shutdown", [done, domid](bool acked) {
      if (acked) return done(std::nullopt, 0, false);
      done(Failure{ETIMEDOUT,
                   "libxl: error: Domain " + std::to_string(domid) + ":guest didn't acknowledge control request: -9"},
           -9, false);
    });
  }
  if (!fallback)
    return done(
        Failure{kEopnotsupp, "PV control interface not available: external graceful " +
                                 std::string(reboot ? "reboot" : "shutdown") + " not possible.\nUse \"-F\" to " +
                                 "fallback to " + (reboot ? "ACPI reset event." : "ACPI power event.")},
        -10, false);  // ERROR_NOPARAVIRT
  on_link(
      [this, domid, reboot] {
        return xc_domain_shutdown(xen_.xch, domid, reboot ? SHUTDOWN_reboot : SHUTDOWN_poweroff) == 0
                   ? std::optional<Failure>()
                   : std::optional<Failure>(xc_failure("xc_domain_shutdown"));
      },
      [done](std::optional<Failure> failure) { done(failure, failure ? -3 : 0, true); });
}

}  // namespace pvhv::daemon::server
