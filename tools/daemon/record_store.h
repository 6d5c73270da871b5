// Records on disk (record.h): one file per domain in the state directory, replaced atomically
// (written to a temporary file, fsync'd, renamed over the old one, the directory fsync'd), so a
// crash at any point leaves the old record or the new one, never a torn one.
#pragma once
#include <string>
#include <vector>

#include "tools/daemon/record.h"

namespace pvhv::daemon {

bool write_record(const std::string& state_dir, const DomainRecord& record, std::string& why);
void remove_record(const std::string& state_dir, const std::string& uuid);
// Every record the directory holds; files that are not records are named in `skipped`.
std::vector<DomainRecord> load_records(const std::string& state_dir, std::vector<std::string>& skipped);
// The same discipline for any small file of the state directory.
bool write_file_atomically(const std::string& path, const std::string& contents, std::string& why);

}  // namespace pvhv::daemon
