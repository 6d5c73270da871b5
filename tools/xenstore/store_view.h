// Where a store operation reads and writes: the store's own nodes, or a transaction's overlay of
// them. A transaction keeps only the nodes it has read or written (each as it sees it, with the
// generation the store's node had when the transaction first looked), never a copy of the
// store: starting one costs nothing whatever the store's size, and what it holds grows with
// what it touches, bounded by a quota for unprivileged domains (Xen 4.17's xenstored:
// access_node, quota_trans_nodes; a commit fails with EAGAIN if any node it touched has a
// new generation since, or appeared, or went). Internal to the xenstore library. Pure.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tools/xenstore/xenstore.h"

namespace xenstore {

struct Node {
  std::string value;
  Perms perms;
  std::vector<std::string> children;  // names, in the order they were made (as Xen lists them)
  uint64_t generation = 0;
};
using Tree = std::unordered_map<std::string, Node>;
using Owned = std::map<DomId, unsigned>;  // nodes each domain owns (the entries quota)

// The domain a node's permissions name as its owner.
inline DomId owner_of(const Perms& perms) { return perms.empty() ? 0 : perms[0].domid; }
// One node more or less for the owner of `perms` (never below 0).
void count_owner(Owned& owned, const Perms& perms, int delta);

// A transaction's overlay. Every lookup through it is an access: the first one of a path copies
// the store's node (or notes it absent) with its generation.
class Overlay {
 public:
  // `max_entries`: the paths it may touch (beyond, a request touching another fails ENOSPC).
  explicit Overlay(size_t max_entries) : max_entries_(max_entries) {}

  // Thrown by an access that would hold more than max_entries paths. The request that made it
  // is undone (rollback_request) and answered ENOSPC.
  struct Full {};

  // The node as the transaction sees it; nullptr if absent to it.
  const Node* find(const Tree& store, const std::string& path);
  // The same without an access: nothing recorded, no conflict to come from it (what a watch
  // event's permissions are read from).
  const Node* peek(const Tree& store, const std::string& path) const;
  // The node to change (made, empty, if absent); it is written to the store at commit.
  Node& modify(const Tree& store, const std::string& path);
  void erase(const Tree& store, const std::string& path);
  // The store's count for `domid` with this transaction's changes to it.
  unsigned owned_by(const Owned& store_owned, DomId domid) const;
  void count_owner(const Perms& perms, int delta);

  // Requests are all-or-nothing: what a request changed in the overlay since begin_request is
  // undone by rollback_request (a request stopped by Full).
  void begin_request();
  void rollback_request();

  // True if a node it touched has changed in the store since it first looked.
  bool conflicts(const Tree& store) const;
  // Writes what it changed into the store, each node with a new generation, and recounts the
  // owners of what it replaced or made.
  void commit(Tree& store, Owned& owned, uint64_t& generation) const;

  // The paths it holds (each one node at most): what it costs the server.
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::optional<Node> node;      // as the transaction sees it (none: absent to it)
    std::optional<uint64_t> seen;  // the store's generation at the first access (none: absent)
    bool changed = false;
  };
  Entry& access(const Tree& store, const std::string& path);
  void journal(const std::string& path, const Entry* before);

  size_t max_entries_;
  std::map<std::string, Entry> entries_;
  std::map<DomId, long> owned_delta_;
  // The current request's undo: each path's entry before the request first changed it (none:
  // the request added it), and the owner counts before it.
  std::map<std::string, std::optional<Entry>> undo_;
  std::map<DomId, long> owned_delta_before_;
};

// An operation's view: the store itself (overlay null), or a transaction's overlay over it.
struct View {
  Tree& tree;
  Owned& owned;
  uint64_t& generation;  // the store's next generation
  Overlay* overlay;

  bool in_transaction() const { return overlay != nullptr; }
  const Node* find(const std::string& path);
  const Node* peek(const std::string& path) const;
  // Outside a transaction, a modified node takes the store's next generation at once.
  Node& modify(const std::string& path);
  void erase(const std::string& path);
  unsigned owned_by(DomId domid) const;
  void count_owner(const Perms& perms, int delta);
};

}  // namespace xenstore
