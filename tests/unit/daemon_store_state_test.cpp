// A guest's part of the store, kept in its record and put back by a restarted pvhvd.
#include "tools/daemon/store_state.h"

#include <gtest/gtest.h>

namespace pvhv::daemon {
namespace {

using xenstore::make_request;

// The guest (d3) writes nodes and registers watches; the state rebuilt in a new store from
// the daemon's own nodes plus the recorded state is the same, and the watches fire there.
TEST(DaemonStoreState, AGuestsNodesAndWatchesSurviveARestart) {
  xenstore::Store first;
  xenstore::create_domain_nodes(first, {3, "guest", "00112233-4455-6677-8899-aabbccddeeff"});
  xenstore::ConnId guest = first.connect(3);
  first.handle(guest, make_request(XS_WRITE, {"control/feature-poweroff", "1"}, 0, 1, true));
  first.handle(guest, make_request(XS_WRITE, {"data/bin", std::string("\0\xff\x01", 3)}, 0, 2, true));
  first.handle(guest, make_request(XS_WATCH, {"control/shutdown", "tok"}, 0, 3));
  first.handle(guest, make_request(XS_WATCH, {"@releaseDomain", "rel"}, 0, 4));
  first.take_output(guest);
  Json state = guest_store_state(first, guest, 3);
  EXPECT_EQ(state["watches"].size(), 2u);

  xenstore::Store second;
  xenstore::create_domain_nodes(second, {3, "guest", "00112233-4455-6677-8899-aabbccddeeff"});
  xenstore::ConnId again = second.connect(3);
  restore_guest_store_state(second, again, 3, Json::parse(state.dump()));
  EXPECT_FALSE(second.has_output(again)) << "the re-registration is not news to the guest";
  EXPECT_EQ(second.read("/local/domain/3/control/feature-poweroff"), std::string("1"));
  EXPECT_EQ(second.read("/local/domain/3/data/bin"), std::string("\0\xff\x01", 3));
  EXPECT_EQ(second.get_perms("/local/domain/3/data/bin"), first.get_perms("/local/domain/3/data/bin"));
  EXPECT_EQ(guest_store_state(second, again, 3), state);
  second.write("/local/domain/3/control/shutdown", "poweroff");
  auto events = second.take_output(again);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, XS_WATCH_EVENT);
  EXPECT_EQ(events[0].payload, std::string("control/shutdown\0tok\0", 21));
}

// A record is a file anybody with the state directory could edit: what the guest could not
// have made (nodes outside its home, owned by another domain, bad hex, junk) is not put back.
TEST(DaemonStoreState, ARecordedStateCannotReachBeyondTheGuest) {
  xenstore::Store store;
  xenstore::create_domain_nodes(store, {3, "guest"});
  xenstore::ConnId guest = store.connect(3);
  size_t nodes = store.node_count();
  Json state = Json::parse(R"({"nodes": [
      {"path": "/local/domain/0/evil", "value_hex": "41", "perms": ["n3"]},
      {"path": "data/x", "value_hex": "41", "perms": ["n0"]},
      {"path": "data/y", "value_hex": "4", "perms": ["n3"]},
      {"path": "data/z", "value_hex": "zz", "perms": ["n3"]},
      {"path": 5, "value_hex": "41", "perms": ["n3"]},
      {"path": "data/w", "value_hex": "41", "perms": []},
      7],
    "watches": [{"path": 1, "token": "t"}, "x", {"path": "data", "token": "ok"}]})");
  restore_guest_store_state(store, guest, 3, state);
  EXPECT_EQ(store.node_count(), nodes);
  EXPECT_EQ(store.watch_count(guest), 1u);
  restore_guest_store_state(store, guest, 3, Json::array());
  restore_guest_store_state(store, guest, 3, Json("x"));
  EXPECT_EQ(store.node_count(), nodes);
}

}  // namespace
}  // namespace pvhv::daemon
