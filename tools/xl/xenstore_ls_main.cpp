// build/bin/xenstore-ls [-p] [-f] [PATH]: the machine's xenstore as Xen 4.17's xenstore-ls prints
// it, read from pvhvd (`xenstore_ls`, tools/PROTOCOL.md). Exit 1 with the daemon's message when
// the path does not exist or no daemon runs.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "tools/xl/client.h"
#include "tools/xl/xenstore_ls.h"

int main(int argc, char** argv) {
  pvhv::xl::LsOptions options;
  std::string path = "/";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-p"))
      options.perms = true;
    else if (!std::strcmp(argv[i], "-f"))
      options.full_paths = true;
    else if (argv[i][0] == '-') {
      std::fprintf(stderr, "Usage: %s [-h] [-f] [-p] [path]\n", argv[0]);
      return 2;
    } else
      path = argv[i];
  }
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 2) options.max_width = ws.ws_col - 2;
  std::string error;
  auto client = pvhv::xl::Client::connect(pvhv::xl::daemon_socket_path(), error);
  if (!client) {
    std::fprintf(stderr, "xenstore-ls: %s\n", error.c_str());
    return 1;
  }
  try {
    pvhv::xl::Json answer = client->call({{"op", "xenstore_ls"}, {"path", path}});
    if (!answer.value("ok", false)) {
      std::fprintf(stderr, "xenstore-ls: %s\n", answer.value("error", std::string("request failed")).c_str());
      return 1;
    }
    std::fputs(format_xenstore_ls(pvhv::xl::store_nodes(answer["nodes"]), options).c_str(), stdout);
  } catch (const pvhv::xl::DaemonLost& lost) {
    std::fprintf(stderr, "xenstore-ls: %s\n", lost.reason.c_str());
    return 1;
  }
  return 0;
}
