// The host's small xenstore: the store (a tree of nodes with Xen's permissions, quotas,
// watches and transactions), its wire format (xs_wire.h's xsd_sockmsg + payload) and the ring a
// domain shares with it (struct xenstore_domain_interface). Pure: no I/O, no clock, no
// threads. The daemon owns one Store, opens a connection per client (a domain's ring, or a
// tool acting for dom0), feeds requests in and sends what comes out (see tools/README.md,
// "xenstore"). Xen 4.17's xenstored (C) is the specification of every answer.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <xen/xen.h>
#include <xen/io/xs_wire.h>

namespace xenstore {

using DomId = uint32_t;
using ConnId = uint32_t;

// Xen 4.17's default limits (xenstored_core.c), enforced on unprivileged domains only.
struct Limits {
  unsigned nodes_per_domain = 1000;                    // nodes a domain owns (ENOSPC beyond)
  unsigned max_entry_size = 2048;                      // a node's record: value, children's names, permissions
  unsigned watches_per_domain = 128;                   // E2BIG beyond
  unsigned transactions_per_domain = 10;               // ENOSPC beyond
  unsigned nodes_per_transaction = 1024;               // nodes one transaction reads or writes (ENOSPC beyond)
  unsigned perms_per_node = 5;                         // ENOSPC beyond (SET_PERMS)
  unsigned max_relative_path = XENSTORE_REL_PATH_MAX;  // below /local/domain/N/
  // Ours: bounds Xen keeps by other means (memory quota, event timeouts).
  unsigned transactions_privileged = 256;  // per privileged connection (ENOSPC beyond)
  size_t max_queued_output = 256;          // messages queued for a connection; older events drop
};

// One message, header fields and payload (the payload's length is `len` on the wire).
struct Message {
  uint32_t type = XS_INVALID;
  uint32_t req_id = 0;
  uint32_t tx_id = 0;
  std::string payload;
};
bool operator==(const Message& a, const Message& b);

// A request from its pieces: each string followed by a NUL, except the last when
// `last_unterminated` (XS_WRITE's value).
Message make_request(uint32_t type, std::vector<std::string_view> args, uint32_t tx_id = 0, uint32_t req_id = 0,
                     bool last_unterminated = false);
// The NUL-separated strings of a payload (a trailing piece without NUL included).
std::vector<std::string> split_strings(std::string_view payload);
// "EINVAL" for EINVAL, as xsd_errors names it; "EINVAL" for an errno it does not list (as Xen).
const char* error_name(int errnum);

// The wire: header (host byte order, as the ring carries it) then payload.
std::string serialize(const Message& message);

// Incremental parser of a byte stream into messages. A header announcing more than
// XENSTORE_PAYLOAD_MAX bytes is a protocol error: the parser stops (Xen drops such a
// connection) and takes no more bytes.
class MessageParser {
 public:
  enum class State { ok, error };
  // Takes all of `bytes` unless in error; complete messages queue for next().
  void push(std::string_view bytes);
  std::optional<Message> next();
  State state() const { return state_; }
  size_t buffered() const { return buffer_.size(); }

 private:
  std::string buffer_;
  std::deque<Message> ready_;
  State state_ = State::ok;
};

// Permissions as Xen writes them: 'n' none, 'r' read, 'w' write, 'b' both, then the domain id.
// The first entry names the owner and the access everybody else not listed gets.
struct Perm {
  enum Access : uint8_t { none = 0, read = 1, write = 2, both = 3 };
  DomId domid = 0;
  Access access = none;
  bool operator==(const Perm&) const = default;
};
using Perms = std::vector<Perm>;
std::optional<Perm> parse_perm(std::string_view text);
std::string format_perm(const Perm& perm);

// Paths: absolute nodes (Xen's is_valid_nodename), the special watch paths, and a relative path
// resolved against /local/domain/<id>.
bool is_valid_node_path(std::string_view path, unsigned max_relative_path = XENSTORE_REL_PATH_MAX);
bool is_special_path(std::string_view path);  // @introduceDomain, @releaseDomain
std::string domain_path(DomId domid);         // "/local/domain/<id>"
std::string canonical_path(DomId domid, std::string_view path);
std::string parent_path(std::string_view path);  // "/" for a child of the root

inline constexpr DomId kDomidSelf = DOMID_SELF;
inline constexpr const char* kIntroduceDomain = "@introduceDomain";
inline constexpr const char* kReleaseDomain = "@releaseDomain";

struct IntroducedDomain {
  DomId domid = 0;
  uint64_t mfn = 0;
  uint32_t port = 0;
};

class Store {
 public:
  explicit Store(Limits limits = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // A connection speaks for one domain: dom0 (0) is privileged, as Xen's tools are.
  ConnId connect(DomId domid);
  // Ends its watches and transactions (a transaction left open is aborted).
  void disconnect(ConnId conn);
  bool connected(ConnId conn) const;

  // Handles one request: its answer (and any watch events it causes) queue on the
  // connections concerned, answer first.
  void handle(ConnId conn, const Message& request);
  // What is queued for a connection, oldest first; taking empties the queue.
  std::deque<Message> take_output(ConnId conn);
  bool has_output(ConnId conn) const;
  // Watch events dropped because a connection's queue was full (a guest that never reads).
  uint64_t dropped_events(ConnId conn) const;

  // Domains introduced by INTRODUCE and not released (dom0 is always there).
  std::vector<IntroducedDomain> introduced_domains() const;
  // An introduced domain shut down or crashed (the daemon saw it after VIRQ_DOM_EXC):
  // @releaseDomain fires, once per domain until its RELEASE (which fires it again), as Xen's
  // xenstored fires it when a domain's info first says shutdown, not only when it is gone.
  // True when it fired.
  bool domain_shut_down(DomId domid);

  // The daemon's own access, as dom0, outside any transaction (fires watches as a write
  // would): the standard nodes of a new domain use these. A write is one XS_WRITE's worth:
  // E2BIG beyond XENSTORE_PAYLOAD_MAX (path, NUL and value), as libxenstore's xs_write.
  int write(std::string_view path, std::string_view value, const Perms* perms = nullptr);
  int mkdir(std::string_view path, const Perms* perms = nullptr);
  int remove(std::string_view path);
  std::optional<std::string> read(std::string_view path) const;
  std::optional<Perms> get_perms(std::string_view path) const;
  std::vector<std::string> directory(std::string_view path) const;

  // Figures for tests and the daemon's status.
  size_t node_count() const;
  unsigned owned_nodes(DomId domid) const;
  size_t open_transactions(ConnId conn) const;
  // The nodes a connection's open transactions hold (each holds those it read or wrote, not
  // a copy of the store): what they cost the server.
  size_t transaction_nodes(ConnId conn) const;
  size_t watch_count(ConnId conn) const;
  // A connection's watches as its domain registered them (a relative watch's path relative
  // again), in registration order: what a restarted server registers again for it.
  struct WatchSpec {
    std::string path;
    std::string token;
    bool operator==(const WatchSpec&) const = default;
  };
  std::vector<WatchSpec> watches(ConnId conn) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The ring. The server's own indices (req_cons, rsp_prod) are kept here, never read back from
// the page: a guest can write anything into its page, and only req_prod and rsp_cons are its to
// move. A guest whose indices say more than a ring's worth (req_prod - req_cons > 1024 or
// rsp_prod - rsp_cons > 1024) is a protocol error: Xen stops serving it, and so does this.
class RingConnection {
 public:
  RingConnection(Store& store, DomId domid);
  ~RingConnection();
  RingConnection(const RingConnection&) = delete;
  RingConnection& operator=(const RingConnection&) = delete;

  struct Result {
    bool notify = false;        // something was produced or consumed: kick the domain's port
    bool page_changed = false;  // write back rsp[], req_cons, rsp_prod (and error) to the page
    bool broken = false;        // protocol error: the connection is no longer served
  };
  // Consumes what the guest produced on `page` (a copy of its 4 KiB page), handles the
  // requests, and writes answers and events while there is room. Call again on each event from
  // the domain, and after the store changed (watch events for it may be queued).
  Result serve(xenstore_domain_interface& page);
  // A server taking over a ring another served (a restarted daemon): the server's indices as
  // the page shows them, so what the guest queued meanwhile is served, not taken for a lie.
  void resume(const xenstore_domain_interface& page);
  // Whether serve() has anything to do, from the guest's two indices alone (the daemon reads
  // 16 bytes of the page, not 4 KiB, to find out).
  bool wants_service(XENSTORE_RING_IDX req_prod, XENSTORE_RING_IDX rsp_cons) const;
  bool broken() const { return broken_; }
  ConnId conn() const { return conn_; }
  size_t pending_output_bytes() const { return out_.size(); }
  // Answers of XS_ERROR sent so far, and the last one's name (a guest hitting quotas or limits).
  uint64_t errors_answered() const { return errors_answered_; }
  const std::string& last_error() const { return last_error_; }
  // Answers waiting beyond this stop the reading of requests until the guest reads: a guest
  // that floods requests and never reads answers costs the server this much, no more.
  static constexpr size_t kMaxPendingOutput = 64 * 1024;

 private:
  Store& store_;
  ConnId conn_;
  MessageParser parser_;
  std::string out_;  // serialized messages not yet on the ring
  XENSTORE_RING_IDX req_cons_ = 0, rsp_prod_ = 0;
  bool broken_ = false;
  uint64_t errors_answered_ = 0;
  std::string last_error_;
};

// The guest's ring page read as a server must read it, through reads that are not atomic (a
// foreign read through the relay: the guest may write between any two words). The four
// indexes first; the page only when `wanted` says they ask for service; then the page's
// req_prod is set back to the one read first. The guest writes a request's bytes before it
// moves req_prod, so every byte up to the req_prod read first is in the later copy; the copy's
// own req_prod (it lies after req[]) may be newer than the req[] copied before it.
struct RingIndexes {  // xenstore_domain_interface's four, in its order
  XENSTORE_RING_IDX req_cons, req_prod, rsp_cons, rsp_prod;
};
using RingPageReader = std::function<bool(uint32_t offset, void* out, size_t length)>;
enum class RingPageRead { failed, not_wanted, read };
RingPageRead read_ring_page(const RingPageReader& read, const std::function<bool(const RingIndexes&)>& wanted,
                            RingIndexes& seen, xenstore_domain_interface& page);

// The nodes a toolstack writes for a new domain (libxl's layout, as dom0, with its
// permissions): /local/domain/N (read-only to N) with name, domid, vm, memory/target,
// console/{port,ring-ref,limit,type,output}, cpu/<i>/availability for each vCPU (online for the
// first `vcpus`, offline for the rest up to `max_vcpus`, as libxl__build_post), control
// (read-only to N) and control/shutdown, control/feature-{poweroff,reboot,suspend},
// control/sysrq, data, device, drivers, error, attr (N's own), and /vm/<uuid>.
struct DomainSpec {
  DomId domid = 0;
  std::string name;
  std::string uuid = "00000000-0000-0000-0000-000000000000";
  uint64_t memory_kb = 0;
  uint32_t console_ring_port = 0;
  uint64_t console_ring_mfn = 0;
  uint32_t max_vcpus = 1;  // xl.cfg's maxvcpus
  uint32_t vcpus = 1;      // and vcpus: the ones the guest is to bring up
};
int create_domain_nodes(Store& store, const DomainSpec& spec);

}  // namespace xenstore
