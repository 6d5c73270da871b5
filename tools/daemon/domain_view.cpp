#include "tools/daemon/domain_view.h"

#include <algorithm>

namespace pvhv::daemon {

namespace {
void insert_ordered(std::vector<xc_domaininfo_t>& domains, const xc_domaininfo_t& info) {
  auto at = std::lower_bound(domains.begin(), domains.end(), info.domain,
                             [](const xc_domaininfo_t& d, uint32_t domid) { return d.domain < domid; });
  if (at != domains.end() && at->domain == info.domain)
    *at = info;
  else
    domains.insert(at, info);
}
}  // namespace

void DomainView::created(const xc_domaininfo_t& info) {
  created_at_[info.domain] = ++creates_;
  insert_ordered(domains_, info);
}

bool DomainView::newer_than(uint32_t domid, uint64_t stamp) const {
  auto found = created_at_.find(domid);
  return found != created_at_.end() && found->second > stamp;
}

void DomainView::replace(std::vector<xc_domaininfo_t> infos, uint64_t stamp) {
  std::sort(infos.begin(), infos.end(), [](const auto& a, const auto& b) { return a.domain < b.domain; });
  for (auto it = created_at_.begin(); it != created_at_.end();) {
    if (it->second > stamp) {  // the list began before this create: what the create saw stands
      auto old = std::find_if(domains_.begin(), domains_.end(), [&](const auto& d) { return d.domain == it->first; });
      if (old != domains_.end()) insert_ordered(infos, *old);
      ++it;
    } else {
      it = created_at_.erase(it);  // the list knows where this domain is
    }
  }
  domains_ = std::move(infos);
}

bool DomainView::contains(uint32_t domid) const {
  return std::any_of(domains_.begin(), domains_.end(), [&](const auto& d) { return d.domain == domid; });
}

}  // namespace pvhv::daemon
