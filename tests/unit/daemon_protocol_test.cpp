// pvhvd's request parsing and validation (tools/daemon/protocol.h): every line gets a request or
// an error answer, never an exception; configs resolve with xl's defaults or xl's messages.
#include <gtest/gtest.h>

#include <random>

#include "tools/daemon/protocol.h"

namespace pvhv::daemon {
namespace {

Json error_of(std::string_view line) {
  auto parsed = parse_request(line);
  EXPECT_TRUE(std::holds_alternative<Json>(parsed)) << line;
  return std::holds_alternative<Json>(parsed) ? std::get<Json>(parsed) : Json();
}

TEST(DaemonProtocol, ParsesARequest) {
  auto parsed = parse_request(R"({"id":7,"op":"list","dom":"web"})");
  ASSERT_TRUE(std::holds_alternative<Request>(parsed));
  auto& request = std::get<Request>(parsed);
  EXPECT_EQ(request.id, 7u);
  EXPECT_EQ(request.op, "list");
  EXPECT_EQ(request.body["dom"], "web");
}

TEST(DaemonProtocol, BadLinesAreEinvalWithIdNull) {
  for (std::string_view line : {"", "nonsense", "[1,2]", "42", "\"x\"", "{\"op\":\"list\"}",
                                "{\"id\":-1,\"op\":\"list\"}", "{\"id\":1.5,\"op\":\"list\"}",
                                "{\"id\":\"1\",\"op\":\"list\"}", "{\"id\":1", "{\"id\":1,\"op\":\"li\xff\"}"}) {
    Json answer = error_of(line);
    EXPECT_EQ(answer["ok"], false) << line;
    EXPECT_EQ(answer["errno"], kEinval) << line;
    EXPECT_TRUE(answer["id"].is_null()) << line;
  }
}

TEST(DaemonProtocol, MissingOpKeepsTheId) {
  Json answer = error_of(R"({"id":3})");
  EXPECT_EQ(answer["id"], 3);
  EXPECT_EQ(answer["errno"], kEinval);
  answer = error_of(R"({"id":3,"op":5})");
  EXPECT_EQ(answer["errno"], kEinval);
}

TEST(DaemonProtocol, UnknownOpIsEopnotsupp) {
  Json answer = error_of(R"({"id":4,"op":"frobnicate"})");
  EXPECT_EQ(answer["id"], 4);
  EXPECT_EQ(answer["errno"], kEopnotsupp);
}

TEST(DaemonProtocol, OversizedLineIsE2big) {
  std::string line(kMaxLineBytes + 1, ' ');
  Json answer = error_of(line);
  EXPECT_EQ(answer["errno"], kE2big);
  EXPECT_TRUE(answer["id"].is_null());
}

TEST(DaemonProtocol, RandomLinesNeverThrow) {
  std::mt19937 random(10);
  const std::string seed = R"({"id":1,"op":"create","config":{"name":"a","kernel":"/k","memory":32}})";
  for (int i = 0; i < 20000; ++i) {
    std::string line = seed.substr(0, random() % (seed.size() + 1));
    for (int flips = random() % 4; flips > 0; --flips)
      if (!line.empty()) line[random() % line.size()] = char(random());
    auto parsed = parse_request(line);
    if (auto* request = std::get_if<Request>(&parsed)) {
      EXPECT_TRUE(known_op(request->op));
      if (request->body.contains("config")) (void)resolve_config(request->body["config"]);
    }
  }
}

TEST(DaemonProtocol, TypedFields) {
  Json body{{"wait", true}, {"kb", 5}, {"name", "x"}, {"bad", "yes"}};
  EXPECT_EQ(std::get<bool>(bool_field(body, "wait", false)), true);
  EXPECT_EQ(std::get<bool>(bool_field(body, "absent", true)), true);
  EXPECT_TRUE(std::holds_alternative<Failure>(bool_field(body, "bad", false)));
  EXPECT_EQ(*std::get<std::optional<uint64_t>>(u64_field(body, "kb")), 5u);
  EXPECT_TRUE(std::holds_alternative<Failure>(u64_field(body, "name")));
  EXPECT_TRUE(std::holds_alternative<Failure>(string_field(body, "kb")));
  EXPECT_FALSE(std::get<std::optional<std::string>>(string_field(body, "absent")));
}

TEST(DaemonProtocol, DomainArgument) {
  auto ref = std::get<DomainRef>(domain_field(Json{{"dom", "12"}}));
  EXPECT_EQ(ref.domid, 12u);
  ref = std::get<DomainRef>(domain_field(Json{{"dom", "web1"}}));
  EXPECT_FALSE(ref.domid);
  EXPECT_EQ(ref.text, "web1");
  auto failure = std::get<Failure>(domain_field(Json{{"dom", "32752"}}));  // DOMID_FIRST_RESERVED
  EXPECT_EQ(failure.error, kEsrch);
  EXPECT_EQ(failure.message, "32752 is an invalid domain identifier");
  EXPECT_TRUE(std::holds_alternative<Failure>(domain_field(Json{{"dom", 3}})));
  EXPECT_TRUE(std::holds_alternative<Failure>(domain_field(Json::object())));
}

TEST(DaemonProtocol, ConfigDefaultsAreLibxls) {
  auto config = std::get<DomainConfig>(resolve_config(Json{{"name", "d"}, {"kernel", "/k"}}));
  EXPECT_EQ(config.memory_mib, 32u);
  EXPECT_EQ(config.maxmem_mib, 32u);
  EXPECT_EQ(config.vcpus, 1u);
  EXPECT_EQ(config.on_poweroff, Action::destroy);
  EXPECT_EQ(config.on_reboot, Action::restart);
  EXPECT_EQ(config.on_crash, Action::destroy);
  config = std::get<DomainConfig>(resolve_config(Json{{"name", "d"}, {"kernel", "/k"}, {"memory", 64}}));
  EXPECT_EQ(config.maxmem_mib, 64u);
  Json round = config_to_json(config);
  auto again = std::get<DomainConfig>(resolve_config(round));
  EXPECT_EQ(again.memory_mib, 64u);
  EXPECT_EQ(again.name, "d");
}

TEST(DaemonProtocol, ConfigErrors) {
  auto error = [](Json config) { return std::get<Failure>(resolve_config(config)).message; };
  EXPECT_EQ(error(Json{{"kernel", "/k"}}), "Domain name must be specified.");
  EXPECT_EQ(error(Json{{"name", "d"}}), "no kernel specified");
  EXPECT_EQ(error(Json{{"name", "d"}, {"kernel", "/k"}, {"on_crash", "explode"}}),
            "Unknown on_crash action \"explode\" specified");
  EXPECT_EQ(error(Json{{"name", "Domain-0"}, {"kernel", "/k"}}), "Domain with name \"Domain-0\" already exists.");
  EXPECT_EQ(error(Json{{"name", "d"}, {"kernel", "/k"}, {"uuid", "nope"}}), "Failed to parse UUID: nope");
  EXPECT_EQ(error(Json{{"name", "d"}, {"kernel", "/k"}, {"vcpus", 4}, {"maxvcpus", 2}}), "maxvcpus < vcpus");
  EXPECT_TRUE(std::holds_alternative<Failure>(resolve_config(Json{{"name", "d"}, {"kernel", "/k"}, {"vcpus", 0}})));
  EXPECT_TRUE(std::holds_alternative<Failure>(resolve_config(Json{{"name", "d"}, {"kernel", "/k"}, {"memory", 0}})));
  EXPECT_TRUE(std::holds_alternative<Failure>(
      resolve_config(Json{{"name", "d"}, {"kernel", "/k"}, {"memory", 64}, {"maxmem", 32}})));
  EXPECT_TRUE(std::holds_alternative<Failure>(resolve_config(Json{{"name", "a/b"}, {"kernel", "/k"}})));
  EXPECT_TRUE(std::holds_alternative<Failure>(resolve_config(Json{{"name", "d"}, {"kernel", 5}})));
  EXPECT_TRUE(std::holds_alternative<Failure>(resolve_config(Json::array())));
  EXPECT_TRUE(std::holds_alternative<Failure>(
      resolve_config(Json{{"name", "d"}, {"kernel", "/k"}, {"ptwr_mode", "sometimes"}})));
}

// vcpus and maxvcpus as xl.cfg gives them: maxvcpus defaults to vcpus; how many a domain may
// have is the hypervisor's answer at createdomain (ours: 8, Xen: more).
TEST(DaemonProtocol, ConfigVcpus) {
  auto config = [](Json fields) { return std::get<DomainConfig>(resolve_config(fields)); };
  const DomainConfig one = config(Json{{"name", "d"}, {"kernel", "/k"}});
  EXPECT_EQ(one.vcpus, 1u);
  EXPECT_EQ(one.maxvcpus, 1u);
  const DomainConfig two = config(Json{{"name", "d"}, {"kernel", "/k"}, {"vcpus", 2}});
  EXPECT_EQ(two.vcpus, 2u);
  EXPECT_EQ(two.maxvcpus, 2u);
  const DomainConfig some = config(Json{{"name", "d"}, {"kernel", "/k"}, {"vcpus", 2}, {"maxvcpus", 4}});
  EXPECT_EQ(some.vcpus, 2u);
  EXPECT_EQ(some.maxvcpus, 4u);
  const DomainConfig again = config(config_to_json(some));
  EXPECT_EQ(again.vcpus, 2u);
  EXPECT_EQ(again.maxvcpus, 4u);
  EXPECT_EQ(config(Json{{"name", "d"}, {"kernel", "/k"}, {"vcpus", 16}}).maxvcpus, 16u) << "the hypervisor says no";
}

TEST(DaemonProtocol, Uuids) {
  auto bytes = parse_uuid("00112233-4455-6677-8899-AABBCCDDEEFF");
  ASSERT_TRUE(bytes);
  EXPECT_EQ(format_uuid(*bytes), "00112233-4455-6677-8899-aabbccddeeff");
  EXPECT_TRUE(parse_uuid("00112233445566778899aabbccddeeff"));
  EXPECT_FALSE(parse_uuid("00112233-4455-6677-8899-aabbccddeef"));
  EXPECT_FALSE(parse_uuid("0011223-34455-6677-8899-aabbccddeeff"));
  EXPECT_FALSE(parse_uuid("g0112233-4455-6677-8899-aabbccddeeff"));
  EXPECT_FALSE(parse_uuid(""));
}

}  // namespace
}  // namespace pvhv::daemon

namespace pvhv::daemon {
namespace {
TEST(DaemonProtocol, CreateConfigCpus) {
  auto resolved = resolve_config(Json{{"name", "d"}, {"kernel", "/k"}, {"cpus", "2-3"}, {"cpus_soft", {"0", "1"}}});
  ASSERT_TRUE(std::holds_alternative<DomainConfig>(resolved));
  const DomainConfig& c = std::get<DomainConfig>(resolved);
  EXPECT_TRUE(c.cpus.given);
  EXPECT_FALSE(c.cpus.per_vcpu);
  ASSERT_NE(c.cpus.for_vcpu(5), nullptr) << "a string: every vCPU";
  EXPECT_EQ(*c.cpus.for_vcpu(5), "2-3");
  EXPECT_TRUE(c.cpus_soft.per_vcpu);
  ASSERT_NE(c.cpus_soft.for_vcpu(1), nullptr);
  EXPECT_EQ(*c.cpus_soft.for_vcpu(1), "1");
  EXPECT_EQ(c.cpus_soft.for_vcpu(2), nullptr) << "beyond the list: every CPU";
  Json back = config_to_json(c);
  EXPECT_EQ(back["cpus"], "2-3");
  EXPECT_EQ(back["cpus_soft"], Json::array({"0", "1"}));
  EXPECT_FALSE(
      config_to_json(std::get<DomainConfig>(resolve_config(Json{{"name", "d"}, {"kernel", "/k"}}))).contains("cpus"));
  for (const Json& bad : {Json("1-x"), Json(3), Json::array({"0", 1}), Json::array({"^all"})}) {
    auto refused = resolve_config(Json{{"name", "d"}, {"kernel", "/k"}, {"cpus", bad}});
    ASSERT_TRUE(std::holds_alternative<Failure>(refused)) << bad.dump();
    EXPECT_EQ(std::get<Failure>(refused).error, kEinval) << bad.dump();
  }
  auto message = resolve_config(Json{{"name", "d"}, {"kernel", "/k"}, {"cpus", "1-x"}});
  EXPECT_EQ(std::get<Failure>(message).message, "Invalid pcpu range: 1-x.");
}
}  // namespace
}  // namespace pvhv::daemon
