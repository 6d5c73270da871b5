// build/bin/xl: Xen 4.17's xl commands, options, messages and exit statuses, over pvhvd
// (client.h) instead of libxl. Each command resolves its domain argument first, as xl's
// find_domain does, so an unknown domain fails before anything is asked of it.
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "tools/xl/client.h"
#include "tools/xl/config/cpu_range.h"
#include "tools/xl/config/domain_config.h"
#include "tools/xl/format.h"
#include "tools/xl/model.h"
#include "tools/xl/options.h"

namespace pvhv::xl {
namespace {

// Ends xl with a status (thrown so that destructors restore the terminal).
struct Exit {
  int status;
};

bool g_dryrun = false;

struct Command {
  const char* name;
  int (*run)(const std::vector<std::string>& args);
  bool modifies;
  bool can_dryrun;
  const char* description;
  const char* usage;
  const char* options;
};

const std::vector<Command>& commands();

void help(const std::string& name) {
  if (name.empty() || name == "help") {
    std::printf("Usage xl [-vfNtT] <subcommand> [args]\n\nxl full list of subcommands:\n\n");
    for (const Command& c : commands()) {
      std::printf(" %-19s ", c.name);
      if (std::strlen(c.name) > 19) std::printf("\n %-19s ", "");
      std::printf("%s\n", c.description);
    }
    return;
  }
  for (const Command& c : commands()) {
    if (name != c.name) continue;
    std::printf("Usage: xl [-vtT%s%s] %s %s\n\n%s.\n\n", c.modifies ? "f" : "", c.can_dryrun ? "N" : "", c.name,
                c.usage, c.description);
    if (c.options) std::printf("Options:\n\n%s\n", c.options);
    return;
  }
  std::printf("command \"%s\" not implemented\n", name.c_str());
}

// def_getopt: options parsed, refusals answered.
ParsedOptions options(const std::vector<std::string>& args, const char* command, const char* optstring,
                      std::vector<LongOption> long_options, int required) {
  ParsedOptions p = parse_options(args, optstring, long_options);
  if (auto refusal = check_options(p, command, required)) {
    std::fputs(refusal->message.c_str(), stderr);
    if (refusal->show_help) help(command);
    throw Exit{refusal->status};
  }
  return p;
}

[[noreturn]] void fail(const std::string& message, int status = 1) {
  std::fputs(message.c_str(), stderr);
  throw Exit{status};
}

Client connect() {
  std::string error;
  std::optional<Client> client = Client::connect(daemon_socket_path(), error);
  if (!client) fail(error + "\n");
  return std::move(*client);
}

// An error answer: the daemon's message, as xl prints it.
[[noreturn]] void fail_answer(const Json& answer, int status = 1) {
  fail(answer.value("error", std::string("pvhvd: request failed")) + "\n", status);
}

Json checked(Client& client, Json request, int status = 1) {
  Json answer = client.call(std::move(request));
  if (!answer.value("ok", false)) fail_answer(answer, status);
  return answer;
}

// find_domain: a name or a domid, or xl's "invalid domain identifier" and status 1.
DomainRow find_domain(Client& client, const std::string& dom) {
  const Json answer = client.call({{"op", "list"}, {"dom", dom}});
  if (!answer.value("ok", false)) fail_answer(answer);
  std::vector<DomainRow> rows = domain_rows(answer);
  if (rows.empty()) fail(dom + " is an invalid domain identifier (rc=-6)\n");
  return rows.front();
}

std::string domid_text(const DomainRow& d) { return std::to_string(d.domid); }

std::string read_file(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string random_uuid() {
  std::random_device rd;
  unsigned char b[16];
  for (auto& x : b) x = static_cast<unsigned char>(rd());
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  char s[37];
  std::snprintf(s, sizeof s, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
                b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return s;
}

// The daemon runs elsewhere: paths in a config are taken relative to where xl runs.
std::string absolute(const std::string& path) {
  if (path.empty()) return path;
  return std::filesystem::absolute(path).lexically_normal().string();
}

// A raw terminal for `xl console` and `xl top`, restored when it goes out of scope.
class RawTerminal {
 public:
  RawTerminal() {
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    cfmakeraw(&raw);
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }

 private:
  termios saved_{};
  bool active_ = false;
};

constexpr char kDetach = 0x1d;  // Ctrl-]

bool write_all(int fd, const char* data, size_t size) {
  while (size) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The console stream: the guest's output to stdout, stdin to the guest, until Ctrl-] or
// until the daemon closes the stream (the domain is gone).
int attach_console(const std::string& dom) {
  Client client = connect();
  const Json answer = client.call({{"op", "console"}, {"dom", dom}});
  if (!answer.value("ok", false)) fail_answer(answer);
  RawTerminal terminal;
  const std::string early = client.take_pending();
  write_all(STDOUT_FILENO, early.data(), early.size());
  bool input_open = true;
  for (;;) {
    pollfd fds[2] = {{client.fd(), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    if (::poll(fds, input_open ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    char buf[4096];
    if (fds[0].revents) {
      const ssize_t n = ::read(client.fd(), buf, sizeof buf);
      if (n <= 0) return 0;
      write_all(STDOUT_FILENO, buf, static_cast<size_t>(n));
    }
    if (input_open && fds[1].revents) {
      const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n <= 0) {
        input_open = false;
        continue;
      }
      const char* end = static_cast<const char*>(std::memchr(buf, kDetach, static_cast<size_t>(n)));
      const size_t keep = end ? static_cast<size_t>(end - buf) : static_cast<size_t>(n);
      if (keep && !write_all(client.fd(), buf, keep)) return 0;
      if (end) return 0;
    }
  }
}

int cmd_create(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "create", "AFVcdef:inpq",
                            {{"defconfig", true, 'f'},
                             {"dryrun", false, 'n'},
                             {"ignore-global-affinity-masks", false, 'i'},
                             {"quiet", false, 'q'},
                             {"vncviewer", false, 'V'},
                             {"vncviewer-autopass", false, 'A'}},
                            0);
  std::optional<std::string> file = p.value('f');
  std::vector<std::string> overrides;
  for (const std::string& a : p.operands) {
    if (a.find('=') != std::string::npos)
      overrides.push_back(a);
    else if (!file)
      file = a;
    else {
      help("create");
      return 2;
    }
  }
  if (!file) fail("Config file not specified\n", 3);
  std::string text;
  if (*file != "/dev/null") {
    bool ok = false;
    text = read_file(*file, ok);
    if (!ok) fail("Failed to read config file: " + *file + ": " + std::strerror(errno) + "\n", 3);
  }
  const bool quiet = p.has('q');
  if (!quiet) std::fprintf(stderr, "Parsing config from %s\n", file->c_str());
  cfg::Resolved resolved = cfg::resolve_domain(*file, cfg::with_overrides(text, overrides));
  std::fputs(resolved.report.c_str(), stderr);
  if (!resolved.domain) throw Exit{resolved.exit_status};
  cfg::DomainConfig& d = *resolved.domain;
  d.kernel = absolute(d.kernel);
  d.ramdisk = absolute(d.ramdisk);
  if (d.uuid.empty()) d.uuid = random_uuid();
  const Json config = create_config(d);
  if (g_dryrun || p.has('n')) {
    std::printf("%s\n", config.dump(4).c_str());
    return 0;
  }
  Client client = connect();
  const Json answer = client.call({{"op", "create"},
                                   {"config", config},
                                   {"config_text", text},
                                   {"config_file", absolute(*file)},
                                   {"paused", p.has('p')}});
  if (!answer.value("ok", false)) fail_answer(answer, 3);
  if (p.has('c')) return attach_console(std::to_string(answer.value("domid", 0u)));
  return 0;
}

int cmd_destroy(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "destroy", "f", {}, 1);
  Client client = connect();
  const DomainRow d = find_domain(client, p.operands[0]);
  if (d.domid == 0 && !p.has('f'))
    fail(
        "Not destroying domain 0; use -f to force.\n"
        "This can only be done when using a disaggregated hardware domain and toolstack.\n\n");
  const Json answer = client.call({{"op", "destroy"}, {"dom", domid_text(d)}, {"force", p.has('f')}});
  if (!answer.value("ok", false)) {
    std::fprintf(stderr, "%s\n", answer.value("error", std::string()).c_str());
    fail("destroy failed (rc=-3)\n");
  }
  return 0;
}

int shutdown_or_reboot(const std::vector<std::string>& args, bool reboot) {
  const char* what = reboot ? "reboot" : "shutdown";
  ParsedOptions p = options(args, what, "awF", {{"all", false, 'a'}, {"wait", false, 'w'}}, 0);
  const bool all = p.has('a');
  if (p.operands.empty() && !all) fail("You must specify -a or a domain id.\n\n");
  Client client = connect();
  std::vector<DomainRow> targets;
  if (all) {
    for (const DomainRow& d : domain_rows(checked(client, {{"op", "list"}})))
      if (d.domid != 0) targets.push_back(d);
  } else {
    targets.push_back(find_domain(client, p.operands[0]));
  }
  const bool wait = p.has('w');
  for (const DomainRow& d : targets) {
    std::fprintf(stderr, reboot ? "Rebooting domain %u\n" : "Shutting down domain %u\n", d.domid);
    client.send({{"op", what}, {"dom", domid_text(d)}, {"wait", wait}, {"fallback", p.has('F')}});
  }
  if (wait) std::fprintf(stderr, "Waiting for %zu domains\n", targets.size());
  int status = 0;
  for (const DomainRow& d : targets) {
    const Json answer = client.receive();
    // The daemon writes control/shutdown and answers once the guest acknowledged it (libxl's
    // PV control); a guest without it: libxl's ERROR_NOPARAVIRT, or with -F the fallback.
    if (!answer.value("ok", false)) {
      std::fprintf(stderr, "%s\n%s failed (rc=%d)\n", answer.value("error", std::string()).c_str(), what,
                   answer.value("rc", -3));
      status = 1;
      continue;
    }
    if (answer.value("fallback", false))
      std::fprintf(stderr, "PV control interface not available: sending SCHEDOP_remote_shutdown (%s).\n",
                   reboot ? "reboot" : "poweroff");
    if (wait) {
      std::fprintf(stderr, "Domain %u has been shut down, reason code %d\n", d.domid, reboot ? 1 : 0);
    }
  }
  return status;
}

int cmd_shutdown(const std::vector<std::string>& args) { return shutdown_or_reboot(args, false); }
int cmd_reboot(const std::vector<std::string>& args) { return shutdown_or_reboot(args, true); }

int simple_domain_op(const std::vector<std::string>& args, const char* command, const char* op) {
  ParsedOptions p = options(args, command, "", {}, 1);
  Client client = connect();
  const DomainRow d = find_domain(client, p.operands[0]);
  checked(client, {{"op", op}, {"dom", domid_text(d)}});
  return 0;
}

int cmd_pause(const std::vector<std::string>& args) { return simple_domain_op(args, "pause", "pause"); }
int cmd_unpause(const std::vector<std::string>& args) { return simple_domain_op(args, "unpause", "unpause"); }

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

int cmd_list(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "list", "lvhZcn",
                            {{"long", false, 'l'},
                             {"verbose", false, 'v'},
                             {"context", false, 'Z'},
                             {"cpupool", false, 'c'},
                             {"numa", false, 'n'}},
                            0);
  if (p.operands.size() > 1) {
    help("list");
    return 1;
  }
  Client client = connect();
  Json request = {{"op", "list"}};
  if (!p.operands.empty()) request["dom"] = p.operands[0];
  const Json answer = client.call(request);
  if (!answer.value("ok", false)) {
    if (!p.operands.empty() && all_digits(p.operands[0]) && answer.value("errno", 0) == ESRCH)
      fail("Error: Domain '" + p.operands[0] + "' does not exist.\n");
    fail_answer(answer);
  }
  if (p.has('l')) {
    std::printf("%s\n", long_listing(answer).dump(4).c_str());
    return 0;
  }
  const bool verbose = p.has('v');
  std::string out = list_header(verbose);
  for (const DomainRow& d : domain_rows(answer)) out += list_row(d, verbose);
  std::fputs(out.c_str(), stdout);
  return 0;
}

int cmd_console(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "console", "n:t:", {}, 1);
  if (auto type = p.value('t')) {
    if (*type == "vuart") fail("Unable to attach console\n");
    if (*type != "pv" && *type != "serial") fail("console type supported are: pv, serial, vuart\n");
  }
  if (auto number = p.value('n'); number && *number != "0") fail("Unable to attach console\n");
  Client client = connect();
  const DomainRow d = find_domain(client, p.operands[0]);
  return attach_console(domid_text(d));
}

int cmd_info(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "info", "n", {{"numa", false, 'n'}}, 0);
  Client client = connect();
  const std::string text = info_text(info_fields(checked(client, {{"op", "info"}})));
  if (!p.has('n') && !p.operands.empty())
    std::fputs(info_filter(text, p.operands[0]).c_str(), stdout);
  else
    std::fputs(text.c_str(), stdout);
  return 0;
}

int cmd_dmesg(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "dmesg", "c", {{"clear", false, 'c'}}, 0);
  Client client = connect();
  const Json answer = client.call({{"op", "dmesg"}, {"clear", p.has('c')}});
  if (!answer.value("ok", false)) fail_answer(answer);
  std::fputs(answer.value("text", std::string()).c_str(), stdout);
  return 0;
}

int cmd_vcpu_list(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "vcpu-list", "", {}, 0);
  Client client = connect();
  const uint32_t nr_cpus = checked(client, {{"op", "info"}}).value("nr_cpus", 1u);
  std::vector<Json> requests;
  if (p.operands.empty()) requests.push_back({{"op", "vcpu_list"}});
  for (const std::string& dom : p.operands)
    requests.push_back({{"op", "vcpu_list"}, {"dom", domid_text(find_domain(client, dom))}});
  std::string out = vcpu_list_header();
  for (Json& request : requests) {
    const Json answer = checked(client, std::move(request));
    const auto it = answer.find("vcpus");
    if (it == answer.end() || !it->is_array()) continue;
    for (const Json& v : *it) out += vcpu_row(vcpu_row_of(v), nr_cpus);
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

// The host's CPU count as libxl sizes a cpumap (physinfo's max_cpu_id + 1).
uint32_t host_max_cpus(Client& client) {
  const Json info = checked(client, {{"op", "info"}});
  return info.value("max_cpu_id", 0u) + 1;
}

// xl vcpu-pin [-f] <Domain> <VCPU|all> <Hard affinity|-> [Soft affinity|-], as Xen 4.17's
// main_vcpupin: the lists in parse_cpurange's syntax, "-" leaves that affinity alone.
int cmd_vcpu_pin(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "vcpu-pin", "f", {{"force", false, 'f'}}, 3);
  const bool force = p.has('f');
  Client client = connect();
  const DomainRow d = find_domain(client, p.operands[0]);
  const std::string& vcpu = p.operands[1];
  const std::string& hard_text = p.operands[2];
  const std::optional<std::string> soft_text =
      p.operands.size() > 3 ? std::optional<std::string>(p.operands[3]) : std::nullopt;
  char* end = nullptr;
  const long vcpuid = std::strtol(vcpu.c_str(), &end, 10);
  const bool all = end == vcpu.c_str() || vcpuid < 0;
  if (all) {
    if (vcpu != "all") fail("Error: Invalid argument " + vcpu + " as VCPU.\n");
    if (force) fail("Error: --force and 'all' as VCPU not allowed.\n");
  }
  const uint32_t max_cpus = host_max_cpus(client);
  auto parse = [&](const std::string& text) -> Json {
    if (text == "-") return nullptr;
    std::string error;
    auto cpus = cfg::parse_cpu_range(text, max_cpus, error);
    if (!cpus) fail(error + "\n");
    Json list = Json::array();
    for (uint32_t cpu : *cpus) list.push_back(cpu);
    return list;
  };
  const Json hard = parse(hard_text);
  const Json soft = soft_text ? parse(*soft_text) : Json(nullptr);
  if (g_dryrun) {
    const uint32_t nr_cpus = checked(client, {{"op", "info"}}).value("nr_cpus", 1u);
    auto cpus_of = [](const Json& list) {
      std::vector<uint32_t> cpus;
      for (const Json& c : list) cpus.push_back(c.get<uint32_t>());
      return cpus;
    };
    std::printf("cpumap: %s", hard.is_null() ? "-" : cpu_bitmap(cpus_of(hard), nr_cpus).c_str());
    if (!soft.is_null()) std::printf(" %s", cpu_bitmap(cpus_of(soft), nr_cpus).c_str());
    std::printf("\n");
    return 0;
  }
  Json request = {{"op", "vcpu_pin"}, {"dom", domid_text(d)}, {"hard", hard}, {"soft", soft}};
  if (all)
    request["vcpu"] = "all";
  else
    request["vcpu"] = static_cast<uint64_t>(vcpuid);
  const Json answer = client.call(request);
  if (answer.value("ok", false)) return 0;
  // libxl logs the failed call, xl says which vCPU; for "all", xl goes on with status 0.
  std::fprintf(stderr, "libxl: error: Domain %u:%s\n", d.domid, answer.value("error", std::string()).c_str());
  if (all) {
    std::fprintf(stderr, "Could not set affinity.\n");
    return 0;
  }
  fail("Could not set affinity for vcpu `" + std::to_string(vcpuid) + "'.\n");
}

// xl vcpu-set [-i] <Domain> <vCPUs>: libxl_set_vcpuonline for a PV domain, which writes each
// vCPU's cpu/<i>/availability ("online" for the first N, "offline" for the rest) in the store;
// the guest brings its vCPUs up and down itself. More than the host's CPUs is refused unless
// -i (--ignore-host), more than the domain's maximum fails.
int cmd_vcpu_set(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "vcpu-set", "i", {{"ignore-host", false, 'i'}}, 2);
  Client client = connect();
  const DomainRow d = find_domain(client, p.operands[0]);
  const std::string& text = p.operands[1];
  char* end = nullptr;
  const unsigned long wanted = std::strtoul(text.c_str(), &end, 10);
  if (end == text.c_str() || wanted > 0x7fffffffUL) fail("Error: Invalid argument.\n");
  if (!p.has('i')) {
    const uint32_t host_cpus = host_max_cpus(client);
    if (wanted > d.vcpus_online && wanted > host_cpus)
      fail("You are overcommmitting! You have " + std::to_string(host_cpus) + " physical CPUs and want " +
           std::to_string(wanted) + " vCPUs! Aborting, use --ignore-host to  continue\n");
  }
  if (wanted > d.vcpus) {
    std::fprintf(stderr, "libxl: error: Domain %u:Requested %lu VCPUs, however maxcpus is %u!\n", d.domid, wanted,
                 d.vcpus);
    fail("libxl_set_vcpuonline failed domid=" + std::to_string(d.domid) + " max_vcpus=" + std::to_string(wanted) +
         ", rc: -3\n");
  }
  for (uint32_t i = 0; i < d.vcpus; ++i) {
    const std::string path = "/local/domain/" + std::to_string(d.domid) + "/cpu/" + std::to_string(i) + "/availability";
    checked(client, {{"op", "xenstore_write"}, {"path", path}, {"value", i < wanted ? "online" : "offline"}});
  }
  return 0;
}

// xl cpupool-list [-c] [Pool]: the one pool, Pool-0.
int cmd_cpupool_list(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "cpupool-list", "c", {{"cpus", false, 'c'}}, 0);
  const bool cpu_list = p.has('c');
  Client client = connect();
  const std::vector<CpupoolRow> pools = cpupool_rows(checked(client, {{"op", "cpupool_list"}}));
  if (!p.operands.empty()) {
    bool known = false;
    for (const CpupoolRow& pool : pools) known = known || pool.name == p.operands[0];
    if (!known) fail("Pool '" + p.operands[0] + "' does not exist\n");
  }
  std::string out = cpupool_header(cpu_list);
  for (const CpupoolRow& pool : pools)
    if (p.operands.empty() || pool.name == p.operands[0]) out += cpupool_row(pool, cpu_list);
  std::fputs(out.c_str(), stdout);
  return 0;
}

std::string clock_text(std::time_t now) {
  char buf[32];
  std::tm tm{};
  localtime_r(&now, &tm);
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

int cmd_uptime(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "uptime", "s", {}, 0);
  const bool short_mode = p.has('s');
  Client client = connect();
  std::vector<DomainRow> rows;
  if (p.operands.empty()) rows = domain_rows(checked(client, {{"op", "list"}}));
  for (const std::string& dom : p.operands) rows.push_back(find_domain(client, dom));
  const std::time_t now = std::time(nullptr);
  std::string out = short_mode ? "" : uptime_header();
  for (const DomainRow& d : rows) {
    const uint64_t up = d.start_time > 0 && now > d.start_time ? static_cast<uint64_t>(now - d.start_time) : 0;
    out += short_mode ? uptime_short_row(clock_text(now), d.name, d.domid, up) : uptime_row(d.name, d.domid, up);
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

int cmd_domid(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "domid", "", {}, 1);
  Client client = connect();
  for (const DomainRow& d : domain_rows(checked(client, {{"op", "list"}}))) {
    if (d.name != p.operands[0]) continue;
    std::printf("%u\n", d.domid);
    return 0;
  }
  fail("Can't get domid of domain name '" + p.operands[0] + "', maybe this domain does not exist.\n");
}

int cmd_domname(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "domname", "", {}, 1);
  const std::string& text = p.operands[0];
  char* end = nullptr;
  const uint32_t domid = static_cast<uint32_t>(std::strtol(text.c_str(), &end, 10));
  if (domid == 0 && end == text.c_str()) fail("Invalid domain id.\n\n");
  Client client = connect();
  for (const DomainRow& d : domain_rows(checked(client, {{"op", "list"}}))) {
    if (d.domid != domid) continue;
    std::printf("%s\n", d.name.c_str());
    return 0;
  }
  fail("Can't get domain name of domain id '" + std::to_string(domid) + "', maybe this domain does not exist.\n");
}

int cmd_mem_max(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "mem-max", "", {}, 2);
  const std::string& size = p.operands[1];
  const long long kb = parse_mem_size_kb(size);
  if (kb == -1) fail("invalid memory size: " + size + "\n");
  Client client = connect();
  const DomainRow d = find_domain(client, p.operands[0]);
  const Json answer = client.call({{"op", "mem_max"}, {"dom", domid_text(d)}, {"kb", kb}});
  if (!answer.value("ok", false)) {
    std::fprintf(stderr, "%s\n", answer.value("error", std::string()).c_str());
    fail("cannot set domid " + domid_text(d) + " static max memory to : " + size + "\n");
  }
  return 0;
}

int cmd_help(const std::vector<std::string>& args) {
  help(args.empty() ? "" : args[0]);
  return 0;
}

// Xen's `xl top` runs xentop; this is xentop's table, redrawn every delay seconds (q quits),
// or printed -i times in batch mode (-b) for scripts and tests.
int cmd_top(const std::vector<std::string>& args) {
  ParsedOptions p =
      options(args, "top", "bi:d:", {{"batch", false, 'b'}, {"iterations", true, 'i'}, {"delay", true, 'd'}}, 0);
  const bool batch = p.has('b');
  const long iterations = p.value('i') ? std::strtol(p.value('i')->c_str(), nullptr, 10) : -1;
  const double delay = p.value('d') ? std::strtod(p.value('d')->c_str(), nullptr) : 3.0;
  Client client = connect();
  const uint64_t total_kb = checked(client, {{"op", "info"}}).value("total_memory", 0ull) * 1024;
  std::optional<RawTerminal> terminal;
  if (!batch) terminal.emplace();
  std::map<uint32_t, uint64_t> last_cpu;
  auto last_time = std::chrono::steady_clock::now();
  for (long i = 0; iterations < 0 || i < iterations; ++i) {
    const auto now = std::chrono::steady_clock::now();
    const double wall_ns = std::chrono::duration<double, std::nano>(now - last_time).count();
    last_time = now;
    std::string out = batch ? "" : "\033[H\033[2Jxl top - " + clock_text(std::time(nullptr)) + "\r\n";
    out += top_header();
    for (const DomainRow& d : domain_rows(checked(client, {{"op", "list"}}))) {
      const auto prev = last_cpu.find(d.domid);
      const double pct = prev != last_cpu.end() && wall_ns > 0 && d.cpu_time_ns >= prev->second
                             ? (d.cpu_time_ns - prev->second) / wall_ns * 100
                             : 0.0;
      last_cpu[d.domid] = d.cpu_time_ns;
      out += top_row(d, pct, total_kb);
    }
    if (!batch) {
      std::string crlf;
      for (char c : out) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
      out = crlf;
    }
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
    if (iterations >= 0 && i + 1 >= iterations) break;
    if (batch) {
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      continue;
    }
    pollfd in = {STDIN_FILENO, POLLIN, 0};
    if (::poll(&in, 1, static_cast<int>(delay * 1000)) > 0) {
      char c = 0;
      if (::read(STDIN_FILENO, &c, 1) <= 0 || c == 'q' || c == 'Q' || c == 3) break;
    }
  }
  return 0;
}

// pvhv's: without a mode, the mode the hypervisor has for the domain now. On a hypervisor
// without the control (Xen 4.17) the daemon's one-line answer, status 1.
int cmd_ptwr_mode(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "ptwr-mode", "", {}, 1);
  Client client = connect();
  const DomainRow d = find_domain(client, p.operands[0]);
  Json request = {{"op", "ptwr_mode"}, {"dom", domid_text(d)}};
  if (p.operands.size() >= 2) {
    const std::string& mode = p.operands[1];
    if (mode != "emulate" && mode != "writable" && mode != "adaptive")
      fail("xl: ptwr mode must be emulate, writable or adaptive, not " + mode + "\n", 2);
    request["mode"] = mode;
  }
  const Json answer = checked(client, request);
  std::printf("%s\n", answer.value("mode", std::string("?")).c_str());
  return 0;
}

int cmd_trace(const std::vector<std::string>& args) {
  ParsedOptions p = options(args, "trace", "", {}, 1);
  const std::string& action = p.operands[0];
  if (action == "start") {
    if (p.operands.size() < 2) fail("'xl trace start' requires a FILE.\n", 2);
    Client client = connect();
    checked(client, {{"op", "trace_start"}, {"file", absolute(p.operands[1])}});
    return 0;
  }
  if (action == "stop") {
    Client client = connect();
    const Json answer = checked(client, {{"op", "trace_stop"}});
    std::printf("trace: %llu records, %llu lost\n", answer.value("records", 0ull), answer.value("lost", 0ull));
    return 0;
  }
  help("trace");
  return 2;
}

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"create", cmd_create, true, true, "Create a domain from config file <filename>", "<ConfigFile> [options] [vars]",
       "-c                      Attach to the domain's console once it is created.\n"
       "-f FILE, --defconfig=FILE\n"
       "                        The configuration file to use.\n"
       "-h                      Show this help.\n"
       "-n, --dryrun            Print the resolved configuration, create nothing.\n"
       "-p                      Leave the new domain paused.\n"
       "-q, --quiet             Do not say which file is parsed."},
      {"list", cmd_list, false, false, "List information about all/some domains", "[options] [Domain]\n",
       "-l, --long              Print each domain's configuration as JSON\n"
       "-v, --verbose           Add the UUID, shutdown reason and security label columns"},
      {"destroy", cmd_destroy, false, false, "Terminate a domain immediately", "[options] <Domain>\n",
       "-f                      Allow destroying domain 0."},
      {"shutdown", cmd_shutdown, false, false, "Issue a shutdown signal to a domain", "[options] <-a|Domain>",
       "-a, --all               Shut down every guest domain.\n"
       "-h                      Show this help.\n"
       "-F                      Fall back to SCHEDOP_remote_shutdown for guests\n"
       "                        without xenbus (PV control).\n"
       "-w, --wait              Wait until the guest(s) have shut down.\n"},
      {"reboot", cmd_reboot, false, false, "Issue a reboot signal to a domain", "[options] <-a|Domain>",
       "-a, --all               Reboot every guest domain.\n"
       "-h                      Show this help.\n"
       "-F                      Fall back to SCHEDOP_remote_shutdown for guests\n"
       "                        without xenbus (PV control).\n"
       "-w, --wait              Wait until the guest(s) have rebooted.\n"},
      {"pause", cmd_pause, false, false, "Pause execution of a domain", "<Domain>", nullptr},
      {"unpause", cmd_unpause, false, false, "Unpause a paused domain", "<Domain>", nullptr},
      {"console", cmd_console, false, false, "Attach to domain's console",
       "[options] <Domain>\n"
       "-t <type>       console type, pv or serial (the same console for a PV guest)\n"
       "-n <number>     console number (0)",
       nullptr},
      {"mem-max", cmd_mem_max, false, false, "Set the maximum amount reservation for a domain",
       "<Domain> <MemMB['b'[bytes]|'k'[KB]|'m'[MB]|'g'[GB]|'t'[TB]]>", nullptr},
      {"vcpu-list", cmd_vcpu_list, false, false, "List the VCPUs for all/some domains", "[Domain, ...]", nullptr},
      {"vcpu-pin", cmd_vcpu_pin, true, true, "Set which CPUs a VCPU can use",
       "[option] <Domain> <VCPU|all> <Hard affinity|-|all> <Soft affinity|-|all>",
       "-f, --force        undo an override pinning done by the kernel"},
      {"vcpu-set", cmd_vcpu_set, true, false, "Set the number of active VCPUs allowed for the domain",
       "[option] <Domain> <vCPUs>", "-i, --ignore-host  Don't limit the vCPU based on the host CPU count"},
      {"cpupool-list", cmd_cpupool_list, false, false, "List CPU pools on host", "[-c|--cpus] [<CPU Pool>]",
       "-c, --cpus                     Output list of CPUs used by a pool"},
      {"info", cmd_info, false, false, "Get information about Xen host", "-n, --numa         (accepted, no NUMA here)",
       nullptr},
      {"domid", cmd_domid, false, false, "Convert a domain name to domain id", "<DomainName>", nullptr},
      {"domname", cmd_domname, false, false, "Convert a domain id to domain name", "<DomainId>", nullptr},
      {"dmesg", cmd_dmesg, false, false, "Read and/or clear dmesg buffer", "[-c]",
       "  -c                        Clear the hypervisor's console ring after printing it"},
      {"top", cmd_top, false, false, "Monitor a host and the domains in real time", "[-b] [-i ITERATIONS] [-d DELAY]",
       "-b, --batch             Print the table, no terminal control (for scripts)\n"
       "-i N, --iterations=N    Stop after N tables\n"
       "-d S, --delay=S         Seconds between tables (3)"},
      {"uptime", cmd_uptime, false, false, "Print uptime for all/some domains", "[-s] [Domain]", nullptr},
      {"ptwr-mode", cmd_ptwr_mode, false, false, "Show or set a domain's page-table write mode (pvhv)",
       "<Domain> [emulate|writable|adaptive]", nullptr},
      {"trace", cmd_trace, false, false, "Record a xentrace file of the running machine (pvhv)", "start FILE | stop",
       nullptr},
  };
  return table;
}

int run(int argc, char** argv) {
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && argv[i][1]; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      ++i;
      break;
    }
    for (const char* c = argv[i] + 1; *c; ++c) {
      if (!std::strchr("vftTN", *c)) fail("unknown global option\n");
      if (*c == 'N') g_dryrun = true;
    }
  }
  if (i >= argc) {
    help("");
    return 1;
  }
  const std::string name = argv[i];
  const std::vector<std::string> args(argv + i + 1, argv + argc);
  if (name == "help") return cmd_help(args);
  for (const Command& c : commands()) {
    if (name != c.name) continue;
    if (g_dryrun && !c.can_dryrun) fail("command does not implement -N (dryrun) option\n");
    return c.run(args);
  }
  fail("command not implemented\n");
}

}  // namespace
}  // namespace pvhv::xl

int main(int argc, char** argv) {
  try {
    return pvhv::xl::run(argc, argv);
  } catch (const pvhv::xl::Exit& e) {
    return e.status;
  } catch (const pvhv::xl::DaemonLost& lost) {
    std::fprintf(stderr, "xl: lost the connection to pvhvd: %s\n", lost.reason.c_str());
    return 1;
  }
}
