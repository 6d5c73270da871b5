// Records on disk (record_store.h).
#include "tools/daemon/record_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace pvhv::daemon {

bool write_file_atomically(const std::string& path, const std::string& contents, std::string& why) {
  std::string temporary = path + ".tmp";
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    why = temporary + ": " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      why = temporary + ": " + std::strerror(errno);
      close(fd);
      return false;
    }
    done += size_t(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    why = temporary + ": " + std::strerror(errno);
    return false;
  }
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    why = path + ": " + std::strerror(errno);
    return false;
  }
  std::string dir = path.substr(0, path.find_last_of('/'));
  int dir_fd = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    fsync(dir_fd);  // the rename itself reaches the disk
    close(dir_fd);
  }
  return true;
}

bool write_record(const std::string& state_dir, const DomainRecord& record, std::string& why) {
  return write_file_atomically(state_dir + "/" + record_file_name(record.uuid),
                               record_to_json(record).dump(2, ' ', false, Json::error_handler_t::replace) + "\n", why);
}

void remove_record(const std::string& state_dir, const std::string& uuid) {
  unlink((state_dir + "/" + record_file_name(uuid)).c_str());
}

std::vector<DomainRecord> load_records(const std::string& state_dir, std::vector<std::string>& skipped) {
  std::vector<DomainRecord> records;
  DIR* dir = opendir(state_dir.c_str());
  if (!dir) return records;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name.rfind("domain-", 0) != 0 || name.size() < 5 || name.substr(name.size() - 5) != ".json") continue;
    std::ifstream in(state_dir + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    auto record = record_from_json(Json::parse(text.str(), nullptr, false));
    if (record && record_file_name(record->uuid) == name)
      records.push_back(std::move(*record));
    else
      skipped.push_back(name);
  }
  closedir(dir);
  return records;
}

}  // namespace pvhv::daemon
