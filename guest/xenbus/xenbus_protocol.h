#pragma once
// The pure half of the guest's xenbus client (xenbus/xenbus.cpp is the other): building
// xs_wire requests, the client's end of the xenstore ring (it trusts the server's indices no
// more than the server trusts ours), reassembling answers, and the control/shutdown watcher
// that obeys the toolstack as Linux's drivers/xen/manage.c does. Freestanding.
#include <stddef.h>
#include <stdint.h>

#include <xen/xen.h>
#include <xen/io/xs_wire.h>

namespace lib {

// One request in wire form: header then the NUL-terminated strings (the last one without its
// NUL when `last_raw`, as XS_WRITE's value). 0 if it does not fit `capacity` or the payload
// limit.
size_t xenbus_build(uint8_t* out, size_t capacity, uint32_t type, uint32_t req_id, const char* const* args,
                    size_t count, bool last_raw);

// Our end of the ring: requests out, answers in. Each moves what fits and returns the count;
// indices that claim more than a ring's worth move nothing.
size_t xenbus_ring_write(volatile xenstore_domain_interface* ring, const uint8_t* data, size_t length);
size_t xenbus_ring_read(volatile xenstore_domain_interface* ring, uint8_t* out, size_t capacity);

// Reassembles answers from the bytes read. A header announcing more than XENSTORE_PAYLOAD_MAX
// stops the reader (the server is broken).
class XenbusReader {
 public:
  // Takes what fits (room() bytes) and returns the count taken.
  size_t push(const uint8_t* data, size_t length);
  size_t room() const { return sizeof buffer_ - used_; }
  // The next whole message, or false; `payload` is NUL-terminated (one byte past length) and
  // valid until the next next().
  bool next(xsd_sockmsg& header, const char*& payload);
  bool broken() const { return broken_; }

 private:
  uint8_t buffer_[sizeof(xsd_sockmsg) + XENSTORE_PAYLOAD_MAX];
  size_t used_ = 0;
  char payload_[XENSTORE_PAYLOAD_MAX + 1];
  bool broken_ = false;
};

enum class ShutdownAction { none, poweroff, reboot };
// Linux's table: "poweroff" and "halt" power off, "reboot" reboots; anything else (suspend,
// sysrq, unknown) is not acted on here.
ShutdownAction parse_shutdown_request(const char* value, size_t length);
// SHUTDOWN_poweroff or SHUTDOWN_reboot.
unsigned shutdown_reason(ShutdownAction action);

// The control/shutdown watcher: start() queues the WATCH (and Linux's feature-* nodes), each
// answer or event may queue one request, and `action` says when to shut down: after the node
// was read non-empty and then cleared (so the toolstack sees the request acknowledged).
class ShutdownWatcher {
 public:
  static constexpr const char* kToken = "pvhv-shutdown";
  static constexpr size_t kMaxRequest = 128;
  struct Output {
    uint8_t bytes[kMaxRequest * 3];
    size_t length = 0;
  };
  void start(Output& out);
  // Handles one message from the server; may append a request to `out`.
  void on_message(const xsd_sockmsg& header, const char* payload, Output& out);
  ShutdownAction action() const { return action_; }
  ShutdownAction requested() const { return requested_; }

 private:
  void send(Output& out, uint32_t type, const char* const* args, size_t count, bool last_raw, uint32_t& id_slot);
  uint32_t next_id_ = 1;
  uint32_t read_id_ = 0, clear_id_ = 0;
  ShutdownAction requested_ = ShutdownAction::none;
  ShutdownAction action_ = ShutdownAction::none;
};

}  // namespace lib
