// Starting and stopping QEMU (machine.h).
#include "tools/daemon/machine.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace pvhv::daemon {
namespace {

using Json = nlohmann::json;

// Runs argv, returns its standard output (empty on failure, with `why`).
std::string capture(const std::vector<std::string>& argv, std::string& why) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    why = std::strerror(errno);
    return {};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  std::string out;
  if (rc == 0) {
    char buffer[4096];
    ssize_t n;
    while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) out.append(buffer, size_t(n));
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      why = argv[0] + std::string(" ") + argv[1] + " failed";
      out.clear();
    }
  } else {
    why = std::string(argv[0]) + ": " + std::strerror(rc);
  }
  close(pipe_fds[0]);
  return out;
}

// A process that exists and is not a zombie (a QEMU whose daemon was killed is reaped by
// whoever adopted it, maybe late).
bool alive(pid_t pid) {
  if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM)) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  return !(paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z');
}

}  // namespace

std::optional<Machine> start_machine(const MachineOptions& options, std::string& why) {
  Machine machine;
  machine.relay_socket = options.state_dir + "/com2.sock";
  machine.serial_log = options.state_dir + "/serial.log";
  // The relay's bulk window (tools/PROTOCOL.md): a domU's frames cross it at MB/s, where the
  // serial link carries tens of KB/s.
  machine.window = options.state_dir + "/relay.window";
  machine.hypervisor = options.hypervisor;
  unlink(machine.relay_socket.c_str());
  std::vector<std::string> print = {"python3",
                                    options.source_dir + "/tests/integration/lib/machine.py",
                                    "--print-command",
                                    "--build",
                                    options.build_dir,
                                    "--hypervisor",
                                    options.hypervisor,
                                    "--relay-socket",
                                    machine.relay_socket,
                                    "--serial",
                                    machine.serial_log,
                                    "--memory",
                                    options.memory,
                                    "--window",
                                    machine.window};
  if (options.smp != 1) {  // -smp N (machine.py adds nothing for one CPU: the same command line as before)
    print.push_back("--smp");
    print.push_back(std::to_string(options.smp));
  }
  if (!options.ptwr_mode.empty()) {
    print.push_back("--hypervisor-args");
    print.push_back("ptwr=" + options.ptwr_mode);
  }
  std::string text = capture(print, why);
  if (text.empty()) return std::nullopt;
  Json argv_json = Json::parse(text, nullptr, false);
  if (!argv_json.is_array() || argv_json.empty()) {
    why = "machine.py --print-command gave no command line";
    return std::nullopt;
  }
  std::vector<std::string> argv;
  for (const auto& arg : argv_json) argv.push_back(arg.get<std::string>());
  std::string qemu_log = options.state_dir + "/qemu.log";
  pid_t pid = fork();
  if (pid < 0) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  if (pid == 0) {
    setsid();  // the daemon's signals (a terminal's Ctrl-C, kill -9 of its group) stay the daemon's
    int null_fd = open("/dev/null", O_RDONLY);
    int log_fd = open(qemu_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    if (log_fd >= 0) {
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
    }
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    std::vector<char*> args;
    for (auto& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  machine.qemu_pid = pid;
  machine.our_child = true;
  save_machine(options.state_dir, machine);
  return machine;
}

void save_machine(const std::string& state_dir, const Machine& machine) {
  Json j{{"qemu_pid", machine.qemu_pid},
         {"relay_socket", machine.relay_socket},
         {"window", machine.window},
         {"serial_log", machine.serial_log},
         {"hypervisor", machine.hypervisor}};
  std::string path = state_dir + "/machine.json";
  std::ofstream(path + ".tmp") << j.dump() << "\n";
  std::rename((path + ".tmp").c_str(), path.c_str());
}

Machine attached_machine(const std::string& state_dir, const std::string& relay_socket) {
  Machine machine;
  machine.relay_socket = relay_socket;
  std::ifstream in(state_dir + "/machine.json");
  std::stringstream text;
  text << in.rdbuf();
  Json j = Json::parse(text.str(), nullptr, false);
  if (j.is_object() && j.value("relay_socket", "") == relay_socket) {
    pid_t pid = j.value("qemu_pid", -1);
    if (alive(pid)) machine.qemu_pid = pid;
    machine.serial_log = j.value("serial_log", "");
    machine.window = j.value("window", "");
    machine.hypervisor = j.value("hypervisor", "");
  }
  return machine;
}

bool stop_machine(Machine& machine, int grace_s) {
  if (machine.qemu_pid <= 0) return true;
  auto gone = [&] {
    if (machine.our_child) return waitpid(machine.qemu_pid, nullptr, WNOHANG) == machine.qemu_pid;
    return !alive(machine.qemu_pid);
  };
  for (int tick = 0; tick < grace_s * 10; ++tick) {
    if (gone()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(machine.qemu_pid, SIGTERM);  // Xen 4.17 halts the machine: QEMU stays until told
  for (int tick = 0; tick < 50; ++tick) {
    if (gone()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(machine.qemu_pid, SIGKILL);
  return gone();
}

}  // namespace pvhv::daemon
