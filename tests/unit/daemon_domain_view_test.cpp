// pvhvd's domain view (tools/daemon/domain_view.h): a domain the daemon just created is in the
// view from its create's answer, and a list that began before that create cannot take it out.
#include <gtest/gtest.h>

#include "tools/daemon/domain_view.h"

namespace {
using pvhv::daemon::DomainView;

xc_domaininfo_t domain(uint32_t domid, uint32_t flags = 0) {
  xc_domaininfo_t info{};
  info.domain = domid;
  info.flags = flags;
  return info;
}

std::vector<uint32_t> domids(const DomainView& view) {
  std::vector<uint32_t> out;
  for (const auto& info : view.domains()) out.push_back(info.domain);
  return out;
}

TEST(DaemonDomainView, ACreatedDomainIsInTheViewAtOnce) {
  DomainView view;
  view.replace({domain(0)}, view.list_begins());
  EXPECT_FALSE(view.contains(5));
  view.created(domain(5));
  EXPECT_TRUE(view.contains(5));
  EXPECT_EQ(domids(view), (std::vector<uint32_t>{0, 5}));
}

TEST(DaemonDomainView, AListBegunBeforeTheCreateKeepsTheNewDomain) {
  DomainView view;
  uint64_t stamp = view.list_begins();          // a list starts ...
  view.created(domain(3));                      // ... a create answers meanwhile ...
  view.replace({domain(2), domain(0)}, stamp);  // ... and the list comes back without d3
  EXPECT_EQ(domids(view), (std::vector<uint32_t>{0, 2, 3}));
  EXPECT_TRUE(view.newer_than(3, stamp));
  EXPECT_FALSE(view.newer_than(2, stamp));
}

TEST(DaemonDomainView, AListBegunAfterTheCreateDecides) {
  DomainView view;
  view.created(domain(3));
  uint64_t stamp = view.list_begins();
  view.replace({domain(0)}, stamp);  // d3 was destroyed (or never ran): this list knows
  EXPECT_FALSE(view.contains(3));
  // and a stale list after that one brings nothing back
  view.replace({domain(0)}, 0);
  EXPECT_FALSE(view.contains(3));
}

TEST(DaemonDomainView, ALaterListUpdatesTheCreatedDomainsState) {
  DomainView view;
  view.created(domain(4));
  uint64_t stamp = view.list_begins();
  view.replace({domain(0), domain(4, XEN_DOMINF_shutdown)}, stamp);
  ASSERT_TRUE(view.contains(4));
  EXPECT_EQ(view.domains().back().flags, uint32_t(XEN_DOMINF_shutdown));
  EXPECT_FALSE(view.newer_than(4, 0));  // covered: forgotten as new
}

TEST(DaemonDomainView, AStaleListKeepsWhatTheCreateSawNotAnOlderEntry) {
  DomainView view;
  view.replace({domain(0), domain(6, XEN_DOMINF_dying)}, view.list_begins());  // an old d6, dying
  uint64_t stamp = view.list_begins();
  view.created(domain(6));  // the domid reused by a new domain
  view.replace({domain(0), domain(6, XEN_DOMINF_dying)}, stamp);
  ASSERT_TRUE(view.contains(6));
  EXPECT_EQ(view.domains().back().flags, 0u);
}

}  // namespace
