// A transaction's overlay of the nodes it touched, and the view operations read and write
// through (store_view.h).
#include "tools/xenstore/store_view.h"

namespace xenstore {

void count_owner(Owned& owned, const Perms& perms, int delta) {
  unsigned& c = owned[owner_of(perms)];
  c = delta > 0 ? c + 1 : (c ? c - 1 : 0);
}

// ---- Overlay ----

void Overlay::journal(const std::string& path, const Entry* before) {
  if (undo_.count(path)) return;  // the request's first change to it is what to restore
  undo_[path] = before ? std::optional<Entry>(*before) : std::nullopt;
}

Overlay::Entry& Overlay::access(const Tree& store, const std::string& path) {
  auto it = entries_.find(path);
  if (it != entries_.end()) return it->second;
  if (entries_.size() >= max_entries_) throw Full{};
  Entry entry;
  auto in_store = store.find(path);
  if (in_store != store.end()) {
    entry.node = in_store->second;
    entry.seen = in_store->second.generation;
  }
  journal(path, nullptr);
  return entries_.emplace(path, std::move(entry)).first->second;
}

const Node* Overlay::find(const Tree& store, const std::string& path) {
  Entry& entry = access(store, path);
  return entry.node ? &*entry.node : nullptr;
}

const Node* Overlay::peek(const Tree& store, const std::string& path) const {
  auto held = entries_.find(path);
  if (held != entries_.end()) return held->second.node ? &*held->second.node : nullptr;
  auto it = store.find(path);
  return it == store.end() ? nullptr : &it->second;
}

Node& Overlay::modify(const Tree& store, const std::string& path) {
  Entry& entry = access(store, path);
  journal(path, &entry);
  entry.changed = true;
  if (!entry.node) entry.node.emplace();
  return *entry.node;
}

void Overlay::erase(const Tree& store, const std::string& path) {
  Entry& entry = access(store, path);
  journal(path, &entry);
  entry.changed = true;
  entry.node.reset();
}

unsigned Overlay::owned_by(const Owned& store_owned, DomId domid) const {
  auto base = store_owned.find(domid);
  long count = base == store_owned.end() ? 0 : long(base->second);
  auto delta = owned_delta_.find(domid);
  if (delta != owned_delta_.end()) count += delta->second;
  return count > 0 ? unsigned(count) : 0;
}

void Overlay::count_owner(const Perms& perms, int delta) { owned_delta_[owner_of(perms)] += delta > 0 ? 1 : -1; }

void Overlay::begin_request() {
  undo_.clear();
  owned_delta_before_ = owned_delta_;
}

void Overlay::rollback_request() {
  for (auto& [path, before] : undo_) {
    if (before)
      entries_[path] = std::move(*before);
    else
      entries_.erase(path);
  }
  undo_.clear();
  owned_delta_ = owned_delta_before_;
}

bool Overlay::conflicts(const Tree& store) const {
  for (const auto& [path, entry] : entries_) {
    auto it = store.find(path);
    std::optional<uint64_t> now = it == store.end() ? std::nullopt : std::optional<uint64_t>(it->second.generation);
    if (now != entry.seen) return true;
  }
  return false;
}

void Overlay::commit(Tree& store, Owned& owned, uint64_t& generation) const {
  for (const auto& [path, entry] : entries_) {
    if (!entry.changed) continue;
    auto old = store.find(path);
    if (old != store.end()) {
      xenstore::count_owner(owned, old->second.perms, -1);
      store.erase(old);
    }
    if (!entry.node) continue;
    Node n = *entry.node;
    n.generation = generation++;
    xenstore::count_owner(owned, n.perms, +1);
    store[path] = std::move(n);
  }
}

// ---- View ----

const Node* View::find(const std::string& path) {
  if (overlay) return overlay->find(tree, path);
  auto it = tree.find(path);
  return it == tree.end() ? nullptr : &it->second;
}

const Node* View::peek(const std::string& path) const {
  if (overlay) return overlay->peek(tree, path);
  auto it = tree.find(path);
  return it == tree.end() ? nullptr : &it->second;
}

Node& View::modify(const std::string& path) {
  if (overlay) return overlay->modify(tree, path);
  Node& n = tree[path];
  n.generation = generation++;
  return n;
}

void View::erase(const std::string& path) {
  if (overlay) return overlay->erase(tree, path);
  tree.erase(path);
}

unsigned View::owned_by(DomId domid) const {
  if (overlay) return overlay->owned_by(owned, domid);
  auto it = owned.find(domid);
  return it == owned.end() ? 0 : it->second;
}

void View::count_owner(const Perms& perms, int delta) {
  if (overlay) return overlay->count_owner(perms, delta);
  xenstore::count_owner(owned, perms, delta);
}

}  // namespace xenstore
