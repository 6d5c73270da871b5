// Pure: pvhvd's view of the machine's domains (the last getdomaininfolist), kept true across
// the daemon's own creates. Unit-tested (tests/unit/daemon_domain_view_test.cpp).
//
// The lists are read on the link threads, several at a time, and a create runs there too. A
// list that started before a create finished does not show the new domain, yet it may be
// handed back after the create: taken as it is, it would make the domain look destroyed
// elsewhere (its record dropped) and its domid unknown to `xl create -c`'s attach. So a create
// puts its domain in the view when it answers, and a list replaces the view only for what it
// can know: a domain created after the list began stays as the create left it until a list
// that began after the create shows where it is.
#pragma once
#include <xenctrl.h>

#include <cstdint>
#include <map>
#include <vector>

namespace pvhv::daemon {

class DomainView {
 public:
  // A list read is about to start: its stamp, for replace().
  uint64_t list_begins() const { return creates_; }
  // The daemon built domain `info.domain` (it is in the view from now on).
  void created(const xc_domaininfo_t& info);
  // A list read that began at `stamp` came back with `infos`.
  void replace(std::vector<xc_domaininfo_t> infos, uint64_t stamp);
  // Whether `domid` was created after the list of `stamp` began (that list cannot show it).
  bool newer_than(uint32_t domid, uint64_t stamp) const;

  const std::vector<xc_domaininfo_t>& domains() const { return domains_; }
  bool contains(uint32_t domid) const;

 private:
  std::vector<xc_domaininfo_t> domains_;     // ordered by domid, as getdomaininfolist gives them
  std::map<uint32_t, uint64_t> created_at_;  // domid -> create stamp, until a later list covers it
  uint64_t creates_ = 0;
};

}  // namespace pvhv::daemon
