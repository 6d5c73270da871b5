// The state directory's creation and checks (state_dir.h).
#include "tools/daemon/state_dir.h"

#include <errno.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>

namespace pvhv::daemon {

namespace {
std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", unsigned(mode & 07777));
  return text;
}
}  // namespace

std::optional<std::string> prepare_state_dir(const std::string& path, uid_t user) {
  const std::string where = "state directory " + path;
  if (mkdir(path.c_str(), 0700) == 0) {
    // The umask may have taken bits from 0700; a new directory is exactly the owner's.
    if (chmod(path.c_str(), 0700) != 0) return where + ": " + std::strerror(errno);
  } else if (errno != EEXIST) {
    return where + ": " + std::strerror(errno);
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return where + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return where + " is not a directory";
  if (st.st_uid != user)
    return where + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " + std::to_string(user) +
           ")";
  if (st.st_mode & 077) return where + " is open to others (mode " + octal_mode(st.st_mode) + "): chmod 700 it";
  return std::nullopt;
}

}  // namespace pvhv::daemon
