// The store: nodes, permissions, quotas, watches and transactions, with Xen 4.17's answers
// (tools/xenstore/xenstored_{core,watch,transaction,domain}.c are the specification).
#include <errno.h>

#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>

#include "tools/xenstore/store_view.h"
#include "tools/xenstore/xenstore.h"

namespace xenstore {
namespace {

enum : unsigned { kRead = 1, kWrite = 2, kOwner = 4 };

// A watch event to send once the change is final: its node's permissions then (and before,
// for SET_PERMS) decide which watchers may see it, as Xen's watch_permitted.
struct Fire {
  std::string path;
  bool recursive = false;  // also fire watches below `path` (a removed subtree)
  Perms node, parent, old;
};

struct Transaction {
  explicit Transaction(size_t max_nodes) : overlay(max_nodes) {}
  Overlay overlay;  // the nodes it read or wrote, as it sees them (store_view.h)
  std::vector<Fire> fires;
};

struct Watch {
  std::string path;  // canonical
  std::string token;
  bool relative = false;
};

struct Connection {
  DomId domid = 0;
  std::vector<Watch> watches;
  std::map<uint32_t, Transaction> transactions;
  uint32_t next_tx = 1;
  std::deque<Message> out;
  uint64_t dropped = 0;
};

size_t record_size(const Node& n) {
  size_t size = 24 + 8 * n.perms.size() + n.value.size();  // Xen's record header and perms
  for (const auto& c : n.children) size += c.size() + 1;
  return size;
}

bool is_under(std::string_view child, std::string_view parent) {
  if (parent == "/") return true;
  if (child.substr(0, parent.size()) != parent) return false;
  return child.size() == parent.size() || child[parent.size()] == '/';
}

std::string_view basename(std::string_view path) { return path.substr(path.rfind('/') + 1); }

// The payload's one argument: exactly one NUL, at the end (Xen's onearg).
std::optional<std::string_view> onearg(const std::string& payload) {
  if (payload.empty() || payload.find('\0') != payload.size() - 1) return std::nullopt;
  return std::string_view(payload).substr(0, payload.size() - 1);
}

// The NUL-terminated strings at the start of the payload (an unterminated tail is not one).
std::vector<std::string> terminated_strings(const std::string& payload) {
  auto pieces = split_strings(payload);
  if (!payload.empty() && payload.back() != '\0' && !pieces.empty()) pieces.pop_back();
  return pieces;
}

// C's atoi, as Xen reads domain ids and ports.
long atoi_like(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  long value = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    value = value * 10 + (s[i] - '0');
    if (value > 0xffffffffL) value = 0xffffffffL;
  }
  return negative ? -value : value;
}

}  // namespace

struct Store::Impl {
  Limits limits;
  Tree tree;
  Owned owned;
  uint64_t generation = 1;
  std::map<ConnId, Connection> conns;
  ConnId next_conn = 1;
  std::map<DomId, IntroducedDomain> introduced;
  std::set<DomId> shut_down;  // introduced domains whose shutdown fired @releaseDomain already
  std::map<std::string, Perms> special_perms;

  explicit Impl(Limits l) : limits(l) {
    Node root;
    root.perms = {{0, Perm::none}};
    root.generation = generation++;
    tree["/"] = root;
    owned[0] = 1;
    special_perms[kIntroduceDomain] = {{0, Perm::none}};
    special_perms[kReleaseDomain] = {{0, Perm::none}};
  }

  static bool privileged(DomId domid) { return domid == 0; }

  // Xen's perm_for_conn: tools and the owner get everything, then the first entry naming the
  // domain, else the first entry's access for everybody.
  static unsigned perm_for(DomId domid, const Perms& perms) {
    if (perms.empty()) return privileged(domid) ? (kRead | kWrite | kOwner) : 0;
    if (privileged(domid) || perms[0].domid == domid) return kRead | kWrite | kOwner;
    for (size_t i = 1; i < perms.size(); ++i)
      if (perms[i].domid == domid) return perms[i].access;
    return perms[0].access;
  }

  View main_view() { return View{tree, owned, generation, nullptr}; }

  static const Node* lookup(View& v, const std::string& path) { return v.find(path); }

  // Xen's errno_from_parents: a missing node is ENOENT only to whom its nearest existing
  // ancestor grants the access asked; EACCES otherwise, so the answer tells nothing.
  static int missing_node_error(View& v, DomId domid, const std::string& path, unsigned need) {
    std::string p = path;
    while (p != "/") {
      p = parent_path(p);
      if (const Node* n = lookup(v, p)) return (perm_for(domid, n->perms) & need) ? ENOENT : EACCES;
    }
    return EACCES;
  }

  int get_node(View& v, DomId domid, const std::string& path, unsigned need, const Node** out) {
    *out = nullptr;
    if (!is_valid_node_path(path, limits.max_relative_path)) return EINVAL;
    const Node* n = lookup(v, path);
    if (!n) return missing_node_error(v, domid, path, need);
    if ((perm_for(domid, n->perms) & need) != need) return EACCES;
    *out = n;
    return 0;
  }

  bool over_entry_size(DomId domid, const Node& n) const {
    return !privileged(domid) && record_size(n) >= limits.max_entry_size;
  }

  Fire fire_for(View& v, const std::string& path, bool recursive) {
    Fire f;
    f.path = path;
    f.recursive = recursive;
    if (const Node* n = lookup(v, path)) f.node = n->perms;
    // The parent decides who may see the event; reading it is no access of the transaction's
    // (a sibling made meanwhile is no conflict), as Xen's watch_permitted.
    if (path != "/")
      if (const Node* p = v.peek(parent_path(path))) f.parent = p->perms;
    return f;
  }

  // Makes `path` and the ancestors it lacks (Xen's construct_node): each inherits its parent's
  // permissions, and an unprivileged domain owns what it makes.
  int create_node(View& v, DomId domid, const std::string& path, std::string_view value, std::vector<Fire>& fires) {
    std::vector<std::string> missing;
    std::string p = path;
    while (!lookup(v, p)) {
      missing.push_back(p);
      p = parent_path(p);
    }
    for (size_t i = 0; i < missing.size(); ++i) {
      if (!privileged(domid) && v.owned_by(domid) + i >= limits.nodes_per_domain) return ENOSPC;
    }
    Node probe;  // the deepest node, checked before anything is changed
    probe.value = std::string(value);
    probe.perms = lookup(v, p)->perms;
    if (over_entry_size(domid, probe)) return ENOSPC;
    {
      Node parent_probe = *lookup(v, p);
      parent_probe.children.emplace_back(basename(missing.back()));
      if (over_entry_size(domid, parent_probe)) return ENOSPC;
    }
    for (size_t i = missing.size(); i-- > 0;) {
      const std::string& name = missing[i];
      std::string parent = parent_path(name);
      Perms perms = lookup(v, parent)->perms;
      if (!privileged(domid) && !perms.empty()) perms[0].domid = domid;
      v.modify(parent).children.emplace_back(basename(name));
      Node& n = v.modify(name);
      n.perms = perms;
      n.value = i == 0 ? std::string(value) : std::string();
      v.count_owner(perms, +1);
    }
    fires.push_back(fire_for(v, path, false));
    return 0;
  }

  // Removes `path` and everything below it, firing for each removed node as Xen does (the top
  // one also for the watches below it).
  void remove_subtree(View& v, const std::string& path, std::vector<Fire>& fires, bool top) {
    const Node* n = lookup(v, path);
    if (!n) return;
    std::vector<std::string> children = n->children;
    for (const auto& c : children) remove_subtree(v, path == "/" ? "/" + c : path + "/" + c, fires, false);
    fires.push_back(fire_for(v, path, top));
    v.count_owner(lookup(v, path)->perms, -1);
    v.erase(path);
    if (top) {
      auto& siblings = v.modify(parent_path(path)).children;
      siblings.erase(std::remove(siblings.begin(), siblings.end(), std::string(basename(path))), siblings.end());
    }
  }

  // ---- delivery ----

  void queue(Connection& c, Message m, bool is_event) {
    if (is_event && c.out.size() >= limits.max_queued_output) {
      ++c.dropped;
      return;
    }
    c.out.push_back(std::move(m));
  }

  static std::string event_path(const Connection& c, const Watch& w, const std::string& path) {
    if (!w.relative) return path;
    std::string home = domain_path(c.domid) + "/";
    return path.substr(0, home.size()) == home ? path.substr(home.size()) : path;
  }

  void send_event(Connection& c, const Watch& w, const std::string& path) {
    Message m;
    m.type = XS_WATCH_EVENT;
    m.payload = event_path(c, w, path) + '\0' + w.token + '\0';
    queue(c, std::move(m), true);
  }

  void dispatch(const Fire& f) {
    for (auto& [id, c] : conns) {
      bool permitted = (perm_for(c.domid, f.node) & kRead) ||
                       (!f.parent.empty() && (perm_for(c.domid, f.parent) & kRead)) ||
                       (!f.old.empty() && (perm_for(c.domid, f.old) & kRead));
      if (!permitted) continue;
      for (const auto& w : c.watches) {
        if (is_special_path(w.path)) continue;
        if (is_under(f.path, w.path))
          send_event(c, w, f.path);
        else if (f.recursive && is_under(w.path, f.path))
          send_event(c, w, w.path);
      }
    }
  }

  void dispatch_special(const std::string& special) {
    const Perms& perms = special_perms[special];
    for (auto& [id, c] : conns) {
      if (!(perm_for(c.domid, perms) & kRead)) continue;
      for (const auto& w : c.watches)
        if (w.path == special) send_event(c, w, special);
    }
  }

  // ---- requests ----

  static Message ack(const Message& req) { return reply(req, std::string("OK\0", 3)); }
  static Message reply(const Message& req, std::string payload) {
    Message m;
    m.type = req.type;
    m.req_id = req.req_id;
    m.tx_id = req.tx_id;
    m.payload = std::move(payload);
    return m;
  }
  static Message error(const Message& req, int err) {
    Message m = reply(req, std::string(error_name(err)) + '\0');
    m.type = XS_ERROR;
    return m;
  }

  int do_read(Connection& c, View& v, const Message& req, Message& out) {
    auto arg = onearg(req.payload);
    if (!arg) return EINVAL;
    const Node* n;
    if (int err = get_node(v, c.domid, canonical_path(c.domid, *arg), kRead, &n)) return err;
    out = reply(req, n->value);
    return 0;
  }

  int write_value(View& v, DomId domid, const std::string& path, std::string_view value, std::vector<Fire>& fires) {
    const Node* n;
    int err = get_node(v, domid, path, kWrite, &n);
    if (err == ENOENT) return create_node(v, domid, path, value, fires);
    if (err) return err;
    Node probe = *n;
    probe.value = std::string(value);
    if (over_entry_size(domid, probe)) return ENOSPC;
    v.modify(path).value = std::string(value);
    fires.push_back(fire_for(v, path, false));
    return 0;
  }

  int do_write(Connection& c, View& v, const Message& req, std::vector<Fire>& fires) {
    size_t nul = req.payload.find('\0');
    if (nul == std::string::npos) return EINVAL;
    std::string path = canonical_path(c.domid, std::string_view(req.payload).substr(0, nul));
    return write_value(v, c.domid, path, std::string_view(req.payload).substr(nul + 1), fires);
  }

  int make_dir(View& v, DomId domid, const std::string& path, std::vector<Fire>& fires) {
    const Node* n;
    int err = get_node(v, domid, path, kWrite, &n);
    if (err == ENOENT) return create_node(v, domid, path, "", fires);
    return err;  // an existing node is fine
  }

  int remove_path(View& v, DomId domid, const std::string& path, std::vector<Fire>& fires) {
    const Node* n;
    int err = get_node(v, domid, path, kWrite, &n);
    if (err == ENOENT) return lookup(v, parent_path(path)) ? 0 : ENOENT;  // gone already: fine
    if (err) return err;
    if (path == "/") return EINVAL;
    remove_subtree(v, path, fires, true);
    return 0;
  }

  int do_directory(Connection& c, View& v, const Message& req, Message& out) {
    auto arg = onearg(req.payload);
    if (!arg) return EINVAL;
    const Node* n;
    if (int err = get_node(v, c.domid, canonical_path(c.domid, *arg), kRead, &n)) return err;
    std::string names;
    for (const auto& child : n->children) names += child + '\0';
    if (names.size() > XENSTORE_PAYLOAD_MAX) return E2BIG;
    out = reply(req, std::move(names));
    return 0;
  }

  // The children list from byte `offset` on, behind the node's generation, as much as fits; an
  // extra NUL says the list ended (Xen's send_directory_part: the client pieces a directory too
  // large for one answer together, and restarts if the generation changes).
  int do_directory_part(Connection& c, View& v, const Message& req, Message& out) {
    if (std::count(req.payload.begin(), req.payload.end(), '\0') != 2 || req.payload.back() != '\0') return EINVAL;
    auto strings = terminated_strings(req.payload);
    const Node* n;
    if (int err = get_node(v, c.domid, canonical_path(c.domid, strings[0]), kRead, &n)) return err;
    long start = atoi_like(strings[1]);
    size_t offset = start < 0 ? 0 : static_cast<size_t>(start);
    std::string names;
    for (const auto& child : n->children) names += child + '\0';
    std::string payload = std::to_string(n->generation) + '\0';
    if (offset >= names.size()) {
      out = reply(req, payload + '\0');
      return 0;
    }
    size_t room = XENSTORE_PAYLOAD_MAX - payload.size() - 1, len = 0;
    while (offset + len < names.size()) {
      size_t next = names.find('\0', offset + len) - (offset + len) + 1;
      if (len + next > room) break;
      len += next;
    }
    payload.append(names, offset, len);
    if (offset + len == names.size()) payload.push_back('\0');
    out = reply(req, std::move(payload));
    return 0;
  }

  int do_get_perms(Connection& c, View& v, const Message& req, Message& out) {
    auto arg = onearg(req.payload);
    if (!arg) return EINVAL;
    const Node* n;
    if (int err = get_node(v, c.domid, canonical_path(c.domid, *arg), kRead, &n)) return err;
    std::string text;
    for (const auto& p : n->perms) text += format_perm(p) + '\0';
    out = reply(req, std::move(text));
    return 0;
  }

  int set_perms(View& v, DomId domid, const std::string& path, const Perms& perms, std::vector<Fire>& fires) {
    const Node* n;
    if (int err = get_node(v, domid, path, kWrite | kOwner, &n)) return err;
    if (!privileged(domid) && perms[0].domid != n->perms[0].domid) return EPERM;
    Node probe = *n;
    probe.perms = perms;
    if (over_entry_size(domid, probe)) return ENOSPC;
    Perms old = n->perms;
    v.count_owner(old, -1);
    v.count_owner(perms, +1);
    v.modify(path).perms = perms;
    Fire f = fire_for(v, path, false);
    f.old = old;
    fires.push_back(std::move(f));
    return 0;
  }

  int do_set_perms(Connection& c, View& v, const Message& req, std::vector<Fire>& fires) {
    auto strings = terminated_strings(req.payload);
    if (strings.size() < 2) return EINVAL;
    if (!privileged(c.domid) && strings.size() - 1 > limits.perms_per_node) return ENOSPC;
    Perms perms;
    for (size_t i = 1; i < strings.size(); ++i) {
      auto p = parse_perm(strings[i]);
      if (!p) return EINVAL;
      perms.push_back(*p);
    }
    if (!strings[0].empty() && strings[0][0] == '@') {
      if (!is_special_path(strings[0])) return EINVAL;
      Perms& current = special_perms[strings[0]];
      if ((perm_for(c.domid, current) & (kWrite | kOwner)) != (kWrite | kOwner)) return EACCES;
      current = perms;
      return 0;
    }
    return set_perms(v, c.domid, canonical_path(c.domid, strings[0]), perms, fires);
  }

  int do_watch(Connection& c, const Message& req, Message& out, std::vector<std::pair<Watch, std::string>>& initial) {
    auto strings = terminated_strings(req.payload);
    if (strings.size() < 2) return EINVAL;
    Watch w;
    w.token = strings[1];
    if (!strings[0].empty() && strings[0][0] == '@') {
      if (strings[0].size() > XENSTORE_REL_PATH_MAX) return EINVAL;
      w.path = strings[0];
    } else {
      w.relative = strings[0].empty() || strings[0][0] != '/';
      w.path = canonical_path(c.domid, strings[0]);
      if (!is_valid_node_path(w.path, limits.max_relative_path)) return EINVAL;
    }
    for (const auto& existing : c.watches)
      if (existing.path == w.path && existing.token == w.token) return EEXIST;
    if (!privileged(c.domid) && c.watches.size() >= limits.watches_per_domain) return E2BIG;
    c.watches.push_back(w);
    out = ack(req);
    initial.emplace_back(w, w.path);  // Xen fires once on registration
    return 0;
  }

  int do_unwatch(Connection& c, const Message& req, Message& out) {
    auto strings = terminated_strings(req.payload);
    if (strings.size() < 2) return EINVAL;
    std::string path = canonical_path(c.domid, strings[0]);
    auto it = std::find_if(c.watches.begin(), c.watches.end(),
                           [&](const Watch& w) { return w.path == path && w.token == strings[1]; });
    if (it == c.watches.end()) return ENOENT;
    c.watches.erase(it);
    out = ack(req);
    return 0;
  }

  int do_transaction_start(Connection& c, const Message& req, Transaction* current, Message& out) {
    if (current) return EBUSY;  // no nested transactions
    size_t limit = privileged(c.domid) ? limits.transactions_privileged : limits.transactions_per_domain;
    if (c.transactions.size() >= limit) return ENOSPC;
    uint32_t id = c.next_tx;
    while (id == 0 || c.transactions.count(id)) ++id;
    c.next_tx = id + 1;
    // Nothing is copied: the transaction holds what it touches (store_view.h), up to a quota
    // for an unprivileged domain.
    c.transactions.emplace(id, Transaction(privileged(c.domid) ? SIZE_MAX : limits.nodes_per_transaction));
    out = reply(req, std::to_string(id) + '\0');
    out.tx_id = req.tx_id;
    return 0;
  }

  int do_transaction_end(Connection& c, const Message& req, Message& out, std::vector<Fire>& fires) {
    auto arg = onearg(req.payload);
    if (!arg || (*arg != "T" && *arg != "F")) return EINVAL;
    auto it = c.transactions.find(req.tx_id);
    if (req.tx_id == 0 || it == c.transactions.end()) return ENOENT;
    Transaction t = std::move(it->second);
    c.transactions.erase(it);
    if (*arg == "T") {
      // Xen's rule: a commit fails if any node the transaction touched has changed since.
      if (t.overlay.conflicts(tree)) return EAGAIN;
      t.overlay.commit(tree, owned, generation);
      fires.insert(fires.end(), t.fires.begin(), t.fires.end());
    }
    out = ack(req);
    return 0;
  }

  std::optional<DomId> onearg_domid(const Message& req) {
    auto arg = onearg(req.payload);
    if (!arg) return std::nullopt;
    return static_cast<DomId>(atoi_like(*arg));
  }

  int do_introduce(const Message& req, Message& out, bool& introduced_now) {
    auto strings = terminated_strings(req.payload);
    if (strings.size() < 3) return EINVAL;
    DomId domid = static_cast<DomId>(atoi_like(strings[0]));
    long port = atoi_like(strings[2]);
    if (port <= 0) return EINVAL;
    if (!introduced.count(domid)) {
      introduced[domid] =
          IntroducedDomain{domid, static_cast<uint64_t>(atoi_like(strings[1])), static_cast<uint32_t>(port)};
      introduced_now = true;
    }
    out = ack(req);
    return 0;
  }

  int do_release(const Message& req, Message& out) {
    auto domid = onearg_domid(req);
    if (!domid || *domid == 0) return EINVAL;
    if (!introduced.erase(*domid)) return ENOENT;
    shut_down.erase(*domid);
    for (auto it = conns.begin(); it != conns.end();) it = it->second.domid == *domid ? conns.erase(it) : std::next(it);
    out = ack(req);
    return 0;
  }

  int do_is_domain_introduced(const Message& req, Message& out) {
    auto domid = onearg_domid(req);
    if (!domid) return EINVAL;
    bool known = *domid == kDomidSelf || *domid == 0 || introduced.count(*domid);
    out = reply(req, std::string(known ? "T" : "F") + '\0');
    return 0;
  }

  int do_control(const Message& req, Message& out) {
    auto strings = terminated_strings(req.payload);
    if (strings.empty()) return EINVAL;
    if (strings[0] == "print") {
      out = ack(req);
      return 0;
    }
    if (strings[0] == "help") {
      out = reply(req, std::string("Valid commands:\nprint <string>\nhelp\n") + '\0');
      return 0;
    }
    return EINVAL;
  }

  void handle(ConnId id, const Message& req) {
    auto cit = conns.find(id);
    if (cit == conns.end()) return;
    Connection& c = cit->second;
    std::vector<Fire> fires;
    std::vector<std::pair<Watch, std::string>> initial;
    bool introduced_now = false, released = false;
    DomId released_domid = 0;
    Message out;
    int err = dispatch_request(c, req, out, fires, initial, introduced_now, released, released_domid);
    // RELEASE may have ended the caller's own connection (a domain releasing itself is
    // refused as unprivileged, so the caller is dom0 and stays).
    auto again = conns.find(id);
    if (again != conns.end()) queue(again->second, err ? error(req, err) : out, false);
    for (auto& [w, path] : initial)
      if (again != conns.end()) send_event(again->second, w, path);
    for (const auto& f : fires) dispatch(f);
    if (introduced_now) dispatch_special(kIntroduceDomain);
    if (released) dispatch_special(kReleaseDomain);
    (void)released_domid;
  }

  // A request on nodes (read, write, directory, permissions): its error (0 for none), or nothing
  // if it is no such request.
  std::optional<int> node_request(Connection& c, View& v, const Message& req, Message& out, std::vector<Fire>& fires) {
    switch (req.type) {
      case XS_READ: return do_read(c, v, req, out);
      case XS_DIRECTORY: return do_directory(c, v, req, out);
      case XS_DIRECTORY_PART: return do_directory_part(c, v, req, out);
      case XS_GET_PERMS: return do_get_perms(c, v, req, out);
      case XS_WRITE: return acked(req, out, do_write(c, v, req, fires));
      case XS_MKDIR: {
        auto arg = onearg(req.payload);
        if (!arg) return EINVAL;
        return acked(req, out, make_dir(v, c.domid, canonical_path(c.domid, *arg), fires));
      }
      case XS_RM: {
        auto arg = onearg(req.payload);
        if (!arg) return EINVAL;
        return acked(req, out, remove_path(v, c.domid, canonical_path(c.domid, *arg), fires));
      }
      case XS_SET_PERMS: return acked(req, out, do_set_perms(c, v, req, fires));
      default: return std::nullopt;
    }
  }

  static int acked(const Message& req, Message& out, int err) {
    if (!err) out = ack(req);
    return err;
  }

  // A request in a transaction is all or nothing: one that would make the transaction hold
  // more nodes than it may (Xen's quota_trans_nodes, unprivileged domains) changes nothing in
  // it and is ENOSPC. Its watch events wait for the commit.
  std::optional<int> node_request_in(Transaction& t, Connection& c, const Message& req, Message& out) {
    View v{tree, owned, generation, &t.overlay};
    const size_t fires_before = t.fires.size();
    t.overlay.begin_request();
    try {
      return node_request(c, v, req, out, t.fires);
    } catch (const Overlay::Full&) {
      t.overlay.rollback_request();
      t.fires.erase(t.fires.begin() + long(fires_before), t.fires.end());
      return ENOSPC;
    }
  }

  int dispatch_request(Connection& c, const Message& req, Message& out, std::vector<Fire>& fires,
                       std::vector<std::pair<Watch, std::string>>& initial, bool& introduced_now, bool& released,
                       DomId& released_domid) {
    static constexpr uint32_t kPrivOnly[] = {XS_CONTROL, XS_INTRODUCE, XS_RELEASE, XS_IS_DOMAIN_INTRODUCED,
                                             XS_RESUME,  XS_SET_TARGET};
    static constexpr uint32_t kNoTx[] = {XS_WATCH,
                                         XS_UNWATCH,
                                         XS_TRANSACTION_START,
                                         XS_INTRODUCE,
                                         XS_RELEASE,
                                         XS_GET_DOMAIN_PATH,
                                         XS_IS_DOMAIN_INTRODUCED,
                                         XS_RESUME,
                                         XS_SET_TARGET,
                                         XS_RESET_WATCHES,
                                         XS_CONTROL};
    const uint32_t type = req.type;
    bool known = type < XS_TYPE_COUNT && type != XS_WATCH_EVENT && type != XS_ERROR && type != XS_SET_TARGET &&
                 type != 20 /* removed XS_RESTRICT */;
    if (!known) return ENOSYS;
    if (!privileged(c.domid) && std::find(std::begin(kPrivOnly), std::end(kPrivOnly), type) != std::end(kPrivOnly))
      return EACCES;
    Transaction* tx = nullptr;
    bool takes_tx = std::find(std::begin(kNoTx), std::end(kNoTx), type) == std::end(kNoTx);
    if ((takes_tx || type == XS_TRANSACTION_START) && req.tx_id != 0) {
      auto it = c.transactions.find(req.tx_id);
      if (it == c.transactions.end()) return ENOENT;
      tx = &it->second;
    }
    if (tx) {
      if (auto err = node_request_in(*tx, c, req, out)) return *err;
    } else {
      View main = main_view();
      if (auto err = node_request(c, main, req, out, fires)) return *err;
    }
    switch (type) {
      case XS_WATCH: return do_watch(c, req, out, initial);
      case XS_UNWATCH: return do_unwatch(c, req, out);
      case XS_TRANSACTION_START: return do_transaction_start(c, req, tx, out);
      case XS_TRANSACTION_END: return do_transaction_end(c, req, out, fires);
      case XS_GET_DOMAIN_PATH: {
        auto domid = onearg_domid(req);
        if (!domid) return EINVAL;
        out = reply(req, domain_path(*domid) + '\0');
        return 0;
      }
      case XS_INTRODUCE: return do_introduce(req, out, introduced_now);
      case XS_RELEASE: {
        int err = do_release(req, out);
        if (!err) released = true, released_domid = *onearg_domid(req);
        return err;
      }
      case XS_IS_DOMAIN_INTRODUCED: return do_is_domain_introduced(req, out);
      case XS_RESUME: {
        auto domid = onearg_domid(req);
        if (!domid || *domid == 0) return EINVAL;
        if (!introduced.count(*domid)) return ENOENT;
        out = ack(req);
        return 0;
      }
      case XS_RESET_WATCHES:
        c.watches.clear();
        c.transactions.clear();
        out = ack(req);
        return 0;
      case XS_CONTROL: return do_control(req, out);
      default: return ENOSYS;
    }
  }
};

Store::Store(Limits limits) : impl_(std::make_unique<Impl>(limits)) {}
Store::~Store() = default;

ConnId Store::connect(DomId domid) {
  ConnId id = impl_->next_conn++;
  impl_->conns[id].domid = domid;
  return id;
}
void Store::disconnect(ConnId conn) { impl_->conns.erase(conn); }
bool Store::connected(ConnId conn) const { return impl_->conns.count(conn) != 0; }
void Store::handle(ConnId conn, const Message& request) { impl_->handle(conn, request); }

std::deque<Message> Store::take_output(ConnId conn) {
  auto it = impl_->conns.find(conn);
  if (it == impl_->conns.end()) return {};
  return std::exchange(it->second.out, {});
}
bool Store::has_output(ConnId conn) const {
  auto it = impl_->conns.find(conn);
  return it != impl_->conns.end() && !it->second.out.empty();
}
uint64_t Store::dropped_events(ConnId conn) const {
  auto it = impl_->conns.find(conn);
  return it == impl_->conns.end() ? 0 : it->second.dropped;
}

bool Store::domain_shut_down(DomId domid) {
  if (!impl_->introduced.count(domid) || !impl_->shut_down.insert(domid).second) return false;
  impl_->dispatch_special(kReleaseDomain);
  return true;
}

std::vector<IntroducedDomain> Store::introduced_domains() const {
  std::vector<IntroducedDomain> out{IntroducedDomain{0, 0, 0}};
  for (const auto& [id, d] : impl_->introduced) out.push_back(d);
  return out;
}

int Store::write(std::string_view path, std::string_view value, const Perms* perms) {
  // What one XS_WRITE could carry (path, NUL, value), as libxenstore's xs_write refuses the rest.
  if (path.size() + 1 + value.size() > XENSTORE_PAYLOAD_MAX) return E2BIG;
  View v = impl_->main_view();
  std::vector<Fire> fires;
  int err = impl_->write_value(v, 0, std::string(path), value, fires);
  if (!err && perms && !perms->empty()) err = impl_->set_perms(v, 0, std::string(path), *perms, fires);
  for (const auto& f : fires) impl_->dispatch(f);
  return err;
}

int Store::mkdir(std::string_view path, const Perms* perms) {
  View v = impl_->main_view();
  std::vector<Fire> fires;
  int err = impl_->make_dir(v, 0, std::string(path), fires);
  if (!err && perms && !perms->empty()) err = impl_->set_perms(v, 0, std::string(path), *perms, fires);
  for (const auto& f : fires) impl_->dispatch(f);
  return err;
}

int Store::remove(std::string_view path) {
  View v = impl_->main_view();
  std::vector<Fire> fires;
  int err = impl_->remove_path(v, 0, std::string(path), fires);
  for (const auto& f : fires) impl_->dispatch(f);
  return err;
}

std::optional<std::string> Store::read(std::string_view path) const {
  auto it = impl_->tree.find(std::string(path));
  if (it == impl_->tree.end()) return std::nullopt;
  return it->second.value;
}

std::optional<Perms> Store::get_perms(std::string_view path) const {
  auto it = impl_->tree.find(std::string(path));
  if (it == impl_->tree.end()) return std::nullopt;
  return it->second.perms;
}

std::vector<std::string> Store::directory(std::string_view path) const {
  auto it = impl_->tree.find(std::string(path));
  if (it == impl_->tree.end()) return {};
  return it->second.children;
}

size_t Store::node_count() const { return impl_->tree.size(); }
unsigned Store::owned_nodes(DomId domid) const {
  auto it = impl_->owned.find(domid);
  return it == impl_->owned.end() ? 0 : it->second;
}
size_t Store::open_transactions(ConnId conn) const {
  auto it = impl_->conns.find(conn);
  return it == impl_->conns.end() ? 0 : it->second.transactions.size();
}
size_t Store::transaction_nodes(ConnId conn) const {
  auto it = impl_->conns.find(conn);
  if (it == impl_->conns.end()) return 0;
  size_t nodes = 0;
  for (const auto& [id, t] : it->second.transactions) nodes += t.overlay.size();
  return nodes;
}
size_t Store::watch_count(ConnId conn) const {
  auto it = impl_->conns.find(conn);
  return it == impl_->conns.end() ? 0 : it->second.watches.size();
}

std::vector<Store::WatchSpec> Store::watches(ConnId conn) const {
  std::vector<WatchSpec> out;
  auto it = impl_->conns.find(conn);
  if (it == impl_->conns.end()) return out;
  const std::string home = domain_path(it->second.domid) + "/";
  for (const auto& w : it->second.watches) {
    bool under_home = w.path.compare(0, home.size(), home) == 0;
    out.push_back({w.relative && under_home ? w.path.substr(home.size()) : w.path, w.token});
  }
  return out;
}

}  // namespace xenstore
