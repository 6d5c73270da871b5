// The store's rules, each against Xen 4.17's xenstored answers.
#include <errno.h>
#include <gtest/gtest.h>

#include "tools/xenstore/xenstore.h"

namespace xenstore {
namespace {

const std::string kOk("OK\0", 3);

std::string err(const char* name) { return std::string(name) + '\0'; }

struct StoreTest : ::testing::Test {
  Store store;
  ConnId dom0 = store.connect(0);
  ConnId dom1 = store.connect(1);
  ConnId dom2 = store.connect(2);

  void SetUp() override {
    ASSERT_EQ(create_domain_nodes(store, {1, "one", "11111111-0000-0000-0000-000000000001", 65536, 2, 100}), 0);
    ASSERT_EQ(create_domain_nodes(store, {2, "two", "22222222-0000-0000-0000-000000000002", 65536, 2, 200}), 0);
    store.take_output(dom0), store.take_output(dom1), store.take_output(dom2);
  }

  // Sends one request and returns the answer (the first message queued); events stay queued.
  Message call(ConnId c, uint32_t type, std::vector<std::string_view> args, uint32_t tx = 0, bool raw_last = false) {
    store.handle(c, make_request(type, args, tx, 77, raw_last));
    auto out = store.take_output(c);
    EXPECT_FALSE(out.empty());
    if (out.empty()) return {};
    Message answer = out.front();
    out.pop_front();
    for (auto& m : out) pending[c].push_back(m);
    EXPECT_EQ(answer.req_id, 77u);
    return answer;
  }
  Message write(ConnId c, std::string_view path, std::string_view value, uint32_t tx = 0) {
    return call(c, XS_WRITE, {path, value}, tx, true);
  }
  std::vector<Message> events(ConnId c) {
    auto out = store.take_output(c);
    std::vector<Message> all = pending[c];
    pending[c].clear();
    all.insert(all.end(), out.begin(), out.end());
    return all;
  }
  std::map<ConnId, std::vector<Message>> pending;
};

void expect_error(const Message& m, const char* name) {
  EXPECT_EQ(m.type, XS_ERROR);
  EXPECT_EQ(m.payload, err(name));
}

std::string event(std::string_view path, std::string_view token) {
  return std::string(path) + '\0' + std::string(token) + '\0';
}

TEST_F(StoreTest, WriteThenReadGivesTheValueWithoutNul) {
  EXPECT_EQ(write(dom0, "/tool/x", "hello").payload, kOk);
  Message r = call(dom0, XS_READ, {"/tool/x"});
  EXPECT_EQ(r.type, XS_READ);
  EXPECT_EQ(r.payload, "hello");
  EXPECT_EQ(r.tx_id, 0u);
}

TEST_F(StoreTest, WriteMakesTheMissingParentsEmpty) {
  write(dom0, "/a/b/c", "v");
  EXPECT_EQ(call(dom0, XS_READ, {"/a/b"}).payload, "");
  EXPECT_EQ(call(dom0, XS_DIRECTORY, {"/a"}).payload, std::string("b\0", 2));
}

TEST_F(StoreTest, ValuesMayHoldBinaryBytes) {
  std::string value("x\0y\xff", 4);
  write(dom0, "/bin", value);
  EXPECT_EQ(call(dom0, XS_READ, {"/bin"}).payload, value);
}

TEST_F(StoreTest, ReadOfAMissingNodeIsEnoent) { expect_error(call(dom0, XS_READ, {"/nothing"}), "ENOENT"); }

TEST_F(StoreTest, MalformedArgumentsAreEinval) {
  // No NUL, two NULs, an empty payload, an invalid path, a special path.
  store.handle(dom0, Message{XS_READ, 1, 0, "/tool"});
  expect_error(store.take_output(dom0).front(), "EINVAL");
  store.handle(dom0, Message{XS_READ, 1, 0, std::string("/a\0/b\0", 6)});
  expect_error(store.take_output(dom0).front(), "EINVAL");
  store.handle(dom0, Message{XS_READ, 1, 0, ""});
  expect_error(store.take_output(dom0).front(), "EINVAL");
  for (const char* bad : {"/a//b", "/a/", "/a b", "/a/\xc3\xa9", "@introduceDomain"})
    expect_error(call(dom0, XS_READ, {bad}), "EINVAL");
  store.handle(dom0, Message{XS_WRITE, 1, 0, "/novalue-no-nul"});
  expect_error(store.take_output(dom0).front(), "EINVAL");
}

TEST_F(StoreTest, RelativePathsResolveAgainstTheDomainsHome) {
  EXPECT_EQ(call(dom1, XS_READ, {"name"}).payload, "one");
  EXPECT_EQ(call(dom2, XS_READ, {"name"}).payload, "two");
  EXPECT_EQ(write(dom1, "data/x", "1").payload, kOk);
  EXPECT_EQ(store.read("/local/domain/1/data/x"), "1");
}

TEST_F(StoreTest, PathLengthIsBoundBelowTheDomainsHome) {
  std::string rel(XENSTORE_REL_PATH_MAX, 'a');
  EXPECT_TRUE(is_valid_node_path("/local/domain/1/" + rel));
  EXPECT_FALSE(is_valid_node_path("/local/domain/1/" + rel + "a"));
  EXPECT_FALSE(is_valid_node_path("/" + rel + "a"));
  expect_error(write(dom1, "data/" + std::string(XENSTORE_REL_PATH_MAX, 'x'), "v"), "EINVAL");
}

TEST_F(StoreTest, DeepPathsWithinTheLimitWork) {
  std::string path = "data";
  for (int i = 0; i < 500; ++i) path += "/d";
  EXPECT_EQ(write(dom1, path, "deep").payload, kOk);
  EXPECT_EQ(call(dom1, XS_READ, {path}).payload, "deep");
  EXPECT_EQ(call(dom1, XS_RM, {"data/d"}).payload, kOk);
  expect_error(call(dom1, XS_READ, {path}), "ENOENT");
}

TEST_F(StoreTest, MkdirOfAnExistingNodeIsFineAndKeepsItsValue) {
  write(dom0, "/m", "keep");
  EXPECT_EQ(call(dom0, XS_MKDIR, {"/m"}).payload, kOk);
  EXPECT_EQ(call(dom0, XS_READ, {"/m"}).payload, "keep");
}

TEST_F(StoreTest, RmIsRecursiveAndRemovesFromTheParent) {
  write(dom0, "/r/a/b", "1");
  write(dom0, "/r/c", "2");
  size_t before = store.node_count();
  EXPECT_EQ(call(dom0, XS_RM, {"/r/a"}).payload, kOk);
  EXPECT_EQ(store.node_count(), before - 2);
  EXPECT_EQ(call(dom0, XS_DIRECTORY, {"/r"}).payload, std::string("c\0", 2));
}

TEST_F(StoreTest, RmOfAMissingNodeIsOkIfItsParentExists) {
  EXPECT_EQ(call(dom0, XS_RM, {"/local/nothing"}).payload, kOk);
  expect_error(call(dom0, XS_RM, {"/nothing/below"}), "ENOENT");
  expect_error(call(dom0, XS_RM, {"/"}), "EINVAL");
}

TEST_F(StoreTest, DirectoryListsChildrenInCreationOrder) {
  write(dom0, "/d/zz", "");
  write(dom0, "/d/aa", "");
  write(dom0, "/d/mm", "");
  EXPECT_EQ(call(dom0, XS_DIRECTORY, {"/d"}).payload, std::string("zz\0aa\0mm\0", 9));
  EXPECT_EQ(call(dom0, XS_DIRECTORY, {"/d/zz"}).payload, "");
}

TEST_F(StoreTest, DirectoryLargerThanAPayloadIsE2big) {
  for (int i = 0; i < 400; ++i) write(dom0, "/big/child-with-a-long-name-" + std::to_string(i), "");
  expect_error(call(dom0, XS_DIRECTORY, {"/big"}), "E2BIG");
}

TEST_F(StoreTest, DirectoryPartPiecesALargeDirectoryTogether) {
  std::string expected;
  for (int i = 0; i < 400; ++i) {
    std::string name = "child-with-a-long-name-" + std::to_string(i);
    write(dom0, "/big/" + name, "");
    expected += name + '\0';
  }
  std::string got, generation;
  for (int round = 0; round < 10; ++round) {
    Message m = call(dom0, XS_DIRECTORY_PART, {"/big", std::to_string(got.size())});
    ASSERT_EQ(m.type, XS_DIRECTORY_PART);
    ASSERT_LE(m.payload.size(), XENSTORE_PAYLOAD_MAX);
    size_t nul = m.payload.find('\0');
    if (round == 0) generation = m.payload.substr(0, nul);
    EXPECT_EQ(m.payload.substr(0, nul), generation);
    std::string part = m.payload.substr(nul + 1);
    bool last = part.size() >= 2 && part.substr(part.size() - 2) == std::string("\0\0", 2);
    got += last ? part.substr(0, part.size() - 1) : part;
    if (last) break;
  }
  EXPECT_EQ(got, expected);
  // Beyond the list: the generation and an empty string.
  Message end = call(dom0, XS_DIRECTORY_PART, {"/big", "100000"});
  EXPECT_EQ(end.payload, generation + std::string("\0\0", 2));
  expect_error(call(dom0, XS_DIRECTORY_PART, {"/big"}), "EINVAL");
  expect_error(call(dom2, XS_DIRECTORY_PART, {"/local/domain/1", "0"}), "EACCES");
}

TEST_F(StoreTest, StandardNodesHaveLibxlsPermissions) {
  EXPECT_EQ(call(dom0, XS_GET_PERMS, {"/local/domain/1"}).payload, std::string("n0\0r1\0", 6));
  EXPECT_EQ(call(dom1, XS_GET_PERMS, {"control/shutdown"}).payload, std::string("n1\0", 3));
  EXPECT_EQ(call(dom1, XS_READ, {"vm"}).payload, "/vm/11111111-0000-0000-0000-000000000001");
  EXPECT_EQ(call(dom1, XS_READ, {"domid"}).payload, "1");
  EXPECT_EQ(call(dom1, XS_READ, {"memory/target"}).payload, "65536");
  EXPECT_EQ(call(dom1, XS_READ, {"console/port"}).payload, "2");
  EXPECT_EQ(call(dom1, XS_READ, {"console/ring-ref"}).payload, "100");
  EXPECT_EQ(call(dom1, XS_READ, {"cpu/0/availability"}).payload, "online");
  EXPECT_EQ(call(dom1, XS_READ, {"cpu/1/availability"}).payload, err("ENOENT")) << "one vCPU";
  EXPECT_EQ(create_domain_nodes(store, {0, "dom0"}), EINVAL);
}

// libxl__build_post's cpu/<i>/availability: online for the first `vcpus`, offline up to
// maxvcpus, read-only to the domain.
TEST_F(StoreTest, EachVcpuHasItsAvailability) {
  ASSERT_EQ(create_domain_nodes(store, {3, "three", "33333333-0000-0000-0000-000000000003", 65536, 2, 300, 4, 2}), 0);
  const ConnId dom3 = store.connect(3);
  EXPECT_EQ(call(dom3, XS_READ, {"cpu/0/availability"}).payload, "online");
  EXPECT_EQ(call(dom3, XS_READ, {"cpu/1/availability"}).payload, "online");
  EXPECT_EQ(call(dom3, XS_READ, {"cpu/2/availability"}).payload, "offline");
  EXPECT_EQ(call(dom3, XS_READ, {"cpu/3/availability"}).payload, "offline");
  EXPECT_EQ(call(dom3, XS_READ, {"cpu/4/availability"}).payload, err("ENOENT"));
  EXPECT_EQ(call(dom3, XS_DIRECTORY, {"cpu"}).payload, std::string("0\0001\0002\0003\0", 8));
  EXPECT_EQ(call(dom0, XS_GET_PERMS, {"/local/domain/3/cpu/2/availability"}).payload, std::string("n0\0r3\0", 6));
  EXPECT_EQ(call(dom3, XS_WRITE, {"cpu/2/availability", "online"}, 0, true).payload, err("EACCES"));
}

TEST_F(StoreTest, ADomainCannotReadOrWriteAnothersNodes) {
  expect_error(call(dom2, XS_READ, {"/local/domain/1/name"}), "EACCES");
  expect_error(write(dom2, "/local/domain/1/data/x", "1"), "EACCES");
  // Its own home is read-only to it, its control/shutdown is its own.
  expect_error(write(dom1, "name", "renamed"), "EACCES");
  EXPECT_EQ(write(dom1, "control/shutdown", "").payload, kOk);
  // A missing node under a node it may not read says EACCES, not ENOENT.
  expect_error(call(dom2, XS_READ, {"/local/domain/1/nothing"}), "EACCES");
  expect_error(call(dom1, XS_READ, {"nothing"}), "ENOENT");
  // Nor may it write at the root.
  expect_error(write(dom1, "/mine", "1"), "EACCES");
}

TEST_F(StoreTest, PermissionEntriesGrantPerDomain) {
  write(dom0, "/shared", "s");
  EXPECT_EQ(call(dom0, XS_SET_PERMS, {"/shared", "n0", "r1", "b2"}).payload, kOk);
  EXPECT_EQ(call(dom1, XS_READ, {"/shared"}).payload, "s");
  expect_error(write(dom1, "/shared", "x"), "EACCES");
  EXPECT_EQ(write(dom2, "/shared", "y").payload, kOk);
  // The first entry is everybody else's access.
  EXPECT_EQ(call(dom0, XS_SET_PERMS, {"/shared", "r0"}).payload, kOk);
  EXPECT_EQ(call(dom2, XS_READ, {"/shared"}).payload, "y");
}

TEST_F(StoreTest, AnUnprivilegedDomainOwnsWhatItCreates) {
  write(dom1, "data/mine/deep", "1");
  EXPECT_EQ(call(dom0, XS_GET_PERMS, {"/local/domain/1/data/mine"}).payload, std::string("n1\0", 3));
  // The parent's permissions are inherited, with the creator as owner.
  write(dom0, "/pub", "");
  call(dom0, XS_SET_PERMS, {"/pub", "n0", "w2", "r1"});
  write(dom2, "/pub/x", "");
  EXPECT_EQ(call(dom0, XS_GET_PERMS, {"/pub/x"}).payload, std::string("n2\0w2\0r1\0", 9));
}

TEST_F(StoreTest, SetPermsRules) {
  write(dom1, "data/p", "1");
  // The owner may change the access, not the owner.
  EXPECT_EQ(call(dom1, XS_SET_PERMS, {"data/p", "n1", "r2"}).payload, kOk);
  EXPECT_EQ(call(dom2, XS_READ, {"/local/domain/1/data/p"}).payload, "1");
  expect_error(call(dom1, XS_SET_PERMS, {"data/p", "n2"}), "EPERM");
  // Someone with write access but not the owner may not.
  expect_error(call(dom2, XS_SET_PERMS, {"/local/domain/1/data/p", "n1"}), "EACCES");
  expect_error(call(dom1, XS_SET_PERMS, {"data/p"}), "EINVAL");
  expect_error(call(dom1, XS_SET_PERMS, {"data/p", "x1"}), "EINVAL");
  expect_error(call(dom1, XS_SET_PERMS, {"data/p", "r"}), "EINVAL");
  expect_error(call(dom1, XS_SET_PERMS, {"data/p", "n1", "r2", "r3", "r4", "r5", "r6"}), "ENOSPC");
  // Dom0 may give the node away.
  EXPECT_EQ(call(dom0, XS_SET_PERMS, {"/local/domain/1/data/p", "n2"}).payload, kOk);
  EXPECT_EQ(store.owned_nodes(2) > 0, true);
}

TEST_F(StoreTest, NodeQuotaIsEnospcAndFreedByRm) {
  Limits limits;
  limits.nodes_per_domain = 20;
  Store small(limits);
  ASSERT_EQ(create_domain_nodes(small, {3, "q"}), 0);
  ConnId c = small.connect(3);
  int made = 0;
  Message last;
  for (int i = 0; i < 100; ++i) {
    small.handle(c, make_request(XS_WRITE, {"data/n" + std::to_string(i), "v"}, 0, 0, true));
    last = small.take_output(c).back();
    if (last.type == XS_ERROR) break;
    ++made;
  }
  // data, device, drivers, error, attr and control/{shutdown,feature-*,sysrq} are its own
  EXPECT_EQ(made, 20 - 10);
  EXPECT_EQ(last.payload, err("ENOSPC"));
  // A write of several missing levels at once is refused whole.
  small.handle(c, make_request(XS_RM, {"data/n0"}));
  small.take_output(c);
  small.handle(c, make_request(XS_WRITE, {"data/a/b/c", "v"}, 0, 0, true));
  EXPECT_EQ(small.take_output(c).back().payload, err("ENOSPC"));
  EXPECT_FALSE(small.read("/local/domain/3/data/a"));
  small.handle(c, make_request(XS_WRITE, {"data/a", "v"}, 0, 0, true));
  EXPECT_EQ(small.take_output(c).back().payload, kOk);
  // Dom0 has no quota.
  for (int i = 0; i < 50; ++i) EXPECT_EQ(small.write("/tool/n" + std::to_string(i), "v"), 0);
}

TEST_F(StoreTest, ValueSizeIsBoundForDomains) {
  EXPECT_EQ(write(dom1, "data/v", std::string(1900, 'x')).payload, kOk);
  expect_error(write(dom1, "data/v", std::string(2100, 'x')), "ENOSPC");
  EXPECT_EQ(write(dom0, "/local/domain/1/data/v", std::string(4000, 'x')).payload, kOk);
}

TEST_F(StoreTest, OversizedPayloadAnswersAreE2big) {
  // A value dom0 wrote near the payload limit is read back whole; a larger one cannot exist
  // on the wire (the parser refuses it), so reading a 4096-byte value is the largest answer.
  write(dom0, "/max", std::string(XENSTORE_PAYLOAD_MAX - 5, 'x'));
  EXPECT_EQ(call(dom0, XS_READ, {"/max"}).payload.size(), XENSTORE_PAYLOAD_MAX - 5u);
}

TEST_F(StoreTest, GetDomainPathAndIntroduction) {
  EXPECT_EQ(call(dom1, XS_GET_DOMAIN_PATH, {"7"}).payload, std::string("/local/domain/7\0", 16));
  expect_error(call(dom1, XS_GET_DOMAIN_PATH, {}), "EINVAL");
  expect_error(call(dom1, XS_INTRODUCE, {"5", "1234", "3"}), "EACCES");
  expect_error(call(dom1, XS_IS_DOMAIN_INTRODUCED, {"5"}), "EACCES");
  expect_error(call(dom1, XS_RELEASE, {"1"}), "EACCES");
  EXPECT_EQ(call(dom0, XS_IS_DOMAIN_INTRODUCED, {"5"}).payload, std::string("F\0", 2));
  expect_error(call(dom0, XS_INTRODUCE, {"5", "1234", "0"}), "EINVAL");
  expect_error(call(dom0, XS_INTRODUCE, {"5", "1234"}), "EINVAL");
  EXPECT_EQ(call(dom0, XS_INTRODUCE, {"5", "1234", "3"}).payload, kOk);
  EXPECT_EQ(call(dom0, XS_IS_DOMAIN_INTRODUCED, {"5"}).payload, std::string("T\0", 2));
  auto domains = store.introduced_domains();
  ASSERT_EQ(domains.size(), 2u);
  EXPECT_EQ(domains[1].domid, 5u);
  EXPECT_EQ(domains[1].mfn, 1234u);
  EXPECT_EQ(domains[1].port, 3u);
  expect_error(call(dom0, XS_RELEASE, {"6"}), "ENOENT");
  expect_error(call(dom0, XS_RELEASE, {"0"}), "EINVAL");
  EXPECT_EQ(call(dom0, XS_RELEASE, {"5"}).payload, kOk);
  EXPECT_EQ(call(dom0, XS_IS_DOMAIN_INTRODUCED, {"5"}).payload, std::string("F\0", 2));
}

TEST_F(StoreTest, SpecialWatchesFireOnIntroduceAndRelease) {
  EXPECT_EQ(call(dom0, XS_WATCH, {"@introduceDomain", "in"}).payload, kOk);
  EXPECT_EQ(call(dom0, XS_WATCH, {"@releaseDomain", "out"}).payload, kOk);
  EXPECT_EQ(call(dom1, XS_WATCH, {"@releaseDomain", "spy"}).payload, kOk);
  events(dom0), events(dom1);
  call(dom0, XS_INTRODUCE, {"1", "100", "3"});
  auto e = events(dom0);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].type, XS_WATCH_EVENT);
  EXPECT_EQ(e[0].payload, event("@introduceDomain", "in"));
  // A second introduction of the same domain fires nothing.
  call(dom0, XS_INTRODUCE, {"1", "100", "3"});
  EXPECT_TRUE(events(dom0).empty());
  // Writes never fire special watches.
  write(dom0, "/x", "1");
  EXPECT_TRUE(events(dom0).empty());
  call(dom0, XS_INTRODUCE, {"9", "100", "3"});
  events(dom0);
  call(dom0, XS_RELEASE, {"9"});
  e = events(dom0);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].payload, event("@releaseDomain", "out"));
  // The special nodes are dom0's: a domain's watch on them sees nothing.
  EXPECT_TRUE(events(dom1).empty());
}

// A domain that shuts down on its own fires @releaseDomain when the daemon sees it (once), and
// its RELEASE at destruction fires it again; a domain never introduced fires nothing.
TEST_F(StoreTest, ADomainShuttingDownFiresReleaseDomainOnce) {
  EXPECT_EQ(call(dom0, XS_WATCH, {"@releaseDomain", "out"}).payload, kOk);
  events(dom0);
  call(dom0, XS_INTRODUCE, {"7", "100", "3"});
  events(dom0);
  EXPECT_FALSE(store.domain_shut_down(8));
  EXPECT_TRUE(events(dom0).empty());
  EXPECT_TRUE(store.domain_shut_down(7));
  auto e = events(dom0);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].payload, event("@releaseDomain", "out"));
  EXPECT_FALSE(store.domain_shut_down(7));
  EXPECT_TRUE(events(dom0).empty());
  call(dom0, XS_RELEASE, {"7"});
  EXPECT_EQ(events(dom0).size(), 1u);
  // Introduced again (a restart under the same id): its next shutdown fires again.
  call(dom0, XS_INTRODUCE, {"7", "100", "3"});
  events(dom0);
  EXPECT_TRUE(store.domain_shut_down(7));
  EXPECT_EQ(events(dom0).size(), 1u);
}

TEST_F(StoreTest, ReleaseEndsTheDomainsConnections) {
  call(dom0, XS_INTRODUCE, {"2", "100", "3"});
  EXPECT_EQ(call(dom2, XS_WATCH, {"data", "t"}).payload, kOk);
  call(dom0, XS_RELEASE, {"2"});
  EXPECT_FALSE(store.connected(dom2));
  store.handle(dom2, make_request(XS_READ, {"name"}));
  EXPECT_FALSE(store.has_output(dom2));
}

TEST_F(StoreTest, UnknownTypesAreEnosys) {
  for (uint32_t type : {static_cast<uint32_t>(XS_WATCH_EVENT), static_cast<uint32_t>(XS_ERROR), 20u,
                        static_cast<uint32_t>(XS_TYPE_COUNT), 0xffffu, 0xffffffffu}) {
    store.handle(dom1, Message{type, 3, 0, std::string("x\0", 2)});
    auto out = store.take_output(dom1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type, XS_ERROR);
    EXPECT_EQ(out[0].req_id, 3u);
    EXPECT_EQ(out[0].payload, err("ENOSYS"));
  }
}

TEST_F(StoreTest, ControlIsDom0sAndMinimal) {
  expect_error(call(dom1, XS_CONTROL, {"print", "x"}), "EACCES");
  EXPECT_EQ(call(dom0, XS_CONTROL, {"print", "hello"}).payload, kOk);
  EXPECT_NE(call(dom0, XS_CONTROL, {"help"}).payload.find("print"), std::string::npos);
  expect_error(call(dom0, XS_CONTROL, {"frobnicate"}), "EINVAL");
  expect_error(call(dom0, XS_CONTROL, {}), "EINVAL");
}

// ---- watches ----

TEST_F(StoreTest, AWatchFiresOnceAtRegistrationWithItsPathAsGiven) {
  EXPECT_EQ(call(dom1, XS_WATCH, {"control/shutdown", "tok"}).payload, kOk);
  auto e = events(dom1);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].type, XS_WATCH_EVENT);
  EXPECT_EQ(e[0].req_id, 0u);
  EXPECT_EQ(e[0].payload, event("control/shutdown", "tok"));
}

TEST_F(StoreTest, AWatchFiresOnItsNodeAndChildrenOnly) {
  call(dom0, XS_WATCH, {"/w/a", "t"});
  events(dom0);
  write(dom0, "/w/a", "1");
  write(dom0, "/w/a/b", "2");
  write(dom0, "/w/ab", "3");  // not a child: a sibling with a common prefix
  write(dom0, "/w", "4");     // a parent
  auto e = events(dom0);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].payload, event("/w/a", "t"));
  EXPECT_EQ(e[1].payload, event("/w/a/b", "t"));
}

TEST_F(StoreTest, RelativeWatchesGetRelativeEvents) {
  call(dom1, XS_WATCH, {"control", "rel"});
  events(dom1);
  store.write("/local/domain/1/control/shutdown", "poweroff");
  auto e = events(dom1);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].payload, event("control/shutdown", "rel"));
}

TEST_F(StoreTest, RemovingASubtreeFiresWatchesBelowIt) {
  write(dom0, "/s/a/b", "1");
  call(dom0, XS_WATCH, {"/s/a/b", "below"});
  events(dom0);
  call(dom0, XS_RM, {"/s"});
  auto e = events(dom0);
  ASSERT_FALSE(e.empty());
  for (const auto& m : e) EXPECT_EQ(m.payload, event("/s/a/b", "below"));
}

TEST_F(StoreTest, WatchersSeeOnlyWhatTheyMayRead) {
  call(dom2, XS_WATCH, {"/local/domain/1", "spy"});
  events(dom2);
  store.write("/local/domain/1/control/shutdown", "poweroff");
  EXPECT_TRUE(events(dom2).empty());
}

TEST_F(StoreTest, WatchRules) {
  EXPECT_EQ(call(dom1, XS_WATCH, {"data", "t"}).payload, kOk);
  expect_error(call(dom1, XS_WATCH, {"data", "t"}), "EEXIST");
  EXPECT_EQ(call(dom1, XS_WATCH, {"data", "t2"}).payload, kOk);
  expect_error(call(dom1, XS_WATCH, {"data//x", "t"}), "EINVAL");
  expect_error(call(dom1, XS_WATCH, {"data"}), "EINVAL");
  expect_error(call(dom1, XS_UNWATCH, {"data", "nope"}), "ENOENT");
  EXPECT_EQ(call(dom1, XS_UNWATCH, {"data", "t"}).payload, kOk);
  // The unwatch of a relative path matches the watch of its absolute form.
  EXPECT_EQ(call(dom1, XS_UNWATCH, {"/local/domain/1/data", "t2"}).payload, kOk);
  EXPECT_EQ(store.watch_count(dom1), 0u);
}

TEST_F(StoreTest, WatchQuotaIsE2big) {
  for (unsigned i = 0; i < Limits{}.watches_per_domain; ++i)
    ASSERT_EQ(call(dom1, XS_WATCH, {"data", "t" + std::to_string(i)}).payload, kOk);
  expect_error(call(dom1, XS_WATCH, {"data", "one-more"}), "E2BIG");
  EXPECT_EQ(call(dom1, XS_RESET_WATCHES, {""}).payload, kOk);
  EXPECT_EQ(store.watch_count(dom1), 0u);
  EXPECT_EQ(call(dom1, XS_WATCH, {"data", "again"}).payload, kOk);
}

TEST_F(StoreTest, AGuestThatNeverReadsLosesEventsNotTheStore) {
  call(dom1, XS_WATCH, {"control/shutdown", "t"});
  for (int i = 0; i < 10000; ++i) store.write("/local/domain/1/control/shutdown", std::to_string(i));
  EXPECT_LE(store.take_output(dom1).size(), Limits{}.max_queued_output + 1);
  EXPECT_GT(store.dropped_events(dom1), 0u);
}

// ---- transactions ----

uint32_t start(StoreTest& t, ConnId c) {
  Message m = t.call(c, XS_TRANSACTION_START, {""});
  EXPECT_EQ(m.type, XS_TRANSACTION_START);
  return static_cast<uint32_t>(std::stoul(m.payload));
}

TEST_F(StoreTest, ATransactionIsInvisibleUntilCommitted) {
  uint32_t tx = start(*this, dom0);
  EXPECT_NE(tx, 0u);
  write(dom0, "/t/x", "in-tx", tx);
  EXPECT_EQ(call(dom0, XS_READ, {"/t/x"}, tx).payload, "in-tx");
  expect_error(call(dom0, XS_READ, {"/t/x"}), "ENOENT");
  EXPECT_EQ(call(dom0, XS_TRANSACTION_END, {"T"}, tx).payload, kOk);
  EXPECT_EQ(call(dom0, XS_READ, {"/t/x"}).payload, "in-tx");
}

TEST_F(StoreTest, AnAbortedTransactionLeavesNoTrace) {
  size_t before = store.node_count();
  uint32_t tx = start(*this, dom0);
  write(dom0, "/t/y", "1", tx);
  call(dom0, XS_RM, {"/local/domain/1"}, tx);
  EXPECT_EQ(call(dom0, XS_TRANSACTION_END, {"F"}, tx).payload, kOk);
  EXPECT_EQ(store.node_count(), before);
  expect_error(call(dom0, XS_TRANSACTION_END, {"T"}, tx), "ENOENT");
}

TEST_F(StoreTest, AConflictingCommitIsEagain) {
  write(dom0, "/c", "0");
  uint32_t tx = start(*this, dom0);
  EXPECT_EQ(call(dom0, XS_READ, {"/c"}, tx).payload, "0");
  write(dom0, "/c", "changed-outside");
  write(dom0, "/c2", "x", tx);
  expect_error(call(dom0, XS_TRANSACTION_END, {"T"}, tx), "EAGAIN");
  EXPECT_FALSE(store.read("/c2"));
  EXPECT_EQ(store.open_transactions(dom0), 0u);
}

TEST_F(StoreTest, ANodeThatAppearedIsAConflictToo) {
  uint32_t tx = start(*this, dom0);
  expect_error(call(dom0, XS_READ, {"/late"}, tx), "ENOENT");
  write(dom0, "/late", "1");
  expect_error(call(dom0, XS_TRANSACTION_END, {"T"}, tx), "EAGAIN");
}

TEST_F(StoreTest, DisjointTransactionsBothCommit) {
  write(dom0, "/p/a", "");
  write(dom0, "/p/b", "");
  uint32_t t1 = start(*this, dom0), t2 = start(*this, dom0);
  EXPECT_NE(t1, t2);
  write(dom0, "/p/a", "1", t1);
  write(dom0, "/p/b", "2", t2);
  EXPECT_EQ(call(dom0, XS_TRANSACTION_END, {"T"}, t1).payload, kOk);
  EXPECT_EQ(call(dom0, XS_TRANSACTION_END, {"T"}, t2).payload, kOk);
  EXPECT_EQ(store.read("/p/a"), "1");
  EXPECT_EQ(store.read("/p/b"), "2");
}

TEST_F(StoreTest, WatchesFireAtCommitNotBefore) {
  call(dom0, XS_WATCH, {"/wt", "t"});
  events(dom0);
  uint32_t tx = start(*this, dom0);
  write(dom0, "/wt/x", "1", tx);
  EXPECT_TRUE(events(dom0).empty());
  call(dom0, XS_TRANSACTION_END, {"T"}, tx);
  auto e = events(dom0);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].payload, event("/wt/x", "t"));
}

TEST_F(StoreTest, TransactionRules) {
  expect_error(call(dom0, XS_READ, {"/"}, 999), "ENOENT");
  uint32_t tx = start(*this, dom0);
  expect_error(call(dom0, XS_TRANSACTION_START, {""}, tx), "EBUSY");
  expect_error(call(dom0, XS_TRANSACTION_END, {"X"}, tx), "EINVAL");
  expect_error(call(dom0, XS_TRANSACTION_END, {"T"}), "ENOENT");
  // A transaction belongs to the connection that started it.
  expect_error(call(dom1, XS_READ, {"name"}, tx), "ENOENT");
  // Watch ignores the transaction id, as Xen's.
  EXPECT_EQ(call(dom0, XS_WATCH, {"/x", "t"}, tx).payload, kOk);
}

TEST_F(StoreTest, TransactionQuotaAndTransactionsLeftOpen) {
  for (unsigned i = 0; i < Limits{}.transactions_per_domain; ++i) start(*this, dom1);
  expect_error(call(dom1, XS_TRANSACTION_START, {""}), "ENOSPC");
  EXPECT_EQ(store.open_transactions(dom1), Limits{}.transactions_per_domain);
  call(dom1, XS_RESET_WATCHES, {""});
  EXPECT_EQ(store.open_transactions(dom1), 0u);
  // Left open by a connection that goes: gone with it, nothing committed.
  ConnId c = store.connect(1);
  store.handle(c, make_request(XS_TRANSACTION_START, {""}));
  uint32_t tx = static_cast<uint32_t>(std::stoul(store.take_output(c).front().payload));
  store.handle(c, make_request(XS_WRITE, {"data/left", "open"}, tx, 0, true));
  store.disconnect(c);
  EXPECT_FALSE(store.read("/local/domain/1/data/left"));
}

TEST_F(StoreTest, QuotaHoldsInsideTransactions) {
  Limits limits;
  limits.nodes_per_domain = 10;
  Store small(limits);
  create_domain_nodes(small, {3, "q"});
  ConnId c = small.connect(3);
  small.handle(c, make_request(XS_TRANSACTION_START, {""}));
  uint32_t tx = static_cast<uint32_t>(std::stoul(small.take_output(c).front().payload));
  Message last;
  for (int i = 0; i < 20; ++i) {
    small.handle(c, make_request(XS_WRITE, {"data/n" + std::to_string(i), "v"}, tx, 0, true));
    last = small.take_output(c).back();
  }
  EXPECT_EQ(last.payload, err("ENOSPC"));
  small.handle(c, make_request(XS_TRANSACTION_END, {"T"}, tx));
  EXPECT_EQ(small.take_output(c).back().payload, kOk);
  EXPECT_EQ(small.owned_nodes(3), 10u);
}

// The daemon's own writes (its clients' xenstore_write) are one XS_WRITE's worth: beyond
// XENSTORE_PAYLOAD_MAX (path, NUL, value), E2BIG as libxenstore's xs_write, the store unchanged.
TEST_F(StoreTest, HostWriteBeyondOnePayloadIsE2bigAndChangesNothing) {
  const std::string path = "/host/big";
  ASSERT_EQ(store.write(path, "before"), 0);
  const std::string fits(XENSTORE_PAYLOAD_MAX - path.size() - 1, 'v');
  EXPECT_EQ(store.write(path, fits), 0);
  EXPECT_EQ(store.read(path), fits);
  EXPECT_EQ(store.write(path, fits + "v"), E2BIG);
  EXPECT_EQ(store.read(path), fits);
  EXPECT_EQ(store.write("/host/new", std::string(XENSTORE_PAYLOAD_MAX, 'v')), E2BIG);
  EXPECT_FALSE(store.read("/host/new"));
}

}  // namespace
}  // namespace xenstore
