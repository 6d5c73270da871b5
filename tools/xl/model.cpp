// Between the daemon's JSON and xl's rows (see model.h).
#include "tools/xl/model.h"

namespace pvhv::xl {

namespace {

template <typename T>
T field(const Json& j, const char* name, T fallback = T()) {
  const auto it = j.find(name);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

std::string text_of(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  if (v.is_number_float()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", v.get<double>());
    return buf;
  }
  return v.dump();
}

// A CPU number in an answer: a non-negative integer (parsed text gives unsigned ones).
bool is_cpu_number(const Json& c) { return c.is_number_unsigned() || (c.is_number_integer() && c.get<int64_t>() >= 0); }

}  // namespace

DomainRow domain_row(const Json& j) {
  DomainRow d;
  if (!j.is_object()) return d;
  d.domid = field<uint32_t>(j, "domid");
  d.name = field<std::string>(j, "name");
  d.uuid = field<std::string>(j, "uuid", "00000000-0000-0000-0000-000000000000");
  d.running = field<bool>(j, "running");
  d.blocked = field<bool>(j, "blocked");
  d.paused = field<bool>(j, "paused");
  d.shutdown = field<bool>(j, "shutdown");
  d.crashed = field<bool>(j, "crashed");
  d.dying = field<bool>(j, "dying");
  d.shutdown_reason = field<int>(j, "shutdown_reason");
  d.mem_kb = field<uint64_t>(j, "mem_kb");
  d.max_mem_kb = field<uint64_t>(j, "max_mem_kb");
  d.vcpus = field<uint32_t>(j, "vcpus");
  d.vcpus_online = field<uint32_t>(j, "vcpus_online", d.vcpus);
  d.cpu_time_ns = field<uint64_t>(j, "cpu_time_ns");
  d.start_time = field<int64_t>(j, "start_time");
  d.ptwr_mode = field<std::string>(j, "ptwr_mode");
  return d;
}

std::vector<DomainRow> domain_rows(const Json& answer) {
  std::vector<DomainRow> rows;
  const auto it = answer.find("domains");
  if (it == answer.end() || !it->is_array()) return rows;
  for (const auto& d : *it) rows.push_back(domain_row(d));
  return rows;
}

VcpuRow vcpu_row_of(const Json& j) {
  VcpuRow v;
  if (!j.is_object()) return v;
  v.domid = field<uint32_t>(j, "domid");
  v.name = field<std::string>(j, "name");
  v.vcpu = field<uint32_t>(j, "vcpu");
  v.cpu = field<uint32_t>(j, "cpu");
  v.online = field<bool>(j, "online");
  v.running = field<bool>(j, "running");
  v.blocked = field<bool>(j, "blocked");
  v.cpu_time_ns = field<uint64_t>(j, "cpu_time_ns");
  const auto a = j.find("affinity");
  if (a != j.end() && a->is_array())
    for (const auto& c : *a)
      if (is_cpu_number(c)) v.affinity.push_back(c.get<uint32_t>());
  const auto soft = j.find("affinity_soft");
  if (soft != j.end() && soft->is_array()) {
    v.has_soft = true;
    for (const auto& c : *soft)
      if (is_cpu_number(c)) v.affinity_soft.push_back(c.get<uint32_t>());
  }
  return v;
}

std::vector<CpupoolRow> cpupool_rows(const Json& answer) {
  std::vector<CpupoolRow> rows;
  const auto pools = answer.find("pools");
  if (pools == answer.end() || !pools->is_array()) return rows;
  for (const Json& p : *pools) {
    if (!p.is_object()) continue;
    CpupoolRow row;
    row.name = field<std::string>(p, "name");
    row.sched = field<std::string>(p, "sched");
    row.n_dom = field<uint32_t>(p, "n_dom");
    const auto cpus = p.find("cpus");
    if (cpus != p.end() && cpus->is_array())
      for (const auto& c : *cpus)
        if (is_cpu_number(c)) row.cpus.push_back(c.get<uint32_t>());
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::pair<std::string, std::string>> info_fields(const Json& answer) {
  static const char* const order[] = {"host",
                                      "release",
                                      "version",
                                      "machine",
                                      "nr_cpus",
                                      "max_cpu_id",
                                      "nr_nodes",
                                      "cores_per_socket",
                                      "threads_per_core",
                                      "cpu_mhz",
                                      "hw_caps",
                                      "virt_caps",
                                      "total_memory",
                                      "free_memory",
                                      "sharing_freed_memory",
                                      "sharing_used_memory",
                                      "outstanding_claims",
                                      "free_cpus",
                                      "xen_major",
                                      "xen_minor",
                                      "xen_extra",
                                      "xen_version",
                                      "xen_caps",
                                      "xen_scheduler",
                                      "xen_pagesize",
                                      "platform_params",
                                      "xen_changeset",
                                      "xen_commandline",
                                      "cc_compiler",
                                      "cc_compile_by",
                                      "cc_compile_domain",
                                      "cc_compile_date",
                                      "build_id",
                                      "xend_config_format"};
  std::vector<std::pair<std::string, std::string>> fields;
  for (const char* name : order) {
    const auto it = answer.find(name);
    if (it != answer.end())
      fields.emplace_back(name, text_of(*it));
    else if (std::string(name) == "xend_config_format")
      fields.emplace_back(name, "4");
  }
  return fields;
}

Json create_config(const cfg::DomainConfig& d) {
  Json c = {{"name", d.name},           {"kernel", d.kernel},     {"ramdisk", d.ramdisk},
            {"cmdline", d.cmdline},     {"memory", d.memory_mib}, {"maxmem", d.maxmem_mib},
            {"vcpus", d.vcpus},         {"maxvcpus", d.maxvcpus}, {"on_poweroff", d.on_poweroff},
            {"on_reboot", d.on_reboot}, {"on_crash", d.on_crash}, {"uuid", d.uuid}};
  if (!d.ptwr_mode.empty()) c["ptwr_mode"] = d.ptwr_mode;
  // cpus / cpus_soft as written: a string, or a list of strings (one per vCPU).
  auto affinity = [&](const char* key, const cfg::CpuAffinity& a) {
    if (!a.given) return;
    if (!a.per_vcpu) {
      c[key] = a.lists.empty() ? std::string() : a.lists[0];
      return;
    }
    Json list = Json::array();
    for (const std::string& item : a.lists) list.push_back(item);
    c[key] = list;
  };
  affinity("cpus", d.cpus);
  affinity("cpus_soft", d.cpus_soft);
  return c;
}

Json long_listing(const Json& answer) {
  Json out = Json::array();
  const auto it = answer.find("domains");
  if (it == answer.end() || !it->is_array()) return out;
  for (const auto& d : *it) {
    Json entry = Json::object();
    entry["domid"] = field<uint32_t>(d, "domid");
    const auto config = d.find("config");
    entry["config"] = config != d.end() && config->is_object() ? *config : Json::object();
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace pvhv::xl
