// pvhvd's domain records (tools/daemon/record.h): what is written is read back the same, and
// anything else in the state directory is not mistaken for a record.
#include <gtest/gtest.h>

#include "tools/daemon/record.h"

namespace pvhv::daemon {
namespace {

DomainRecord sample() {
  DomainRecord r;
  r.name = "forktest";
  r.uuid = "00112233-4455-6677-8899-aabbccddeeff";
  r.domid = 3;
  r.state = RecordState::running;
  r.config_given = Json{{"name", "forktest"}, {"kernel", "/k"}, {"extra", "kept as given"}};
  r.config = std::get<DomainConfig>(resolve_config(Json{{"name", "forktest"}, {"kernel", "/k"}, {"uuid", r.uuid}}));
  r.config_text = "name = \"forktest\"\n";
  r.config_file = "examples/forktest.cfg";
  r.start_unix_s = 1700000000;
  r.console_mfn = 0x1234;
  r.console_port = 2;
  r.store_mfn = 0x1235;
  r.store_port = 1;
  r.xenstore_state =
      Json{{"nodes", Json::array()}, {"watches", Json::array({Json{{"path", "control/shutdown"}, {"token", "t"}}})}};
  add_history(r, 1, "building");
  add_history(r, 2, "running");
  return r;
}

TEST(DaemonRecord, RoundTrip) {
  DomainRecord r = sample();
  auto back = record_from_json(Json::parse(record_to_json(r).dump()));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->name, r.name);
  EXPECT_EQ(back->uuid, r.uuid);
  EXPECT_EQ(back->domid, 3u);
  EXPECT_EQ(back->state, RecordState::running);
  EXPECT_EQ(back->config_given, r.config_given);
  EXPECT_EQ(back->config.kernel, "/k");
  EXPECT_EQ(back->config_text, r.config_text);
  EXPECT_EQ(back->console_mfn, 0x1234u);
  EXPECT_EQ(back->store_mfn, 0x1235u);
  EXPECT_EQ(back->store_port, 1u);
  EXPECT_EQ(back->xenstore_state, r.xenstore_state);
  ASSERT_EQ(back->history.size(), 2u);
  EXPECT_EQ(back->history[1].state, "running");
  EXPECT_EQ(record_file_name(r.uuid), "domain-00112233-4455-6677-8899-aabbccddeeff.json");
}

TEST(DaemonRecord, AnythingElseIsNoRecord) {
  Json good = record_to_json(sample());
  EXPECT_FALSE(record_from_json(Json()));
  EXPECT_FALSE(record_from_json(Json::array()));
  for (const auto& [key, value] : good.items()) {  // each field missing, then of the wrong type
    Json missing = good;
    missing.erase(key);
    EXPECT_FALSE(record_from_json(missing)) << key;
    Json wrong = good;
    wrong[key] = Json::array({1});
    EXPECT_FALSE(record_from_json(wrong)) << key;
  }
  Json bad_state = good;
  bad_state["state"] = "sleeping";
  EXPECT_FALSE(record_from_json(bad_state));
  Json bad_uuid = good;
  bad_uuid["uuid"] = "x";
  EXPECT_FALSE(record_from_json(bad_uuid));
  Json other_name = good;
  other_name["name"] = "other";  // the resolved config names another domain
  EXPECT_FALSE(record_from_json(other_name));
}

TEST(DaemonRecord, HistoryIsBounded) {
  DomainRecord r = sample();
  for (int i = 0; i < 1000; ++i) add_history(r, i, "restart");
  EXPECT_EQ(r.history.size(), kMaxHistory);
  EXPECT_EQ(r.history.back().unix_ns, 999);
}

}  // namespace
}  // namespace pvhv::daemon
