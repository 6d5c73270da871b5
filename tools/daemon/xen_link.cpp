// The daemon's hypervisor calls (xen_link.h).
#include "tools/daemon/xen_link.h"

#include "tools/xl/config/cpu_range.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <thread>

#include <xenctrl_pvhv.h>

#include "common/relay/window.h"

namespace pvhv::daemon {

Failure xc_failure(const std::string& what) {
  int error = errno ? errno : kEio;
  return Failure{error, what + ": " + std::strerror(error)};
}

namespace {
// Zero bytes are no frame header: the relay reports the cut frame they complete, skips the
// rest, and waits for a header again. A frame is at most 16 + 32832 bytes.
constexpr size_t kCompletingBytes = 16 + 32832 + 4096;
// The relay has taken the completing bytes and said what it had to once nothing came for this long.
constexpr int kQuietMs = 1500;
constexpr int kCompletingTimeoutMs = 30000;
}  // namespace

void complete_partial_frame(const std::string& socket) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", socket.c_str());
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return;
  }
  std::vector<char> zeros(kCompletingBytes, 0);
  size_t sent = 0;
  char sink[4096];
  int quiet_ms = 0;
  for (int elapsed = 0; elapsed < kCompletingTimeoutMs && quiet_ms < kQuietMs; elapsed += 100) {
    pollfd p{fd, short(POLLIN | (sent < zeros.size() ? POLLOUT : 0)), 0};
    if (poll(&p, 1, 100) < 0) break;
    bool busy = false;
    if (p.revents & POLLOUT) {
      ssize_t n = send(fd, zeros.data() + sent, zeros.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) sent += size_t(n), busy = true;
    }
    if (p.revents & POLLIN) {  // the relay's error reports: nobody's answers, dropped
      if (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0) break;
      busy = true;
    }
    if (p.revents & (POLLHUP | POLLERR)) break;
    quiet_ms = busy || sent < zeros.size() ? 0 : quiet_ms + 100;
  }
  close(fd);
}

void complete_partial_frame_in_window(const std::string& window) {
  namespace win = relay::window;
  int fd = ::open(window.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  void* map = mmap(nullptr, win::kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return;
  auto* base = static_cast<uint8_t*>(map);
  auto& h = *reinterpret_cast<win::Header*>(base);
  bool serving = win::load_acquire(h.state) == win::serving && h.magic == win::kMagic && h.version == win::kVersion &&
                 h.ring_bytes == win::kRingBytes && h.to_dom0_offset == win::kToDom0Offset &&
                 h.to_host_offset == win::kToHostOffset;
  std::vector<uint8_t> zeros(kCompletingBytes, 0);
  size_t sent = 0;
  int quiet_ms = 0;
  for (int elapsed = 0; serving && elapsed < kCompletingTimeoutMs && quiet_ms < kQuietMs; elapsed += 10) {
    bool busy = false;
    if (sent < zeros.size()) {
      size_t n = win::ring_write(h.to_dom0, base + win::kToDom0Offset, win::kRingBytes, zeros.data() + sent,
                                 zeros.size() - sent);
      sent += n;
      busy = n > 0;
    }
    // dom0 still reading, or reporting: the reports are nobody's answers, dropped.
    if (win::used(win::load_acquire(h.to_dom0.head), win::load_acquire(h.to_dom0.tail)) != 0) busy = true;
    if (win::used(win::load_acquire(h.to_host.head), win::load_acquire(h.to_host.tail)) != 0) {
      win::ring_discard(h.to_host);
      busy = true;
    }
    quiet_ms = busy || sent < zeros.size() ? 0 : quiet_ms + 10;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  munmap(map, win::kBytes);
}

bool open_link(Xen& xen, const std::string& socket, const std::string& window, int timeout_ms, int request_timeout_ms,
               std::string& why) {
  // libxenctrl picks its transport from the environment (tools/README.md).
  setenv("PVHV_XENCTRL", ("relay:" + socket).c_str(), 1);
  if (window.empty())
    unsetenv("PVHV_XENCTRL_WINDOW");
  else
    setenv("PVHV_XENCTRL_WINDOW", window.c_str(), 1);
  setenv("PVHV_XENCTRL_OPEN_TIMEOUT_MS", std::to_string(timeout_ms).c_str(), 1);
  setenv("PVHV_XENCTRL_TIMEOUT_MS", std::to_string(request_timeout_ms).c_str(), 1);
  xen.xch = xc_interface_open(nullptr, nullptr, 0);
  if (!xen.xch) {
    why = std::string("cannot open the relay session on ") + socket + ": " + std::strerror(errno);
    return false;
  }
  pvhv_xc_link_keep(xen.xch);
  return true;
}

std::variant<std::vector<xc_domaininfo_t>, Failure> domain_list(Xen& xen) {
  // Enough for any machine the relay dom0 runs; every entry crosses the link on each call.
  std::vector<xc_domaininfo_t> infos(256);
  int n = xc_domain_getinfolist(xen.xch, 0, unsigned(infos.size()), infos.data());
  if (n < 0) return xc_failure("getdomaininfolist");
  infos.resize(size_t(n));
  return infos;
}

namespace {

std::string version_string(xc_interface* xch, int command, size_t size) {
  std::vector<char> buffer(size + 1, 0);
  if (xc_version(xch, command, buffer.data()) < 0) return "";
  return std::string(buffer.data());
}

std::string scheduler_name(xc_interface* xch) {
  xen_sysctl_t sysctl{};
  sysctl.cmd = XEN_SYSCTL_sched_id;
  if (xc_sysctl(xch, &sysctl) != 0) return "unknown";
  switch (sysctl.u.sched_id.sched_id) {
    case XEN_SCHEDULER_CREDIT: return "credit";
    case XEN_SCHEDULER_CREDIT2: return "credit2";
    case XEN_SCHEDULER_ARINC653: return "arinc653";
    case XEN_SCHEDULER_RTDS: return "rtds";
    case XEN_SCHEDULER_NULL: return "null";
  }
  return "unknown";
}

}  // namespace

VersionInfo version_info(Xen& xen) {
  int version = xc_version(xen.xch, XENVER_version, nullptr);
  std::string extra = version_string(xen.xch, XENVER_extraversion, sizeof(xen_extraversion_t));
  VersionInfo info;
  std::string number = std::to_string(version >> 16) + "." + std::to_string(version & 0xffff);
  info.version = number + extra;
  info.hypervisor = extra.find("pvhv") != std::string::npos ? "pvhv" : "xen-" + number;
  return info;
}

std::variant<Json, Failure> host_info(Xen& xen) {
  xc_physinfo_t physinfo{};
  if (xc_physinfo(xen.xch, &physinfo) != 0) return xc_failure("xc_physinfo");
  int version = xc_version(xen.xch, XENVER_version, nullptr);
  if (version < 0) return xc_failure("xc_version");
  xen_compile_info_t compile{};
  xen_platform_parameters_t platform{};
  xc_version(xen.xch, XENVER_compile_info, &compile);
  xc_version(xen.xch, XENVER_platform_parameters, &platform);
  int pagesize = xc_version(xen.xch, XENVER_pagesize, nullptr);
  std::vector<uint8_t> build_id_storage(sizeof(xen_build_id_t) + 64, 0);
  auto* build_id = reinterpret_cast<xen_build_id_t*>(build_id_storage.data());
  build_id->len = 64;
  std::string build_id_text;
  int id_len = xc_version(xen.xch, XENVER_build_id, build_id);
  for (int i = 0; i < id_len && i < 64; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof(hex), "%02x", build_id->buf[i]);
    build_id_text += hex;
  }
  char hw_caps[9 * 9 + 1] = "";
  for (int i = 0; i < 8; ++i)
    std::snprintf(hw_caps + std::strlen(hw_caps), sizeof(hw_caps) - std::strlen(hw_caps), i ? ":%08x" : "%08x",
                  physinfo.hw_cap[i]);
  std::string virt_caps;
  auto cap = [&](uint32_t bit, const char* name) {
    if (physinfo.capabilities & bit) virt_caps += (virt_caps.empty() ? "" : " ") + std::string(name);
  };
  cap(XEN_SYSCTL_PHYSCAP_pv, "pv");
  cap(XEN_SYSCTL_PHYSCAP_hvm, "hvm");
  cap(XEN_SYSCTL_PHYSCAP_hap, "hap");
  cap(XEN_SYSCTL_PHYSCAP_shadow, "shadow");
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  utsname uts{};
  uname(&uts);
  char params[64];
  std::snprintf(params, sizeof(params), "virt_start=0x%lx", (unsigned long)platform.virt_start);
  auto mib = [](uint64_t pages) { return pages * 4096 / (1024 * 1024); };
  std::string extra = version_string(xen.xch, XENVER_extraversion, sizeof(xen_extraversion_t));
  return Json{
      {"host", host},
      {"release", uts.release},
      {"version", uts.version},
      {"machine", uts.machine},
      {"nr_cpus", physinfo.nr_cpus},
      {"max_cpu_id", physinfo.max_cpu_id},
      {"nr_nodes", physinfo.nr_nodes},
      {"cores_per_socket", physinfo.cores_per_socket},
      {"threads_per_core", physinfo.threads_per_core},
      {"cpu_mhz", physinfo.cpu_khz / 1000},
      {"hw_caps", hw_caps},
      {"virt_caps", virt_caps},
      {"total_memory", mib(physinfo.total_pages)},
      {"free_memory", mib(physinfo.free_pages)},
      {"free_pages", physinfo.free_pages},
      {"sharing_freed_memory", 0},
      {"sharing_used_memory", 0},
      {"outstanding_claims", mib(physinfo.outstanding_pages)},
      {"free_cpus", 0},
      {"xen_major", version >> 16},
      {"xen_minor", version & 0xffff},
      {"xen_extra", extra},
      {"xen_version", std::to_string(version >> 16) + "." + std::to_string(version & 0xffff) + extra},
      {"xen_caps", version_string(xen.xch, XENVER_capabilities, sizeof(xen_capabilities_info_t))},
      {"xen_scheduler", scheduler_name(xen.xch)},
      {"xen_pagesize", pagesize},
      {"platform_params", params},
      {"xen_changeset", version_string(xen.xch, XENVER_changeset, sizeof(xen_changeset_info_t))},
      {"xen_commandline", version_string(xen.xch, XENVER_commandline, sizeof(xen_commandline_t))},
      {"cc_compiler", std::string(compile.compiler, strnlen(compile.compiler, sizeof(compile.compiler)))},
      {"cc_compile_by", std::string(compile.compile_by, strnlen(compile.compile_by, sizeof(compile.compile_by)))},
      {"cc_compile_domain",
       std::string(compile.compile_domain, strnlen(compile.compile_domain, sizeof(compile.compile_domain)))},
      {"cc_compile_date",
       std::string(compile.compile_date, strnlen(compile.compile_date, sizeof(compile.compile_date)))},
      {"build_id", build_id_text},
      {"xend_config_format", 4}};
}

std::variant<std::string, Failure> read_console(Xen& xen, bool clear) {
  std::vector<char> buffer(64 * 1024);
  unsigned int chars = unsigned(buffer.size());
  if (xc_readconsolering(xen.xch, buffer.data(), &chars, clear ? 1 : 0, 0, nullptr) != 0)
    return xc_failure("xc_readconsolering");
  return std::string(buffer.data(), std::min<size_t>(chars, buffer.size()));
}

namespace {
// xc_cpumap_t bytes as the CPUs they name (nr_cpus bits).
Json cpus_of(const std::vector<uint8_t>& map, uint32_t nr_cpus) {
  Json cpus = Json::array();
  for (uint32_t cpu = 0; cpu < nr_cpus && cpu / 8 < map.size(); ++cpu)
    if ((map[cpu / 8] >> (cpu % 8)) & 1) cpus.push_back(cpu);
  return cpus;
}

std::vector<uint8_t> map_of(const std::vector<uint32_t>& cpus, size_t bytes) {
  std::vector<uint8_t> map(bytes, 0);
  for (uint32_t cpu : cpus)
    if (cpu / 8 < bytes) map[cpu / 8] |= uint8_t(1u << (cpu % 8));
  return map;
}
}  // namespace

std::variant<Json, Failure> vcpu_list(Xen& xen, const std::vector<std::pair<uint32_t, std::string>>& domains) {
  // Each vCPU's hard and soft affinity as the hypervisor keeps them (getvcpuaffinity).
  int max_cpus = xc_get_max_cpus(xen.xch), map_bytes = xc_get_cpumap_size(xen.xch);
  if (max_cpus <= 0 || map_bytes <= 0) return xc_failure("xc_get_max_cpus");
  Json vcpus = Json::array();
  for (const auto& [domid, name] : domains) {
    xc_domaininfo_t info{};
    if (xc_domain_getinfolist(xen.xch, domid, 1, &info) != 1 || info.domain != domid) continue;
    if (info.max_vcpu_id == XEN_INVALID_MAX_VCPU_ID) continue;  // created, its vCPUs not made yet
    for (uint32_t vcpu = 0; vcpu <= info.max_vcpu_id; ++vcpu) {
      xc_vcpuinfo_t v{};
      if (xc_vcpu_getinfo(xen.xch, domid, vcpu, &v) != 0) return xc_failure("xc_vcpu_getinfo");
      std::vector<uint8_t> hard(size_t(map_bytes), 0), soft(size_t(map_bytes), 0);
      if (xc_vcpu_getaffinity(xen.xch, domid, int(vcpu), hard.data(), soft.data(),
                              XEN_VCPUAFFINITY_HARD | XEN_VCPUAFFINITY_SOFT) != 0)
        return xc_failure("xc_vcpu_getaffinity");
      vcpus.push_back(Json{{"domid", domid},
                           {"name", name},
                           {"vcpu", vcpu},
                           {"cpu", v.cpu},
                           {"online", bool(v.online)},
                           {"running", bool(v.running)},
                           {"blocked", bool(v.blocked)},
                           {"cpu_time_ns", v.cpu_time},
                           {"affinity", cpus_of(hard, uint32_t(max_cpus))},
                           {"affinity_soft", cpus_of(soft, uint32_t(max_cpus))}});
    }
  }
  return vcpus;
}

std::variant<Json, Failure> set_vcpu_affinity(Xen& xen, uint32_t domid, uint32_t vcpu,
                                              const std::optional<std::vector<uint32_t>>& hard,
                                              const std::optional<std::vector<uint32_t>>& soft) {
  int max_cpus = xc_get_max_cpus(xen.xch), map_bytes = xc_get_cpumap_size(xen.xch);
  if (max_cpus <= 0 || map_bytes <= 0) return xc_failure("xc_get_max_cpus");
  if (!hard && !soft) return Failure{kEinval, "neither a hard nor a soft affinity to set"};
  std::vector<uint8_t> hard_map = map_of(hard.value_or(std::vector<uint32_t>{}), size_t(map_bytes));
  std::vector<uint8_t> soft_map = map_of(soft.value_or(std::vector<uint32_t>{}), size_t(map_bytes));
  uint32_t flags = (hard ? XEN_VCPUAFFINITY_HARD : 0) | (soft ? XEN_VCPUAFFINITY_SOFT : 0);
  if (xc_vcpu_setaffinity(xen.xch, domid, int(vcpu), hard_map.data(), soft_map.data(), flags) != 0)
    return xc_failure("Setting vcpu affinity");
  Json effective{{"vcpu", vcpu}};
  if (hard) effective["hard"] = cpus_of(hard_map, uint32_t(max_cpus));
  if (soft) effective["soft"] = cpus_of(soft_map, uint32_t(max_cpus));
  return effective;
}

std::variant<Json, Failure> cpupool_list(Xen& xen) {
  // One pool, Pool-0 (id 0), as Xen's cpupool0: every online CPU (cputopoinfo's present CPUs),
  // the scheduler sysctl sched_id names, every domain.
  unsigned count = 0;
  if (xc_cputopoinfo(xen.xch, &count, nullptr) != 0) return xc_failure("xc_cputopoinfo");
  std::vector<xc_cputopo_t> topology(count);
  if (count && xc_cputopoinfo(xen.xch, &count, topology.data()) != 0) return xc_failure("xc_cputopoinfo");
  Json cpus = Json::array();
  for (unsigned cpu = 0; cpu < count && cpu < topology.size(); ++cpu)
    if (topology[cpu].core != XEN_INVALID_CORE_ID) cpus.push_back(cpu);
  std::vector<xc_domaininfo_t> infos(1024);
  int domains = xc_domain_getinfolist(xen.xch, 0, unsigned(infos.size()), infos.data());
  if (domains < 0) return xc_failure("xc_domain_getinfolist");
  Json pool{{"id", 0}, {"name", "Pool-0"}, {"sched", scheduler_name(xen.xch)}, {"cpus", cpus}, {"n_dom", domains}};
  return Json::array({pool});
}

std::optional<Failure> apply_config_affinity(Xen& xen, uint32_t domid, uint32_t max_vcpus, const CpuAffinityText& hard,
                                             const CpuAffinityText& soft) {
  if (!hard.given && !soft.given) return std::nullopt;
  int max_cpus = xc_get_max_cpus(xen.xch);
  if (max_cpus <= 0) return xc_failure("xc_get_max_cpus");
  auto resolve = [&](const std::string* text) -> std::optional<std::vector<uint32_t>> {
    if (!text) return std::nullopt;
    std::string error;
    return pvhv::xl::cfg::parse_cpu_range(*text, uint32_t(max_cpus), error).value_or(std::vector<uint32_t>{});
  };
  // libxl__build_pre: vCPUs 0 .. the longer of the two lists, hard and soft in one call each.
  uint32_t count = 0;
  for (const CpuAffinityText* a : {&hard, &soft})
    if (a->given) count = std::max<uint32_t>(count, a->per_vcpu ? uint32_t(a->lists.size()) : max_vcpus);
  for (uint32_t vcpu = 0; vcpu < count && vcpu < max_vcpus; ++vcpu) {
    auto h = resolve(hard.for_vcpu(vcpu)), s = resolve(soft.for_vcpu(vcpu));
    if (!h && !s) continue;
    auto result = set_vcpu_affinity(xen, domid, vcpu, h, s);
    if (auto* failure = std::get_if<Failure>(&result)) {
      failure->message = "setting affinity failed on vcpu `" + std::to_string(vcpu) + "': " + failure->message;
      return *failure;
    }
  }
  return std::nullopt;
}

}  // namespace pvhv::daemon
