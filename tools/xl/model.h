// The daemon's answers (pvhvd protocol version 1, tools/PROTOCOL.md) as xl's rows, and xl's
// requests, with nlohmann::ordered_json. Pure: a field the daemon leaves out reads as zero / empty.
#pragma once
#include <nlohmann/json.hpp>
#include <cstdio>

#include <string>
#include <utility>
#include <vector>

#include "tools/xl/config/domain_config.h"
#include "tools/xl/format.h"

namespace pvhv::xl {

// Objects keep the order of their keys (xl list -l prints "domid" before "config").
using Json = nlohmann::ordered_json;

inline constexpr int kProtocolVersion = 1;

DomainRow domain_row(const Json& domain);
std::vector<DomainRow> domain_rows(const Json& answer);  // a `list` answer
VcpuRow vcpu_row_of(const Json& vcpu);
std::vector<CpupoolRow> cpupool_rows(const Json& answer);  // a `cpupool_list` answer

// The `info` answer's fields in xl info's order, as text (numbers printed as integers).
std::vector<std::pair<std::string, std::string>> info_fields(const Json& answer);

// The `config` object of a `create` request.
Json create_config(const cfg::DomainConfig& d);

// `xl list -l`: [{"domid": N, "config": {...}}, ...] from a `list` answer.
Json long_listing(const Json& answer);

}  // namespace pvhv::xl
